"""A paper's reference list as data: entries parsed into fields (entries.py), in-text citation markers linked to
them with their sentences (markers.py), and entries resolved to the library's own papers, which makes the
library's citation graph (resolve.py). LLM-free by default, a pure function of the parsed items and the papers'
metadata; with an LLM configured, entries the rules could not read fully are read by it (llm_read.py)."""
