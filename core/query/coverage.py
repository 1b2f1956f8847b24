"""Which of the reader's candidate sentences may answer a question at all (core.query.reader ranks them).

Near misses read like answers: "what learning rate …" answered by a sentence about another setting, "on FinTabNet"
by a passage about PubTabNet, an F1 about abstracts by the table row of titles. So the counted or measured thing
must be in the sentence, the question's rare named words (document frequency from the FTS5 index) in its passage,
section or paper title, or be what its paper is about; and a table row must be a row of something the question
names.
"""
from __future__ import annotations

import re
import sqlite3
from collections import Counter

from core.pipeline.chunking import item_text
from core.pipeline.pages import load_items
from core.query import answer_types as T
from core.query.records import Source

ROW = "row"  # the reader's role of a table row (core.query.reader)
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


_PAPERS: dict[tuple[str, int], str] = {}


def paper_text(lib, doc_id: str) -> str:
    """A paper's whole text, lower-cased (cached like its roles): where a question's rare names may be said."""
    items = load_items(lib, doc_id) if lib is not None else []
    key = (doc_id, id(items[0]) if items else 0)
    if key not in _PAPERS:
        if len(_PAPERS) > 64:
            _PAPERS.clear()
        _PAPERS[key] = " ".join(" ".join(item_text(i).split()) for i in items).lower()
    return _PAPERS[key]


def distinctive(question: str, lib) -> list[str]:
    """The question's named words that are rare in the collection (BM25's document frequencies in SQLite FTS5):
    an answer must come from a passage that says them. A word absent from the collection is the rarest of all."""
    named = T.named_words(question)
    if not named or lib is None:
        return named
    parts = {p for w in named for p in re.findall(r"[^\W_]+", w.lower())}
    marks = ",".join("?" * len(parts))
    try:
        with lib.fulltext.db.connect() as conn:
            df = dict(conn.execute(f"SELECT term, doc FROM chunks_fts_vocab WHERE term IN ({marks})",
                                   sorted(parts)).fetchall())
            total = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] or 1
    except sqlite3.OperationalError:  # no full-text index yet: every named word counts
        return named
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


def covered(c, source: Source | None, focus: list[str], named: list[str],
            subjects: frozenset[str] = frozenset()) -> bool:
    """Near misses read like answers: "what learning rate …" answered by a sentence about another setting, "on
    FinTabNet" by a passage about PubTabNet. The head of the counted or measured thing must be in the sentence (a
    table row: in its table), its modifiers and the rare named words in the sentence, its passage, section or
    paper title ("237M mentions" answers "how many entity mentions" in a passage about entities); a rare name may
    also be what the passage's paper is about (`subjects`, see subject_of)."""
    sentence = c.text.lower()
    around = f"{sentence} {_lower_source(source)}" if source else sentence
    if focus and not T.mentions(around if c.role == ROW else sentence, focus[-1]):
        return False
    # A paper names its own system everywhere but not in every passage ("OTSL" in a section about its timing).
    return (all(T.mentions(around, w) for w in focus[:-1])
            and all(w in subjects or T.mentions(around, w) for w in named))


_LOWER: dict[int, tuple[Source, str]] = {}


def _lower_source(source: Source) -> str:
    """A passage with its section and paper title, lower-cased once per question, not once per candidate."""
    held = _LOWER.get(id(source))
    if held is None or held[0] is not source:
        if len(_LOWER) > 256:
            _LOWER.clear()
        held = _LOWER[id(source)] = (source, f"{source.text} {source.section} {source.doc_title}".lower())
    return held[1]


def subject_of(paper: str, word: str) -> bool:
    """The name is what the paper is about: it says it often (at least 3 times, once per 2,000 characters), not
    a dataset it mentions twice in passing ("on FinTabNet" in a paper about PubTabNet results)."""
    n = len(re.findall(rf"(?<![a-z0-9]){re.escape(word.lower())}", paper)) if paper else 0
    return n >= 3 and n * 2000 >= len(paper)
