"""The prompts of the reader that chooses (core.query.reading.select): the model reads the question and the
extractive reader's best sentences, numbered, and names the one that answers, or none.

The system prompt is fixed and comes first, so llama.cpp reuses its cached tokens from one question to the next;
only the question and the sentences are new. The reply is held to a grammar (embedded model) or a JSON schema
(OpenAI-compatible endpoints), so it always parses and costs a handful of tokens.
"""
from __future__ import annotations

READING_PROMPTS: dict[str, str] = {}

READING_PROMPTS["select_system"] = """You read numbered sentences taken from scientific papers and decide which one \
answers a researcher's question.
- Choose the number of the sentence that states the answer. Use only what the sentences say, never your own \
knowledge.
- If no sentence states the answer, choose none. A sentence on the same topic that does not give the answer is not \
an answer.
- Then copy the answer's words exactly as the chosen sentence writes them: a name, a number with its unit, a term \
or a short phrase."""

READING_PROMPTS["select_system_yes_no"] = """You read numbered sentences taken from scientific papers and decide \
whether they answer a researcher's yes/no question.
- Reply yes or no with the number of the sentence that says so. Use only what the sentences say, never your own \
knowledge.
- If no sentence settles the question, reply not stated."""

READING_PROMPTS["select_user"] = """Question: {question}

Sentences:
{sentences}"""
