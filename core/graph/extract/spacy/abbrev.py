"""Abbreviations in parentheses that are not a term's acronym, for the spaCy extractor
(core/graph/extract/spacy/mentions.py): a long form whose letters the acronym finds inside words rather than at
their starts ("self-attention module (SO)"), and the shorthand of one word ("all sequences (SEQ)", "relation (REL)"),
which names a table's column, not something to look up."""
from __future__ import annotations

import re


def spelled_by(short: str, long: str) -> bool:
    """Whether an acronym's letters are its long form's initials or capitals (hyphen parts count as words), all but
    one of them for an acronym of three letters or more: "MMACE (Molecular Model Agnostic Counterfactual
    Explanations)", "ATEX (Adversarial Training on EXplanations)", "XAI (eXplainable AI)"; not "SO (self-attention
    module)", whose O is inside a word."""
    letters = [c for c in short if c.isalpha()]
    marks = [c.lower() for part in re.split(r"[\s\-–/]+", long) if part
             for k, c in enumerate(part) if c.isalpha() and (k == 0 or c.isupper())]
    found, misses = 0, 0
    for c in letters:
        if c.lower() in marks[found:]:
            found += marks[found:].index(c.lower()) + 1
        else:
            misses += 1
    return misses <= (0 if len(letters) <= 2 else 1)


def one_word_shorthand(short: str, word: str) -> bool:
    """"sequences (SEQ)", "relation (REL)": an abbreviation of the one word before it, its letters in that word in
    order from its first."""
    if not word.isalpha() or len(word) <= len(short) or word[:1] != short[:1]:
        return False
    rest = iter(word)
    return all(c in rest for c in short)
