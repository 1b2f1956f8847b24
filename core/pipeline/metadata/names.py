"""People's names out of a byline ("Arman Cohan†∗ Sergey Feldman†∗", "Anna Sundström,1 Michael Rönnlund,2 …
and Lars-Göran Nilsson4") or a PDF's author field ("Arman Cohan ; Sergey Feldman").

A byline line is split where names are apart: commas, semicolons, "and", wide gaps, and the places where a
superscript mark stood (layout.py writes SEP there). A line whose parts are mostly not names is an affiliation line
("Laboratoire de Photonique, CNRS, Route de Nozay, 91460 Marcoussis, France") and names nobody."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from core.pipeline.metadata.rules import rules

SEP = " ¦ "  # where a superscript mark or a wide gap separated two words in a byline (layout.py)
# Footnote marks and affiliation indices glued to names: digits, symbols, single lower-case letters after a comma.
_MARKS = re.compile(r"[\d∗*†‡§¶‖#⋆♯♭♮✝✉⊥∥&$^☯⇑□⋄♠♢♡♣♦♥•◦★☆✦✧]+|\(\s*\)|\s[a-f](?=\s|,|$)")
_SPLIT = re.compile(r"\s*(?:,|;|¦|\band\b|&|\s{3,}|·|•)\s*", re.I)
_WORD = re.compile(r"^(?:[A-ZÀ-ÖØ-Þ][\w'’\-]*\.?|[A-Z]\.(?:-?[A-Z]\.)*|[a-z]{1,4})$")
_INITIAL = re.compile(r"^[A-Z]\.?(?:-?[A-Z]\.?)*$")  # "A.", "N.J.", "J.-C.", "S": an initial, never an affiliation word
_SEPARATOR_END = re.compile(r"(?:,|;|¦|\band|&)\s*$", re.I)


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c if c.isprintable() else " " for c in text)
    text = re.sub(r"[´¨˜ˆ`˚¸]", "", text)  # TeX's spacing accents: "Zolt´an Gy¨ongyi" → "Zoltan Gyongyi"
    text = re.sub(r"\S+@\S+", " ", text)  # e-mail addresses
    text = re.sub(r"\{[^}]*\}", " ", text)  # {a,b,c}@host lists
    return _MARKS.sub(" ", text)


def looks_like_name(candidate: str) -> bool:
    words = candidate.split()
    if not 2 <= len(words) <= 5:
        return False
    r = rules()
    # An initial ("Heta A. Gandhi") is no affiliation word, even where the lexicon holds its letter ("a").
    lowered = [w.lower().strip(".") for w in words if not _INITIAL.match(w)]
    if any(w in r.affiliation_words for w in lowered if w not in r.name_particles):
        return False
    if not all(_WORD.match(w) for w in words):
        return False
    # Lower-case words may only be particles (van, de…), never first or last.
    if not words[0][0].isupper() or not words[-1][0].isupper():
        return False
    return all(w[0].isupper() or w.lower() in r.name_particles for w in words)


def _cased(name: str) -> str:
    """ARMAN COHAN → Arman Cohan (an all-capitals byline), Ross G. DOUGLAS → Ross G. Douglas (family names in
    capitals); mixed case is kept as printed."""
    words = name.split()
    if name.upper() == name and any(c.isalpha() for c in name):
        return " ".join(w.capitalize() if len(w.strip(".")) > 1 else w for w in words)
    if any(w.upper() != w for w in words):
        words = [_capitalised(w) if len(w) > 2 and w.isupper() and "." not in w else w for w in words]
    return " ".join(words)


def _capitalised(word: str) -> str:
    return "-".join(p.capitalize() for p in word.split("-"))


def _part_text(part: str) -> str:
    part = " ".join(part.split()).strip(" .,;")
    part = re.sub(r"^[a-z]{1,2}\s+(?=[A-Z])|\s+[a-z]{1,2}$", "", part)  # "a Derek P. Fraser": an index mark
    part = re.sub(r"^(?:" + "|".join(rules().honorifics) + r")\.?\s+", "", part, flags=re.I)  # "Dr. Saeed Murtaza"
    return _cased(part) if part else ""


@dataclass
class BylineLine:
    """What one line of a byline says: the names it holds, its other parts, and a lone word at its end with no
    separator after it (the given name of a name the next line finishes: "… and Andrew" / "D. White")."""
    names: list[str]
    others: int
    dangling: str = ""
    leading: int = 0  # how many of the names come before the first part that is not one


def read_byline_line(line: str, carried: str = "") -> BylineLine:
    """The parts of a byline line; `carried` is the previous line's dangling word, put before this line's first
    part when the two make a name."""
    cleaned = _clean(line)
    parts = [p for p in (_part_text(p) for p in _SPLIT.split(cleaned)) if p]
    if carried and parts and looks_like_name(f"{carried} {parts[0]}"):
        parts[0] = f"{carried} {parts[0]}"
    dangling = ""
    if parts and len(parts[-1].split()) == 1 and not _SEPARATOR_END.search(line.rstrip(" .*∗†‡0123456789")) \
            and _WORD.match(parts[-1]) and parts[-1][0].isupper() and len(parts[-1]) > 1 \
            and parts[-1].lower() not in rules().affiliation_words:
        dangling = parts.pop()
    names, others, leading = [], 0, 0
    for part in parts:
        if looks_like_name(part):
            names.append(part[:200])
            leading += not others
        elif sum(c.isalpha() for c in part) >= 3:
            others += 1
    return BylineLine(names, others, dangling, leading)


def names_in(line: str, leading: bool = False) -> list[str]:
    """The people a byline line names, in order; [] when most of its parts are not names (an affiliation line).
    leading: the names before its first other part, whatever follows them (a parser's paragraph often holds the
    byline and the affiliations under it: "Ada Lovelace1, Alan Turing2 1 University of …, 2 Institute of …")."""
    read = read_byline_line(line)
    if leading:
        return read.names[:read.leading]
    return read.names if len(read.names) > read.others else []


def pdf_author_names(value: str) -> list[str]:
    """A PDF's author field as names; [] when it reads like software, a publisher or an account."""
    text = " ".join((value or "").split())
    if not text or any(w in rules().pdf_author_junk for w in re.findall(r"[a-z]+", text.lower())):
        return []
    parts = [p.strip() for p in re.split(r"\s*(?:;|,|\band\b|&)\s*", text) if p.strip()]
    names = [_cased(p) for p in parts]
    return names if names and all(looks_like_name(n) for n in names) else []


def fold_name(name: str) -> str:
    """A name compared: accents, case, dots and spacing of initials aside ("Patrick N. J. Lane" = "Patrick N.J.
    Lane")."""
    decomposed = unicodedata.normalize("NFKD", name.casefold())
    return re.sub(r"[^a-z0-9]", "", "".join(c for c in decomposed if not unicodedata.combining(c)))


def family(name: str) -> str:
    words = name.split()
    return fold_name(words[-1]) if words else ""


def vote_with_pdf_field(page_names: list[str], pdf_names: list[str]) -> tuple[list[str], bool]:
    """The authors from the byline and from the PDF's author field: (names, whether the PDF field's list won).
    The byline is printed: its names are whole ("Daniel S. Weld" where the field says "Daniel Weld") and it lists
    everyone where a field often holds the first author alone. The field's list wins only when it holds every family
    name of the byline's and more (the byline missed some)."""
    if not pdf_names:
        return page_names, False
    if not page_names:
        return pdf_names, True
    if [fold_name(n) for n in pdf_names] == [fold_name(n) for n in page_names]:
        return pdf_names, True  # the same people, spelled the same: the field, typed by its producer
    page_families = [family(n) for n in page_names]
    pdf_families = [family(n) for n in pdf_names]
    if len(pdf_names) > len(page_names) and all(f in pdf_families for f in page_families):
        return pdf_names, True
    return page_names, False
