"""LLM-free extraction with spaCy: clean text (text.py), mentions (mentions.py), paper-level reading (paper.py,
byline.py, abbrev.py) and the extractor itself (extract.py)."""
