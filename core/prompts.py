"""Every prompt PaperGraph sends to an LLM, in one dict (nano-graphrag's layout), so they can be read,
reviewed and changed in one place. Placeholders use str.format fields; literal braces are doubled."""
from __future__ import annotations

PROMPTS: dict[str, str] = {}

# --- entity and relation extraction (core/graph/llm_extract.py) ---

# --- community reports (core/graph/communities.py) ---

# --- description summaries (core/graph/merge.py) ---
PROMPTS["summarize_descriptions"] = """You are helping build a knowledge graph of scientific papers.
Below are several descriptions of the same {what}, "{name}", collected from different passages.
Write one comprehensive description in {language}, third person, that keeps every distinct fact, resolves
contradictions where the passages allow it, and names the entity so it reads on its own. Do not add facts
that are not in the descriptions. Keep it under {max_words} words.

Descriptions:
{descriptions}

Description:"""
