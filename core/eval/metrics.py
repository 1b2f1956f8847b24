"""Answer and retrieval metrics, each a pure function of one question's answer or ranking.

Answers are compared with SQuAD's normalisation (lower case, no punctuation, no articles, single spaces), the
one every QA leaderboard reports EM and F1 with. EM and F1 punish a right answer written as a paragraph, so
`contains_reference` (the normalised reference inside the answer) is the fair accuracy of long and extractive
answers.

A retrieved chunk matches a reference passage by the first of three rules that holds (MATCH_RULES): the passage
is in the chunk verbatim (whitespace runs aside); or it is once both are normalised for Unicode punctuation
(curly quotes, dashes, ligatures), soft hyphens, end-of-line hyphenation, case and whitespace; or the chunk holds
at least 90% of the passage's words in order, close together. Reference passages are usually copied from a PDF
viewer and chunks come from the parser: those are where the two differ, and the last rule absorbs a dropped
footnote mark or a word the parser split. Which rule matched is recorded, so a reader can tell a fuzzy hit from
an exact one.
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
_LINE_HYPHEN = re.compile(r"(?<=\w)-\s+(?=\w)")  # "retrie-\nval" → "retrieval" (after _FOLD: every dash is "-")
# Typographic punctuation a PDF holds and a keyboard does not; NFKC leaves these alone (it does unfold ligatures,
# full-width forms and the non-breaking space).
_FOLD = str.maketrans({
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u0060\u00b4", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
    **dict.fromkeys("\u00ad\u200b\u200c\u200d\u2060\ufeff", ""),  # soft hyphen and zero-width characters
    "\u2026": "...",
})
_WORD = re.compile(r"\w+")
_SOFT_BREAK = re.compile(r"\u00ad\s*")

MATCH_EXACT, MATCH_NORMALISED, MATCH_TOKENS = "exact", "normalised", "90% tokens in order"
MATCH_RULES = (MATCH_EXACT, MATCH_NORMALISED, MATCH_TOKENS)
TOKEN_SHARE = 0.9


def fold_unicode(text: str) -> str:
    """NFKC (ligatures, full-width forms) and typographic quotes, dashes and invisible characters folded to
    their keyboard forms."""
    # A soft hyphen marks where a word may break: with the line break after it, it is one word.
    return unicodedata.normalize("NFKC", _SOFT_BREAK.sub("", text or "")).translate(_FOLD)


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation, after folding Unicode punctuation (a curly apostrophe is not in string.punctuation)."""
    text = fold_unicode(text).lower()
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


def contains_reference(answers: Sequence[str], references: Sequence[str]) -> float:
    """1.0 when any reference, normalised, is inside any of `answers` (the answer text, its short answer) as
    whole words: "BooksCorpus" in "BERT was pre-trained on the BooksCorpus." counts, "Books" in "BooksCorpus"
    does not."""
    texts = [f" {normalize_answer(a)} " for a in answers if a]
    needles = [normalize_answer(r) for r in references]
    return float(any(n and f" {n} " in t for n in needles for t in texts))


def normalize_passage(text: str) -> str:
    text = _LINE_HYPHEN.sub("", fold_unicode(text))
    return " ".join(text.lower().split())


def _verbatim(text: str) -> str:
    return " ".join((text or "").split())


def tokens_in_order(needle: Sequence[str], hay: Sequence[str], share: float = TOKEN_SHARE) -> bool:
    """True when `hay` holds at least `share` of `needle`'s tokens in order, within a window a little longer
    than the needle (so common words scattered over a long chunk do not add up to a match)."""
    n = len(needle)
    if not n:
        return False
    need = math.ceil(share * n - 1e-9)
    if sum((Counter(needle) & Counter(hay)).values()) < need:
        return False
    window = n + max(2, math.ceil(0.2 * n))
    # A match may skip at most n - need needle tokens, so it starts at one of the first n - need + 1.
    openers = set(needle[:n - need + 1])
    for start, token in enumerate(hay):
        if token in openers and _lcs(needle, hay[start:start + window]) >= need:
            return True
    return False


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence (one row of the DP table at a time)."""
    row = [0] * (len(b) + 1)
    for x in a:
        diag = 0
        for j, y in enumerate(b, start=1):
            diag, row[j] = row[j], diag + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


class _Text:
    """One retrieved text, normalised once for the three rules."""

    def __init__(self, text: str):
        self.verbatim = _verbatim(text)
        self.normalised = normalize_passage(text)
        self._tokens: list[str] | None = None

    @property
    def tokens(self) -> list[str]:
        if self._tokens is None:
            self._tokens = _WORD.findall(self.normalised)
        return self._tokens


def _rule(reference: str, text: _Text, fuzzy: bool = True) -> str:
    """The first of MATCH_RULES by which `text` holds `reference`, or ""."""
    verbatim = _verbatim(reference)
    if not verbatim:
        return ""
    if verbatim in text.verbatim:
        return MATCH_EXACT
    normalised = normalize_passage(reference)
    if normalised and normalised in text.normalised:
        return MATCH_NORMALISED
    if fuzzy and tokens_in_order(_WORD.findall(normalised), text.tokens):
        return MATCH_TOKENS
    return ""


def match_rule(reference: str, text: str) -> str:
    """The rule (MATCH_RULES) by which `text` holds the reference passage, or "" when it does not."""
    return _rule(reference, _Text(text))


def passage_matches(references: Sequence[str], ranked_texts: Sequence[str]) -> list[tuple[int | None, str]]:
    """For each reference passage, the 0-based rank of the first retrieved text holding it and the rule that
    matched there ((None, "") when none does). A text that holds it exactly or normalised wins over an earlier
    one that holds 90% of its words: the fuzzy rule is a fallback, not a shortcut."""
    texts = [_Text(t) for t in ranked_texts]
    out: list[tuple[int | None, str]] = []
    for reference in references:
        found = next(((rank, rule) for rank, text in enumerate(texts)
                      if (rule := _rule(reference, text, fuzzy=False))), None)
        if found is None:
            found = next(((rank, MATCH_TOKENS) for rank, text in enumerate(texts)
                          if _rule(reference, text) == MATCH_TOKENS), (None, ""))
        out.append(found)
    return out


def passage_hits(references: Sequence[str], ranked_texts: Sequence[str]) -> list[int | None]:
    """For each reference passage, the 0-based rank of the first retrieved text holding it (None: never)."""
    return [rank for rank, _ in passage_matches(references, ranked_texts)]


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
    hits = evidence_rules(references, context_texts)
    return sum(1 for rule in hits if rule) / len(hits)


def evidence_rules(references: Sequence[str], context_texts: Sequence[str]) -> list[str]:
    """For each reference passage, the rule by which the assembled context holds it ("" when it does not)."""
    return [rule for _, rule in passage_matches(references, ["\n".join(context_texts)])]
