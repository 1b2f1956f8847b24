"""Spans the word-by-word phrase finder (core/graph/extract/spacy/mentions.py) would cut wrong: a species' name,
whose genus reads as an initial or a common word, and words a PDF's text layer broke by dropping a ligature."""
from __future__ import annotations

import re
from collections.abc import Sequence

from core.graph.extract.spacy import words as W
from core.graph.extract.spacy.records import Mention, entity_key
from core.graph.extract.terms import zipf
from core.graph.fields import field_of

# A genus as a binomial writes it: an initial ("C.") or a capitalised word; its epithet is a rare Latin word.
_GENUS = re.compile(r"[A-Z]\.|[A-Z][a-z]{2,}")
_EPITHET = re.compile(r"[a-z]{4,}(?:%s)" % "|".join(
    sorted(field_of("life").cues["organism"]["genus_epithet_endings"], key=len, reverse=True)))
# Ligatures a PDF's text layer may drop, leaving "veried" (verified), "dened" (defined), "eect" (effect).
_LIGATURES = ("fi", "fl", "ff", "ffi", "ffl")


def ligature_lost(word: str) -> bool:
    """A word English does not know that one ligature put back makes common: text, not a term."""
    if len(word) < 4 or not word.isalpha() or zipf(word) > 0:
        return False
    return any(zipf(word[:i] + lig + word[i:]) >= 3.5 for i in range(1, len(word)) for lig in _LIGATURES)


def species_name(doc, start: int, run: Sequence) -> Mention | None:
    """"C. elegans", "B. megaterium", "Phoenix paludosa": a species' epithet after its genus names one organism.
    Read as words, the genus is lost (an initial looks like a section number, a capital at a sentence's start
    like a common word) and the epithet is left a fragment ("elegan", "paludosa extractive"). `run` holds the
    phrase finder's words (text, lower, start, end) of one sentence beginning at token `start`."""
    for n, w in enumerate(run[:2]):
        if not _EPITHET.fullmatch(w.text) or zipf(w.lower) >= 3.0:
            continue
        if n == 1:
            genus, first = run[0].text, run[0].start
        elif w.start - 2 >= start and doc[w.start - 1].text == "." and doc[w.start - 2].is_upper:
            genus, first = doc[w.start - 2].text + ".", w.start - 2
        else:
            genus, first = (doc[w.start - 1].text, w.start - 1) if w.start > start else ("", 0)
        if not _GENUS.fullmatch(genus):
            continue
        # A word before a rare word is a genus when it is rare itself or the word is a Latin one no English text
        # uses ("Phoenix paludosa"), never a noun ending like one ("Transformer decoder").
        if not genus.endswith(".") and (w.lower.endswith(("er", "es")) or zipf(genus.lower()) >= 3.0
                                        and zipf(w.lower) >= 1.6):
            continue
        name = f"{genus} {w.text}"
        return Mention(key=entity_key(name), name=name, start=first, end=w.end, types=[],
                       words=[genus.lower(), w.lower], named=True)
    return None


def broken_or_cited(words: Sequence[str]) -> bool:
    """A phrase (its words as written) from a reference or broken by the PDF: an abbreviated journal's name ("Rev.
    Lett", "Proc Natl"), a word whose "fi" or "fl" ligature the text layer dropped ("veried", "dened") or kept as
    a private character of the PDF's font."""
    journal = [w for w in words if w.rstrip(".").lower() in W.JOURNAL_ABBREVIATIONS]
    if any(j.endswith(".") for j in journal) or len(journal) >= 2:
        return True
    return any(re.search(r"[\ue000-\uf8ff]", w) or ligature_lost(w.lower()) for w in words)
