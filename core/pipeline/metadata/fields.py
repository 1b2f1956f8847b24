"""A field's value made safe to keep: valid text without control characters, within its length, of its type. The
same rules for what an extractor read, what a person typed and what an import gave; each cut is said."""
from __future__ import annotations

import re
import unicodedata

from core.schema.metadata import FIELDS, MAX_AUTHORS, MAX_CHARS
from core.text.terminal import without_escapes

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def _text(value: object) -> str:
    text = unicodedata.normalize("NFKC", without_escapes(str(value)))  # ligatures ("ﬁ") as letters
    return " ".join(_CONTROL.sub(" ", text).split())


def _cut(name: str, text: str, notes: list[str], label: str = "") -> str:
    limit = MAX_CHARS[name]
    if len(text) > limit:
        notes.append(f"{label or name} cut to {limit:,} characters (it had {len(text):,})")
        return text[:limit].rstrip()
    return text


def clean_field(name: str, value: object) -> tuple[object, list[str]]:
    """(the value to store, what was changed and why). Raises ValueError for an unknown field or a year that is
    not a year. Authors: a list, or one string of names separated by ';' (or ' and ')."""
    if name not in FIELDS:
        raise ValueError(f"unknown metadata field {name!r}; one of {', '.join(FIELDS)}")
    notes: list[str] = []
    if value is None:
        return ("" if name not in ("authors", "year") else [] if name == "authors" else None), notes
    if name == "year":
        text = _text(value)
        if not text:
            return None, notes
        if not re.fullmatch(r"\d{4}", text):
            raise ValueError(f"year must be four digits, not {text[:20]!r}")
        return int(text), notes
    if name == "authors":
        parts = value if isinstance(value, list) else re.split(r"\s*;\s*|\s+and\s+", str(value))
        names = [_cut(name, _text(p), notes, "an author's name") for p in parts]
        names = [n for n in names if n]
        if len(names) > MAX_AUTHORS:
            notes.append(f"authors cut to the first {MAX_AUTHORS} (there were {len(names):,})")
            names = names[:MAX_AUTHORS]
        return names, notes
    text = _cut(name, _text(value), notes)
    if name == "doi":
        text = re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", "", text, flags=re.I).lower()
    if name == "arxiv":
        text = re.sub(r"^(?:arxiv:\s*|https?://arxiv\.org/(?:abs|pdf)/)", "", text, flags=re.I)
        text = re.sub(r"v\d+$", "", text)
    if name != "abstract" and len(notes) == 0 and _text(value) != str(value).strip():
        notes.append(f"{name}: control characters and line breaks removed")
    return text, notes
