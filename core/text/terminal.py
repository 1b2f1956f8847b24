"""Text from papers and LLM replies made safe to print on a terminal.

A paper title can hold escape sequences (ESC ] 0 ; … retitles the window, ESC [ 2 J clears it, OSC 8 makes
hidden links) or C1 controls that some terminals read the same way. `for_terminal` removes whole escape
sequences, then every other control character except newline and tab, and the bidirectional overrides that make
a line read differently from what it holds. Lone surrogates become U+FFFD so printing cannot fail.
"""
from __future__ import annotations

import re

from core.text.unicode import valid_unicode

# ESC sequences: CSI (ESC [ … final), OSC / DCS / SOS / PM / APC strings (ended by BEL or ESC \ or the end of the
# text), and two-byte escapes (ESC + one char). The same with the one-byte C1 introducers (0x9b CSI, 0x9d OSC…).
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -~]?"
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_CONTROLS_AND_NEWLINES = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def without_escapes(text: str) -> str:
    """`text` without its terminal escape sequences, whole (not only their ESC byte): what a PDF or an import held
    as "\x1b]0;pwned\x07Title" is kept as "Title", never as "]0;pwned Title"."""
    return _ESCAPES.sub("", text)


def for_terminal(text: object, *, one_line: bool = False) -> str:
    """`text` without escape sequences or control characters; `one_line` turns newlines and tabs into spaces."""
    cleaned = _ESCAPES.sub("", valid_unicode(str(text)))
    if one_line:
        return _CONTROLS_AND_NEWLINES.sub(" ", cleaned)
    return _CONTROLS.sub("", cleaned)


__all__ = ["for_terminal", "without_escapes"]
