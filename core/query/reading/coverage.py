"""What the reader's features know about a question's words in the collection and in a candidate: the question's
rare named words (document frequency from the FTS5 index), stemmed bags that also count a question term inside a
compound ("tableformerlarge"), and whether a table row is a row of something the question names. The reader model
(core.query.reading.scores) weighs them; nothing here decides alone.
"""
from __future__ import annotations

import re
from collections import Counter

from core.query.reading import answer_types as T

RARE_SHARE = 0.2  # a named question word in at most this share of the chunks is distinctive (FTS5 statistics)


def term_bag(text: str, terms: set[str]) -> Counter:
    """Stemmed words of a text; a word that contains a question term ("tableformerlarge") also counts for it."""
    bag = Counter(T.stems(text))
    joined = " ".join(bag)
    for term in terms:
        if len(term) >= 5 and term not in bag and term in joined:
            n = sum(k for w, k in bag.items() if len(w) > len(term) and term in w)
            if n:
                bag[term] = n
    return bag


def distinctive(question: str, lib) -> list[str]:
    """The question's named words that are rare in the collection (BM25's document frequencies in SQLite FTS5):
    an answer must come from a passage that says them. A word absent from the collection is the rarest of all."""
    named = T.named_words(question)
    if not named or lib is None:
        return named
    parts = {p for w in named for p in re.findall(r"[^\W_]+", w.lower())}
    frequencies = lib.fulltext.document_frequencies(sorted(parts))
    if frequencies is None:  # no full-text index yet: every named word counts
        return named
    df, total = frequencies
    return [w for w in named if min(df.get(p, 0) for p in re.findall(r"[^\W_]+", w.lower()) or [""]) <=
            RARE_SHARE * total]


def row_about(row: str, question: str) -> bool:
    """A table row answers only about what it is a row of: one of its words cells (its label: "TABLEFORMERLARGE
    inter-sqa", "SQuALITY") is in the question. "Field: title; F1: 85.5" does not answer an F1 about abstracts."""
    labels = [row[c.start:c.end] for c in T.cells(row)]
    labels = [v for v in labels if sum(ch.isalpha() for ch in v) > 1 and not T._NUMBER.fullmatch(v.strip())]
    if not labels:
        return True  # a row of numbers only: nothing to tell
    terms = set(T.stems(question))
    return any(term_bag(v, terms).keys() & terms for v in labels)
