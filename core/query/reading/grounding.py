"""Every sentence of an LLM's answer checked against the passages it was given.

Small local models often write no [n] marker at all, or cite a passage that does not say what the sentence says. Each
sentence that states something is checked against the context's sources, by how much of its claim a source says: its
content words beyond the question's (stemmed, numbers exact), each weighted by how rare it is in general English, so
"using the Sawzall language" rests on "Sawzall", not on "using":
- cited: the model's marker points to a source that supports it;
- matched: the model cited nothing (or a source that does not support it) but one source does: that source is
  attached as its citation, marked as found by PaperGraph rather than by the model;
- unsupported: no source says enough of it; the UI flags it.
A claim of a word or two ("Nuclear norm") is checked like any other, but the model's own citation of it stands when
its source says any of it. A sentence that states nothing beyond the question and a verdict ("X does not affect Y.")
gets the passage that says the question's words, if the model cited none; a bare verdict ("Yes.", "No [2]";
"Short answer: …" is parsed before) is left alone. The short answer itself is dropped when no passage says it: the
model's own knowledge is not shown as what the papers answer (nor, when no claim is found, are the passages shown
as its sources: records.Answer.off_the_passages).
"""
from __future__ import annotations

import math
import re

from core.query.reading import answer_types as T
from core.query.reading.features import rarity
from core.query.records import CITED, MATCHED, UNSUPPORTED, Answer, Context

# Share of a sentence's content words a source must say to support it; the words of the question count for nothing
# (an answer repeats them whatever it claims).
SUPPORT = 0.5
MIN_WORDS = 3  # a claim of fewer words keeps the model's citation when its source says any of it
# A verdict is no claim to find in a passage: "No [2]" is checked by its citation alone.
_VERDICTS = {T.stem(w) for w in ("yes", "no", "not", "both", "neither", "none", "true", "false", "either", "only")}
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_MARKER = re.compile(r"\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\]")
_SPACE_BEFORE_STOP = re.compile(r"\s+([.,;:!?])")


def _unmarked(sentence: str) -> str:
    return _MARKER.sub(" ", sentence)


def _claim(sentence: str, question_stems: set[str]) -> dict[str, float]:
    """The sentence's claim: content stems beyond the question's and a verdict → how rare their word is."""
    out: dict[str, float] = {}
    for word in T.WORD.findall(_unmarked(sentence).lower()):
        if word in T.LOWER_STOP or len(word) < 2 or (st := T.stem(word)) in question_stems or st in _VERDICTS:
            continue
        out[st] = min(out.get(st, math.inf), rarity(word))
    return out


def _said(text: str) -> tuple[set[str], set[str]]:
    """What a passage says, as claims are compared with it: its stems and its numbers (read once per answer)."""
    return set(T.stems(text)), set(_NUMBER.findall(text))


def _shares(sentence: str, claim: dict[str, float], said: dict[int, tuple[set[str], set[str]]]) -> dict[int, float]:
    """Per passage, the share of the sentence's claim (its content words by rarity, its numbers exactly) it says."""
    if not claim:
        return dict.fromkeys(said, 1.0)
    numbers = set(_NUMBER.findall(_unmarked(sentence)))
    total = sum(claim.values())
    # A number no passage states is not supported there, however many words match.
    return {n: 0.0 if numbers - passage_numbers else sum(w for st, w in claim.items() if st in stems) / total
            for n, (stems, passage_numbers) in said.items()}


def ground(answer: Answer, context: Context, question: str) -> Answer:
    """The answer with every sentence's `support` set, and a citation attached where the model gave none."""
    q = set(T.stems(question))
    said = {s.n: _said(s.text) for s in context.sources}
    for sentence in answer.sentences:
        claim = _claim(sentence.text, q)
        if not claim:
            _ground_verdict(sentence, said)
            continue
        shares = _shares(sentence.text, claim, said)
        cited = max((shares[n] for n in sentence.citations if n in shares), default=0.0)
        # The model's own citation stands on half the claim; on a claim of a word or two, on any of it ("The table
        # reports the accuracy [1]": [1] is the table, which does not say "reports").
        if cited >= SUPPORT or (cited > 0 and len(claim) < MIN_WORDS):
            sentence.support = CITED
            continue
        best, n = max(((share, n) for n, share in shares.items()), default=(0.0, 0))
        if best >= SUPPORT:
            if sentence.citations:  # the model's marker names a passage that does not say it: the marker goes
                sentence.text = _SPACE_BEFORE_STOP.sub(r"\1", _unmarked(sentence.text)).strip()
            sentence.citations, sentence.support = [n], MATCHED
        else:
            sentence.support = UNSUPPORTED
    short = answer.short_answer
    if short and max(_shares(short, _claim(short, q), said).values(), default=0.0) < SUPPORT:
        answer.short_answer = ""  # "Paris", asked of papers that never say it: not shown as the answer
    return answer


def _ground_verdict(sentence, said: dict[int, tuple[set[str], set[str]]]) -> None:
    """A sentence saying nothing beyond the question and a verdict ("X does not affect Y."): cited where the model
    cited, else by the passage that says the question's own words when one does; a bare "Yes." stays alone."""
    if sentence.citations:
        sentence.support = CITED
        return
    sentence.support = ""
    if claim := _claim(sentence.text, set()):
        share, n = max(((v, n) for n, v in _shares(sentence.text, claim, said).items()), default=(0.0, 0))
        if share >= SUPPORT:
            sentence.citations, sentence.support = [n], MATCHED
