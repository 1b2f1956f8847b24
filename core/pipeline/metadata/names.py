"""People's names out of a byline ("Arman Cohan†∗ Sergey Feldman†∗", "Anna Sundström,1 Michael Rönnlund,2 …
and Lars-Göran Nilsson4") or a PDF's author field ("Arman Cohan ; Sergey Feldman")."""
from __future__ import annotations

import re
import unicodedata

from core.pipeline.metadata.rules import rules

# Footnote marks and affiliation indices glued to names: digits, symbols, single lower-case letters after a comma.
_MARKS = re.compile(r"[\d∗*†‡§¶‖#⋆♯♭♮✝✉⊥∥&$^]+|\(\s*\)|\s[a-f](?=\s|,|$)")
_SPLIT = re.compile(r"\s*(?:,|;|\band\b|&|\s{3,}|·|•)\s*", re.I)
_WORD = re.compile(r"^(?:[A-ZÀ-ÖØ-Þ][\w'’\-]*\.?|[A-Z]\.(?:-?[A-Z]\.)*|[a-z]{1,4})$")


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
    lowered = [w.lower().strip(".") for w in words]
    if any(w in r.affiliation_words for w in lowered if w not in r.name_particles):
        return False
    if not all(_WORD.match(w) for w in words):
        return False
    # Lower-case words may only be particles (van, de…), never first or last.
    if not words[0][0].isupper() or not words[-1][0].isupper():
        return False
    return all(w[0].isupper() or w.lower() in r.name_particles for w in words)


def _cased(name: str) -> str:
    """ARMAN COHAN → Arman Cohan (an all-capitals byline); mixed case is kept as printed."""
    if name.upper() == name and any(c.isalpha() for c in name):
        return " ".join(w.capitalize() if len(w.strip(".")) > 1 else w for w in name.split())
    return name


def names_in(line: str) -> list[str]:
    """The people a byline line names, in order; [] when a part of it is not a name (an affiliation line)."""
    out = []
    for part in _SPLIT.split(_clean(line)):
        part = " ".join(part.split()).strip(" .,;")
        part = re.sub(r"^[a-z]{1,2}\s+(?=[A-Z])|\s+[a-z]{1,2}$", "", part)  # "a Derek P. Fraser": an index mark
        if not part:
            continue
        part = _cased(part)
        if looks_like_name(part):
            out.append(part[:200])
    return out


def pdf_author_names(value: str) -> list[str]:
    """A PDF's author field as names; [] when it reads like software, a publisher or an account."""
    text = " ".join((value or "").split())
    if not text or any(w in rules().pdf_author_junk for w in re.findall(r"[a-z]+", text.lower())):
        return []
    parts = [p.strip() for p in re.split(r"\s*(?:;|,|\band\b|&)\s*", text) if p.strip()]
    names = [_cased(p) for p in parts]
    return names if names and all(looks_like_name(n) for n in names) else []
