"""Every sentence of an LLM's answer checked against the passages it was given.

Small local models often write no [n] marker at all, or cite a passage that does not say what the sentence says. Each
sentence that states something is checked against the context's sources, by how many of its content words (stemmed,
numbers exact) a source says:
- cited: the model's marker points to a source that supports it;
- matched: the model cited nothing (or a source that does not support it) but one source does: that source is
  attached as its citation, marked as found by PaperGraph rather than by the model;
- unsupported: no source says enough of it; the UI flags it.
A sentence that states nothing checkable (a short connective, "Short answer: …" is parsed before) is left alone.
"""
from __future__ import annotations

import re

from core.query import answer_types as T
from core.query.records import Answer, Context

CITED, MATCHED, UNSUPPORTED = "cited", "matched", "unsupported"
# Share of a sentence's content words a source must say to support it; the words of the question count for nothing
# (an answer repeats them whatever it claims).
SUPPORT = 0.5
MIN_WORDS = 3  # fewer content words than this: nothing to check
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_MARKER = re.compile(r"\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\]")


def _unmarked(sentence: str) -> str:
    return _MARKER.sub(" ", sentence)


def _claim_words(sentence: str, question_stems: set[str]) -> set[str]:
    return set(T.stems(_unmarked(sentence))) - question_stems


def support(sentence: str, source_text: str, question_stems: set[str]) -> float:
    """The share of the sentence's claim (its content words, its numbers exactly) that the source says."""
    words = _claim_words(sentence, question_stems)
    if len(words) < MIN_WORDS:
        return 1.0
    said = set(T.stems(source_text))
    numbers = set(_NUMBER.findall(_unmarked(sentence)))
    if numbers - set(_NUMBER.findall(source_text)):
        return 0.0  # a number no source states is not supported, however many words match
    return len(words & said) / len(words)


def ground(answer: Answer, context: Context, question: str) -> Answer:
    """The answer with every sentence's `support` set, and a citation attached where the model gave none."""
    q = set(T.stems(question))
    sources = {s.n: s.text for s in context.sources}
    for sentence in answer.sentences:
        words = _claim_words(sentence.text, q)
        if len(words) < MIN_WORDS:
            sentence.support = CITED if sentence.citations else ""
            continue
        if sentence.citations and max((support(sentence.text, sources[n], q) for n in sentence.citations
                                      if n in sources), default=0.0) >= SUPPORT:
            sentence.support = CITED
            continue
        scored = sorted(((support(sentence.text, text, q), n) for n, text in sources.items()), reverse=True)
        if scored and scored[0][0] >= SUPPORT:
            sentence.citations = [scored[0][1]]
            sentence.support = MATCHED
        else:
            sentence.support = UNSUPPORTED
    return answer
