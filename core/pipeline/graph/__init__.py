"""The entity graph: extraction (LLM or spaCy), merging with provenance, incremental insert/delete, communities."""
