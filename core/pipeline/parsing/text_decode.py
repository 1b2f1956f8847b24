"""Bytes of an uploaded text document → str, or a ParseError that says what the file is instead.

Decoding order: UTF-8 (a BOM is dropped), UTF-16 when the file starts with its BOM, then Windows-1252 as the one
stated fallback (what a Western "ANSI" text editor writes; it maps almost every byte, so a warning says the text
was not UTF-8). Binary files are refused before any of that: a NUL byte or a known file signature."""
from __future__ import annotations

import codecs
import unicodedata

from core.pipeline.parsing.result import ParseError
from core.text.unicode import valid_unicode

FALLBACK_ENCODING = "cp1252"
# A text document bigger than this is almost certainly a dump or a log, not something to read into chunks; it is
# also ~5,000 pages of prose, well past the page limit a PDF gets by default.
MAX_TEXT_BYTES = 20 * 2**20

_SIGNATURES: list[tuple[bytes, str]] = [
    (b"%PDF-", "a PDF (add it with a .pdf name)"),
    (b"PK\x03\x04", "a ZIP archive (or an Office document)"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"\x7fELF", "a program (ELF)"),
    (b"\xd0\xcf\x11\xe0", "an old Microsoft Office document"),
]
# Text with more than this share of control characters (other than tab, newline, CR, form feed) is garbage.
_MAX_CONTROL_SHARE = 0.01


def _control_share(text: str) -> float:
    if not text:
        return 0.0
    bad = sum(1 for ch in text if unicodedata.category(ch) == "Cc" and ch not in "\t\n\r\f")
    return bad / len(text)


def decode_text(data: bytes, kind: str, max_bytes: int = MAX_TEXT_BYTES) -> tuple[str, list[str]]:
    """The document's text (newlines normalised to \\n) and warnings. `kind` names the format in messages."""
    if not data.strip():
        raise ParseError(f"the {kind} file is empty")
    if len(data) > max_bytes:
        raise ParseError(f"the {kind} file is {len(data) / 2**20:.1f} MB; text documents are limited to "
                         f"{max_bytes // 2**20} MB")
    warnings: list[str] = []
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError:
            raise ParseError(f"the {kind} file starts like UTF-16 text but is not valid UTF-16") from None
    else:
        for magic, what in _SIGNATURES:
            if data.startswith(magic):
                raise ParseError(f"this is not a {kind} file: it is {what}")
        if b"\x00" in data[:65536]:
            raise ParseError(f"this is not a {kind} file: it holds binary data (NUL bytes)")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            try:
                text = data.decode(FALLBACK_ENCODING)
            except UnicodeDecodeError:
                raise ParseError(f"the {kind} file is neither UTF-8 nor Windows-1252 text (byte "
                                 f"0x{data[exc.start]:02x} at offset {exc.start})") from None
            warnings.append(f"not valid UTF-8 (first bad byte at offset {exc.start}): read as Windows-1252")
    if _control_share(text) > _MAX_CONTROL_SHARE:
        raise ParseError(f"this is not a {kind} file: {_control_share(text):.0%} of its characters are control "
                         "characters (binary data?)")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = valid_unicode(text)  # lone surrogates (from UTF-16) would break JSON and SQLite later
    if not text.strip():
        raise ParseError(f"the {kind} file holds only whitespace")
    return text, warnings
