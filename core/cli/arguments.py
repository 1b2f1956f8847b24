"""Command-line arguments that are not text. Linux hands a program its arguments as bytes; Python decodes them
as UTF-8 and keeps each byte it cannot decode as a lone surrogate (U+DC80..U+DCFF). Such a string cannot be
encoded again: the tokenizer, SQLite, JSON and the terminal each fail on it with their own traceback or codec
error. So a question, a query, an id or a name is checked once, here, and refused with the byte that is wrong."""
from __future__ import annotations

import argparse

# Arguments that name files: any bytes are a valid file name on Linux, so these are passed on as they are (a
# stored file name is sanitised by core.text.filenames, which drops surrogates).
PATH_ARGUMENTS = {"paths", "questions", "out"}


def undecodable_argument(args: argparse.Namespace) -> str:
    """What is wrong with the first text argument that is not valid UTF-8 text, or "" when all are."""
    for name, value in vars(args).items():
        if name in PATH_ARGUMENTS:
            continue
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and (problem := _not_text(text)):
                shown = name.replace("_", "-")
                return (f"the {shown} argument is not valid UTF-8 text: {problem}; check the terminal's encoding "
                        "(LANG / LC_ALL) or how the argument was written")
    return ""


def _not_text(text: str) -> str:
    for position, char in enumerate(text):
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # a byte Python could not decode, kept by surrogateescape
            return f"byte 0x{code - 0xDC00:02x} at character {position + 1}"
        if 0xD800 <= code <= 0xDFFF:
            return f"a lone surrogate U+{code:04X} at character {position + 1}"
    return ""
