"""Entity and relation extraction from a paper's chunks: spaCy rules (spacy/) and an LLM (llm/), both pure (no
store is touched: the graph stage in core/pipeline/graph commits what they return); the term, acronym and type
lexicons both read live beside them, their data in core/graph/data/."""
