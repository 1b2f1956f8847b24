"""The prompts of the reader that chooses (core.query.reading.select): the model reads the question and the
extractive reader's best sentences, numbered, and names the one that answers, or none.

The system prompt is fixed and comes first, so llama.cpp reuses its cached tokens from one question to the next;
only the question and the sentences are new. The reply is held to a grammar (embedded model) or a JSON schema
(OpenAI-compatible endpoints), so it always parses and costs a handful of tokens.
"""
from __future__ import annotations

READING_PROMPTS: dict[str, str] = {}

READING_PROMPTS["select_system"] = """You answer a researcher's question from numbered sentences of scientific papers.
Reply with the words of the answer copied exactly from one sentence (a name, a number with its unit, a term or a \
short phrase; for a why or how question, the words that give the reason or the way), then " | " and that \
sentence's number, like: 684K | 5
Use only what the sentences say, never your own knowledge. If no sentence states the answer, reply: none"""

READING_PROMPTS["select_system_yes_no"] = """You answer a researcher's yes/no question from numbered sentences of \
scientific papers.
Reply yes or no, then " | " and the number of the sentence that says so, like: no | 2
Use only what the sentences say, never your own knowledge. If no sentence settles the question, reply: not stated"""

READING_PROMPTS["select_user"] = """Question: {question}

Sentences:
{sentences}"""
