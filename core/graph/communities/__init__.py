"""Communities of the entity graph: detection (detect.py), the incremental index (index.py, local.py) and their
report vectors (vectors.py), read by community mode."""
