"""The prompt of the results pass (core/pipeline/results/llm_names.py): a results table whose dataset or metric the
rules could not read, shown with its caption and the sentences citing it; the model copies the names, never invents
them (a name not printed in that text is refused by the caller)."""
from __future__ import annotations

RESULTS_PROMPTS: dict[str, str] = {}

RESULTS_PROMPTS["result_table_names"] = """Below are the caption of a results table from a scientific paper, the \
sentences of the paper that cite the table, and the table's header.

Copy, word for word from the caption or the sentences, the name of the dataset or benchmark the table's numbers \
were measured on, and the name of the metric they are in. Copy only words printed there; when the text does not \
name one, give "" for it. Never guess and never use your own knowledge.

Caption: {caption}
Sentences citing the table:
{sentences}
Header: {header}

Reply with JSON only: {{"dataset": "...", "metric": "..."}}"""
