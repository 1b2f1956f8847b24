"""What every operation checks of what a client sent, before any work: text is valid Unicode without control
characters and of a bounded length, a paper id names a paper of *this* workspace, numbers lie in their range.

Why refuse rather than clean: a lone surrogate or a NUL reached here from JSON (`"\\ud800"`, `"\\u0000"`) is never
what a person typed; answering a silently changed question would cite passages for something nobody asked."""
from __future__ import annotations

import re
import unicodedata

from core.library import Library
from core.schema.records import Document
from core.service.errors import invalid, not_found
from core.text.questions import MAX_QUESTION_CHARS, question_too_long

MAX_QUERY_CHARS = 4000  # a search query: as long as a question may be
MIN_ID_PREFIX = 6
_HEX = re.compile(r"^[0-9a-f]+$")


def clean_text(text: object, what: str, max_chars: int = MAX_QUERY_CHARS) -> str:
    """`text` with its whitespace runs collapsed; refused (invalid_input) when it is not a string, empty, too long,
    or holds control characters or lone surrogates."""
    if not isinstance(text, str):
        raise invalid(f"the {what} must be text")
    if len(text) > max_chars:
        raise invalid(f"the {what} is {len(text):,} characters long; the limit is {max_chars:,}")
    for ch in text:
        category = unicodedata.category(ch)
        if category == "Cs":
            raise invalid(f"the {what} holds a lone surrogate (U+{ord(ch):04X}): not valid Unicode text")
        if category == "Cc" and ch not in "\t\n\r":
            raise invalid(f"the {what} holds a control character (U+{ord(ch):04X})")
    text = " ".join(text.split())
    if not text:
        raise invalid(f"the {what} is empty")
    return text


def clean_question(question: object) -> str:
    """clean_text, with the length limit (and its message) of every question (core.text.questions)."""
    if isinstance(question, str) and (reason := question_too_long(question)):
        raise invalid(reason)
    return clean_text(question, "question", max_chars=MAX_QUESTION_CHARS)


def bounded(value: int, what: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise invalid(f"{what} must be a whole number from {low} to {high}")
    return value


def find_paper(lib: Library, paper_id: object) -> Document:
    """The paper of this workspace whose id is `paper_id` or starts with it (at least 6 hexadecimal characters,
    one match). Nothing outside the workspace's own table can be named: an id is never a path."""
    if not isinstance(paper_id, str):
        raise invalid("a paper id is text")
    key = paper_id.strip().lower()
    if len(key) < MIN_ID_PREFIX or len(key) > 64 or not _HEX.match(key):
        raise invalid(f"a paper id is {MIN_ID_PREFIX}-64 hexadecimal characters (the start of its SHA-256)")
    doc = lib.documents.get(key) if len(key) == 64 else None
    if doc is not None:
        return doc
    matches = [d for d in lib.documents.list() if d.id.startswith(key)]
    if len(matches) != 1:
        raise not_found(f"no paper with id {key!r} in this workspace" if not matches
                        else f"{key!r} matches {len(matches)} papers; give more of the id")
    return matches[0]
