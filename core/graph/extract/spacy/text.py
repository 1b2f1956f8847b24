"""Paper text made ready for the spaCy extractor (core/graph/extract/spacy/extract.py): a chunk cut into units
(paragraphs, a table's rows, the words found inside a figure) without what is noise to a phrase finder — links,
markup, citations, URLs, e-mails, arXiv stamps, footnote marks — and reference-list sections recognised so they
can be skipped (names and titles, no relations)."""
from __future__ import annotations

import html
import re
from collections.abc import Sequence

from core.graph.extract.spacy import words as W
from core.graph.extract.text_clean import repair_text
from core.schema.records import Chunk

MAX_CHUNK_CHARS = 60_000  # chunks are ~6k characters; a giant table is cut rather than parsed for seconds

# How a unit of text is read (see chunk_units); a BYLINE unit (a paper's author and affiliation block) gives only
# the people and organisations the NER finds in it.
PROSE, ROW, FRAGMENTS, BYLINE = "prose", "row", "fragments", "byline"

_MD_LINK = re.compile(r"!?\[([^\[\]]*)\]\((?:https?://|www\.|doi:|/)[^)\s]*\)")
_SUP = re.compile(r"<(sup|sub)>\s*([^<]*?)\s*</\1>", re.I)
_TAG = re.compile(r"</?[a-zA-Z][^<>]{0,80}>")
_URL = re.compile(r"\b(?:https?://|www\.)\S+|\b[\w.+-]+@[\w-]+\.[\w.-]+\b|\{[\w,.\s-]+\}@[\w.-]+")
_NUM_BRACKETS = re.compile(r"\s?\[\s*\d+(?:\s*[,;–-]\s*\d+)*\s*\]")
_CITE_BRACKETS = re.compile(r"\s?\[[^\[\]]{0,300}?(?:et al\.?|\b(?:19|20)\d{2}[a-z]?\b)[^\[\]]{0,300}\]")
_CITE_PARENS = re.compile(r"\s?\((?:[^()]{0,300}?(?:et al\.?|\b(?:19|20)\d{2}[a-z]?\b)[^()]{0,300}|"
                          r"\s*(?:see|cf\.)\s[^()]{0,100})\)")
_ARXIV = re.compile(r"\barXiv:\s?\S+(\s*\[[\w.\-]+\])?(\s*\d{1,2}\s+[A-Z][a-z]{2}\s+\d{4})?")
_GLUED_FOOTNOTE = re.compile(r"(?<![\w.])\d(?=[a-z]{3,})")  # "a single 3fixed trigger": footnote 3
_SPACES = re.compile(r"[ \t\r\f\v]+")
_REFERENCES_SECTION = re.compile(r"^\W*([\dIVX]+(\.\d+)*\.?\s+)?(references|bibliography|works cited|"
                                 r"literature cited|reference list)\W*$", re.I)
# Affiliation and footnote marks of an author block ("Kyle Loα∗ Zejiang Shenα,τ∗", "αAllen Institute for AI"): they
# separate the names, so they become commas for the NER.
_MARK_CHARS = "α-ωΑ-Ω†‡∗*§¶♠♣♡♢⋄□\\d"
_BYLINE_MARK = re.compile(rf"(?<=[a-z.])(?:[{_MARK_CHARS}]+,?)+(?=\s|$)|(?:(?<=\s)|^)[{_MARK_CHARS}]+(?=[A-Z])")
# Sections whose names are people thanked or funders, not the paper's content.
_SKIPPED_SECTION = re.compile(r"^\W*([\dIVX]+(\.\d+)*\.?\s+)?(acknowledge?ments?|funding|author contributions?)\W*$",
                              re.I)


def clean_text(text: str) -> str:
    """A paragraph without what is noise to a phrase finder: links, markup, citations, URLs and e-mails."""
    text = repair_text(html.unescape(_MD_LINK.sub(r"\1", text)))
    text = _SUP.sub(lambda m: "" if re.fullmatch(r"[\d,\s*†‡§¶∗-]*", m.group(2)) else m.group(2), text)
    text = _TAG.sub(" ", text)
    text = _URL.sub(" ", text)
    text = _ARXIV.sub(" ", text)
    text = _GLUED_FOOTNOTE.sub("", text)
    text = _NUM_BRACKETS.sub("", text)
    text = _CITE_BRACKETS.sub("", text)
    text = _CITE_PARENS.sub("", text)
    return _SPACES.sub(" ", text).strip()


def _reads_as_words(line: str) -> bool:
    """An equation chunk's caption line, as opposed to its LaTeX."""
    return "\\" not in line and sum(c.isalpha() or c.isspace() for c in line) >= 0.8 * len(line)


def _norm(text: str) -> str:
    return " ".join(text.split())


def chunk_units(chunk: Chunk, skipped: Sequence[str] = (), byline: Sequence[str] = ()) -> list[tuple[str, str]]:
    """The chunk's text as (text, mode) units for the pipeline. Text chunks split at item breaks so a heading
    never runs into the next sentence; a table's rows are units of their own, cells kept apart; the words found
    inside a figure are fragments, where capitals say nothing. A paragraph that is (part of) one of the `skipped`
    texts (title, reference entries, page furniture) is left out; one of the `byline` texts is a BYLINE unit."""
    text = (chunk.text or "")[:MAX_CHUNK_CHARS]
    units: list[tuple[str, str]] = []
    if chunk.kind == "table":
        for line in text.split("\n"):
            if " | " in line:
                units.append((" ; ".join(c.strip() for c in line.split(" | ") if c.strip()), ROW))
            elif line.strip():
                units.append((line, PROSE))
    elif chunk.kind == "image":
        lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
        if lines:
            units.append((lines[0], PROSE))
            if len(lines) > 1:
                units.append((" ".join(lines[1:]), FRAGMENTS))
    elif chunk.kind == "equation":
        units = [(ln, PROSE) for ln in text.split("\n") if ln.strip() and _reads_as_words(ln.strip())]
    else:
        units = [(p.replace("\n", " "), PROSE) for p in re.split(r"\n\s*\n", text) if p.strip()]
        if skipped or byline:
            units = _by_role(units, [_norm(t) for t in skipped if t.strip()], [_norm(t) for t in byline if t.strip()])
    out = []
    for unit, mode in units:
        cleaned = clean_text(unit)
        if letter_count(cleaned) >= 2:
            out.append((cleaned, mode))
    return out


def _by_role(units: list[tuple[str, str]], skipped: list[str], byline: list[str]) -> list[tuple[str, str]]:
    """A chunk is cut at token offsets: its first and last paragraphs may be parts of an item."""
    out = []
    for unit, mode in units:
        flat = _norm(unit)
        if len(flat) < 3 or any(flat in t or t in flat and len(t) > 0.5 * len(flat) for t in skipped):
            continue
        if any(flat in t or t in flat for t in byline):
            out.append((_BYLINE_MARK.sub(", ", unit), BYLINE))
        else:
            out.append((unit, mode))
    return out


def is_references_section(section: str) -> bool:
    return bool(_REFERENCES_SECTION.match(section or ""))


def is_skipped_section(section: str) -> bool:
    """Acknowledgements and the like: no entities from them."""
    return bool(_SKIPPED_SECTION.match(section or ""))


# A line of spectral data ("1H NMR (400 MHz, CDCl3) δ 7.26 (d, J = 8.1 Hz, 2H), 4.12 …", "HRMS m/z calcd …"): numbers
# and the units or labels of a spectrum, several of each. Its words are atoms and multiplicities, not terms.
_SPECTRAL = re.compile(r"\b(?:ppm|Hz|MHz|NMR|HRMS|ESI|IR|calcd|found|m/z|cm-1|cm−1|Rf)\b|δ")
_DECIMAL = re.compile(r"\d+\.\d+")


# A peak's integral and multiplicity, "(1H, m", "(2H, dd": a peak list however the sentence splitter cut it.
_MULTIPLICITY = re.compile(r"\d+H,\s*(?:br\.?\s*)?(?:s|d|t|q|m|dd|dt|td|ddd|dq|quint|sept)\b")
# A reference entry the parser left in the text: "Kametaka, S., Shibata, M., Moroe, K. …".
_CITED_AUTHOR = re.compile(r"\b[A-Z][a-z'-]+,\s(?:[A-Z]\.\s?){1,3}[,;]?")
# An address or a byline's boilerplate: "P. O. Box KA 9712, Accra", "Full list of author information is available".
_ADDRESS = re.compile(r"\bP\.\s?O\.\s?Box\b|\bauthor information is available\b|\bCorrespondence:", re.I)
_SHORT_WORDS = {"a", "i", "an", "as", "at", "be", "by", "do", "go", "he", "if", "in", "is", "it", "me", "my", "no",
                "of", "on", "or", "so", "to", "up", "us", "we"}


def reference_entry(text: str) -> bool:
    """A reference-list entry the parser left in the text (three cited authors, "Kametaka, S., Shibata, M., …"):
    what it names is counted for a term the text names too, never a term of its own."""
    return len(_CITED_AUTHOR.findall(text)) >= 3


def not_prose(text: str) -> bool:
    """A sentence whose words are not a text's terms: spectral data (a peak list: four decimals and two spectral
    labels or units, or a peak's multiplicity), an address, or letter-spaced
    text a PDF's layout left ("I n pati e nts d escri bed": a third of its words one or two stray lower-case
    letters)."""
    if len(_DECIMAL.findall(text)) >= 4 and len(_SPECTRAL.findall(text)) >= 2 or _MULTIPLICITY.search(text):
        return True
    if _ADDRESS.search(text):
        return True
    words = re.findall(r"[A-Za-z]+", text)
    stray = sum(len(w) <= 2 and w.islower() and w not in _SHORT_WORDS for w in words)  # not "P", "F1" of a table
    return len(words) >= 6 and stray >= len(words) / 3


def letter_count(text: str) -> int:
    """How many letters: a unit, sentence or phrase with too few is not text."""
    return sum(c.isalpha() for c in text)


def sentence_spans(doc, mode: str) -> list[tuple[int, int]]:
    """Sentence token ranges, with the splits the small model makes after "et al.", "Fig." or "e.g." undone."""
    if mode == ROW:
        return [(0, len(doc))]
    spans: list[list[int]] = []
    for sent in doc.sents:
        if spans:
            last = doc[sent.start - 1]
            prev = doc[sent.start - 2] if sent.start > 1 else None
            after_abbreviation = (last.text.endswith(".") and last.lower_.rstrip(".") in W.ABBREVIATIONS
                                  or last.text == "." and prev is not None
                                  and prev.lower_.rstrip(".") in W.ABBREVIATIONS)
            if after_abbreviation or sent[0].text[:1].islower():
                spans[-1][1] = sent.end
                continue
        spans.append([sent.start, sent.end])
    return [(a, b) for a, b in spans]
