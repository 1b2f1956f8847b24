"""Proper-name spans without spaCy: runs of capitalised words ("Dale Brown", "Rudy Giuliani", "Act of War"), for
the retrieval phrases of a chunk (ChunkExtraction.phrases), never for entities.

The phrase finder (spacy_mentions.py) reads prose sentences only, so it never sees a document's title line, and
the tagger sometimes cuts a name in two ("Dale Brown (born 1956)" gave "dale" and "brown"). A name said once in a
short document is often the bridge of a two-hop question: on HotpotQA the passage about Rudy Giuliani never names
him "Rudy Giuliani" except in its title. A capitalised run of two or more words is cheap to find and rarely
wrong about being a name; what it gets wrong (a sentence's first word, "In Akkadian") is cut off by the leading
function words below, or becomes a phrase of one passage, which links nothing.
"""
from __future__ import annotations

import re

# A capitalised word (letters, digits, inner apostrophes, hyphens, dots and ampersands: "O'Neal", "Jean-Luc",
# "D.P.", "AT&T"), or a number right after one ("Heinkel HD 23", "Big Hero 6").
_WORD = r"[A-Z][\w'’\-.&]*"
_LINK = r"(?:of|de|del|der|van|von|da|du|la|le|y)"  # lower-case words inside a name: "Act of War", "Vincent van Gogh"
_SPAN = re.compile(rf"\b{_WORD}(?:[ \t]+(?:{_LINK}[ \t]+)?(?:{_WORD}|\d+\b))+")
# Capitalised only because they start a sentence or a title: never the first word of a name.
_LEADING = {"a", "an", "the", "in", "on", "at", "of", "for", "from", "to", "by", "with", "as", "after", "before",
            "during", "since", "his", "her", "its", "their", "this", "that", "these", "those", "it", "he", "she",
            "they", "we", "our", "and", "but", "or", "if", "when", "while", "although", "both", "there", "is",
            "was", "are", "were", "table", "figure", "fig.", "section", "see"}
MAX_WORDS = 6  # longer capitalised runs are headings or title-case sentences, not names


def name_spans(text: str) -> list[str]:
    """The capitalised runs of two or more words in `text`, in order, once each, without leading function words."""
    out: dict[str, None] = {}
    for line in text.splitlines():
        for match in _SPAN.finditer(line):
            for words in _sentences(match.group(0).split()):
                while words and (words[0].lower() in _LEADING or words[0] in _MONTHS):
                    words = words[1:]
                while words and (words[-1].lower() in _LEADING or re.fullmatch(_LINK, words[-1])):
                    words = words[:-1]
                if 2 <= len(words) <= MAX_WORDS:
                    out.setdefault(" ".join(words))
    return list(out)


def _sentences(words: list[str]) -> list[list[str]]:
    """A run cut where a sentence ends inside it ("… the US Air Force. The Heinkel HD 23"): after a word with a
    full stop that is not an initial ("L.", "D.P.")."""
    out: list[list[str]] = [[]]
    for word in words:
        stem = word.rstrip(".")
        out[-1].append(stem if stem != word and not _INITIALS.fullmatch(word) else word)
        if stem != word and not _INITIALS.fullmatch(word):
            out.append([])
    return out


_INITIALS = re.compile(r"(?:[A-Z]\.)+")
_MONTHS = {"January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"}
