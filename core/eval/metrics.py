"""Answer and retrieval metrics, each a pure function of one question's answer or ranking.

Answers are compared with SQuAD's normalisation (lower case, no punctuation, no articles, single spaces), the
one every QA leaderboard reports EM and F1 with. A retrieved chunk matches a reference passage when it contains
it once both are normalised for case, whitespace and end-of-line hyphenation: reference passages are usually
copied from a PDF viewer, chunks come from the parser, and those three are where the two differ.
"""
from __future__ import annotations

import math
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Sequence

_PUNCTUATION = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_LINE_HYPHEN = re.compile(r"(?<=\w)[-\u00ad\u2010]\s+(?=\w)")  # "retrie-\nval" → "retrieval"
_SOFT_HYPHEN = "\u00ad"


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation."""
    text = (text or "").lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, references: Sequence[str]) -> float:
    """1.0 when the prediction equals any reference after normalisation."""
    pred = normalize_answer(prediction)
    return float(any(pred == normalize_answer(r) for r in references))


def token_f1(prediction: str, references: Sequence[str]) -> float:
    """SQuAD token F1 against the best-matching reference."""
    pred = normalize_answer(prediction).split()
    best = 0.0
    for reference in references:
        gold = normalize_answer(reference).split()
        if not pred or not gold:
            best = max(best, float(pred == gold))
            continue
        same = sum((Counter(pred) & Counter(gold)).values())
        if same:
            precision, recall = same / len(pred), same / len(gold)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


def normalize_passage(text: str) -> str:
    text = unicodedata.normalize("NFKC", text or "").replace(_SOFT_HYPHEN, "")
    text = _LINE_HYPHEN.sub("", text)
    return " ".join(text.lower().split())


def passage_hits(references: Sequence[str], ranked_texts: Sequence[str]) -> list[int | None]:
    """For each reference passage, the 0-based rank of the first retrieved text containing it (None: never)."""
    texts = [normalize_passage(t) for t in ranked_texts]
    hits: list[int | None] = []
    for reference in references:
        needle = normalize_passage(reference)
        hits.append(next((rank for rank, text in enumerate(texts) if needle and needle in text), None))
    return hits


def recall_at_k(hits: Sequence[int | None], k: int) -> float | None:
    """The share of reference passages found in the top k; None when there is nothing to find."""
    if not hits:
        return None
    return sum(1 for h in hits if h is not None and h < k) / len(hits)


def complete_at_k(hits: Sequence[int | None], k: int) -> float | None:
    """1.0 only when every reference passage is in the top k: what a multi-hop question needs."""
    if not hits:
        return None
    return float(all(h is not None and h < k for h in hits))


def reciprocal_rank(hits: Sequence[int | None]) -> float | None:
    """1 / rank of the first retrieved text holding any reference passage (0 when none does)."""
    if not hits:
        return None
    found = [h for h in hits if h is not None]
    return 1.0 / (min(found) + 1) if found else 0.0


def ndcg_at_k(hits: Sequence[int | None], k: int) -> float | None:
    """NDCG@k where each reference passage is one relevant item, credited at the rank that first holds it.

    The ideal ranking puts one passage at each of the first min(n, k) ranks. A chunk that holds several
    reference passages earns a gain for each, so a perfect ranking can exceed that ideal: it is capped at 1.
    """
    if not hits:
        return None
    dcg = sum(1.0 / math.log2(h + 2) for h in hits if h is not None and h < k)
    ideal = sum(1.0 / math.log2(rank + 2) for rank in range(min(len(hits), k)))
    return min(1.0, dcg / ideal)


def evidence_in_context(references: Sequence[str], context_texts: Sequence[str]) -> float | None:
    """The share of reference passages inside the context the mode assembled under its token budget."""
    if not references:
        return None
    hits = passage_hits(references, ["\n".join(context_texts)])
    return sum(1 for h in hits if h is not None) / len(hits)
