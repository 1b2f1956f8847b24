"""Every prompt PaperGraph sends to an LLM, by name, in one dict (nano-graphrag's layout), so they can be read,
reviewed and changed in one place: core/prompts/base.py (extraction, summaries, answers written, evaluation,
references) and core/prompts/reading.py (the reader that chooses evidence). Placeholders use str.format fields;
literal braces are doubled."""
from __future__ import annotations

from core.prompts.base import PROMPTS
from core.prompts.reading import READING_PROMPTS

PROMPTS.update(READING_PROMPTS)

__all__ = ["PROMPTS"]
