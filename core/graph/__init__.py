"""The knowledge graph's shared model, below both wings: entity keys and merging (merge.py), entity vector ids
(vectors.py), when two names could name one thing (names.py), which items of a paper give entities (item_roles.py),
the graph's write lock, paper nodes, statistics and views; the extractors (extract/: spaCy rules and the LLM's
prompts and replies) and communities (communities/). The write side (core/pipeline/graph) schedules extraction and
commits what it returns; the read side (core/query) walks the stored graph with the same keys and ids."""
