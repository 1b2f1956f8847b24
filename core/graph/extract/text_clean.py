"""Undo what PDF text extraction does to words, before the LLM-free extractor reads a paper: ligatures, accents
printed apart from their letter, words broken at the end of a line, and footnote or reference numbers glued to a
word ("20Used", "5LongT5", "AI-assisted writing.1", "SPECTER,2", "Sheridan57"), hyphens of a line break that
stayed ("pre-vious"), function words glued to a word ("ofhuman"), and a model size printed as a subscript
("TAPASBASE"). Each repair is one regular
expression; where a repair could also break a real word, the general-language frequency list (wordfreq) decides.
"""
from __future__ import annotations

import re
import unicodedata

from core.graph.extract.terms import zipf

_LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "ft", "ﬆ": "st",
                            "\u00ad": "", "\u200b": "", "\ufeff": "", "\u2010": "-", "\u2011": "-"})
# Footnote and affiliation marks in the font's superscripts: never part of a name.
_MARKS = re.compile(r"[¹²³⁴⁵⁶⁷⁸⁹⁰†‡§¶∗⋆✝]+")
# An accent printed as its own glyph ("Farber de-¨ rived" for "Färber … derived"): a spacing modifier, not text.
_SPACING_ACCENT = re.compile(r"(?<=\S)\s?[\u00a8\u00b4\u00b8\u02c6\u02c7\u02d8-\u02dd\u02dc`]|[\u00a8\u00b4\u00b8"
                             r"\u02c6\u02c7\u02d8-\u02dd]\s?(?=\S)")
# "represen- tation": a word broken at a line end; joined when the whole is a word, else kept as a compound.
_LINE_BREAK_HYPHEN = re.compile(r"\b([A-Za-z]{2,})- ([a-z]{2,})\b")
_KEEP_APART = {"and", "or", "to", "the", "of", "in", "with", "as", "vs", "nor", "but"}  # "pre- and post-"
# "20Used the …", "5LongT5": a footnote number at a word's start; a digit then a capital then lower case.
_LEADING_NOTE = re.compile(r"(?<![\w.,\-/])\d{1,2}(?=[A-Z][a-z]{2,})")
# "writing.1 The", "SPECTER,2 incorporates", "compounds.146,147", "relationships.114–116", "(NELL)7": footnote or
# reference numbers after the word's punctuation.
_TRAILING_NOTE = re.compile(r"(?:(?<=[A-Za-z)][.,;:])|(?<=[A-Za-z]\)))\d{1,3}(?:[,–-]\d{1,3})*(?=\s|$)")
# "Sheridan57 describes", "Scholar8 Open", "BERT code15": a reference number glued to a dictionary word (not
# ResNet50, Llama2 or word2vec: the word before the digits must be one wordfreq knows well).
_GLUED_REFERENCE = re.compile(r"\b([A-Za-z][a-z]{3,})(\d{1,3})((?:,\d{1,3})*)(?![\w.])")


# "CoreReci pe", "for pa ragraph": a space the PDF put inside a word (the right part is looked at, not consumed).
_SPLIT_WORD = re.compile(r"\b([A-Za-z]+) (?=([a-z]{1,9})\b(?![-'’]))")


def _join_split(m: re.Match) -> str:
    left, right = m.group(1), m.group(2)
    tail = re.search(r"[A-Z]?[a-z]+$", left)  # "CoreReci": "Reci"
    tail = tail.group(0).lower() if tail else ""
    if not tail or zipf(tail + right) < 3.0:
        return m.group(0)
    if zipf(right) == 0 and len(right) >= 3 and len(tail) <= 4:  # "pa ragraph"
        return left
    if len(right) <= 2 and zipf(right) < 4.0 and zipf(tail) < 2.0:  # "Reci pe"
        return left
    return m.group(0)


def _join_broken(m: re.Match) -> str:
    left, right = m.group(1), m.group(2)
    if right in _KEEP_APART:
        return m.group(0)
    joined = left + right
    if zipf(joined.lower()) >= 2.0 or zipf(left.lower()) == 0:
        return joined
    return f"{left}-{right}"  # "task- specific": a compound written over two lines


# "pre-vious", "pre-cision", "de-rived": a word hyphenated at a line end whose hyphen stayed when the line break
# went. Joined when the whole is a common word and the right part is no word ("pre-trained" stays).
_STAYED_HYPHEN = re.compile(r"\b([a-z]{2,})-([a-z]{2,})\b")
# "ofhuman", "ofannotator", "stateof-the-art": a function word glued to the next or previous word.
_GLUED_WORDS = re.compile(r"\b(?:(of|the|and|to|in|for|on|with)([a-z]{4,})|([a-z]{4,})(of|the|and|to))\b(-?)")
# "TAPASBASE", "TABLEFORMERLARGE", "RoBERTalarge": a model's size written as a subscript glued to its name.
_GLUED_SIZE = re.compile(r"\b([A-Za-z]*[A-Z][A-Za-z]*[A-Z][A-Za-z]*?)(BASE|LARGE|[Bb]ase|[Ll]arge)(?![a-z])")


def _join_stayed(m: re.Match) -> str:
    left, right = m.group(1), m.group(2)
    if zipf(left + right) >= 3.0 and zipf(right) < 2.5 and right not in _KEEP_APART:
        return left + right
    return m.group(0)


def _split_glued(m: re.Match) -> str:
    whole = m.group(0).rstrip("-")
    first, second = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    if zipf(whole) >= 1.5 or zipf(second if m.group(1) else first) < 1.0:
        return m.group(0)
    sep = "-" if m.group(5) else " "  # "stateof-the-art" → "state-of-the-art"
    return f"{first}{sep}{second}{m.group(5)}"


def _split_size(m: re.Match) -> str:
    stem, size = m.group(1), m.group(2)
    if len(stem) < 3 or zipf((stem + size).lower()) > 0:
        return m.group(0)  # "DATABASE", "CODEBASE": words
    return f"{stem}-{size.lower()}"


def repair_text(text: str) -> str:
    """`text` with the PDF artefacts above undone; everything else as it was."""
    text = unicodedata.normalize("NFC", text.translate(_LIGATURES))
    text = _MARKS.sub("", text)
    text = _SPACING_ACCENT.sub("", text)
    text = _LINE_BREAK_HYPHEN.sub(_join_broken, text)
    text = _SPLIT_WORD.sub(_join_split, text)
    text = _STAYED_HYPHEN.sub(_join_stayed, text)
    text = _GLUED_WORDS.sub(_split_glued, text)
    text = _GLUED_SIZE.sub(_split_size, text)
    text = _LEADING_NOTE.sub("", text)
    text = _TRAILING_NOTE.sub("", text)
    text = _GLUED_REFERENCE.sub(_unglue_reference, text)
    return _BROKEN_END.sub("", text)


# A word cut at the end of a paragraph ("… the S2ORC pretraining cor-"): its rest is in the next item.
_BROKEN_END = re.compile(r"\s[A-Za-z]{1,8}-\s*$")


def _unglue_reference(m: re.Match) -> str:
    word = m.group(1)
    return word if zipf(word.lower()) >= 3.0 or word[0].isupper() and len(m.group(2)) >= 2 else m.group(0)
