"""Extraction by an LLM: the request (extract.py) and the tolerant parser of its replies (replies.py)."""
