"""Every prompt PaperGraph sends to an LLM, by name, in one dict (nano-graphrag's layout), so they can be read,
reviewed and changed in one place: core/prompts/extraction.py (entity and relation extraction),
core/prompts/base.py (summaries, answers written, evaluation, references), core/prompts/reading.py (the reader
that chooses evidence) and core/prompts/results.py (the names of a results table the rules could not read). Placeholders use str.format fields; literal braces are doubled."""
from __future__ import annotations

from core.prompts.base import PROMPTS
from core.prompts.extraction import EXTRACTION_PROMPTS
from core.prompts.reading import READING_PROMPTS
from core.prompts.results import RESULTS_PROMPTS

PROMPTS.update(EXTRACTION_PROMPTS)
PROMPTS.update(READING_PROMPTS)
PROMPTS.update(RESULTS_PROMPTS)

__all__ = ["PROMPTS"]
