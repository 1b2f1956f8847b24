"""Reject files that cannot be parsed before any backend spends time on them, with a message that says why."""
from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pymupdf

from core.pipeline.parsing.result import ParseError
from core.settings.config import ParsingConfig

# What a non-PDF upload usually is, by its first bytes.
_SIGNATURES: list[tuple[bytes, str]] = [
    (b"PK\x03\x04", "a ZIP archive"),
    (b"\xd0\xcf\x11\xe0", "an old Microsoft Office document (.doc/.xls/.ppt)"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"{\\rtf", "an RTF document"),
    (b"%!PS", "a PostScript file"),
    (b"AT&TFORM", "a DjVu document"),
]
_ZIP_KINDS = [("word/", "a Word document (.docx)"), ("xl/", "an Excel workbook (.xlsx)"),
              ("ppt/", "a PowerPoint file (.pptx)"), ("META-INF/container.xml", "an EPUB e-book")]


def _zip_kind(path: Path) -> str:
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
    except (zipfile.BadZipFile, OSError):
        return "a ZIP archive"
    for prefix, kind in _ZIP_KINDS:
        if any(n.startswith(prefix) for n in names):
            return kind
    return "a ZIP archive"


def _guess_kind(path: Path, head: bytes) -> str:
    for magic, kind in _SIGNATURES:
        if head.startswith(magic):
            return _zip_kind(path) if magic == b"PK\x03\x04" else kind
    text = head.lstrip().lower()
    if text.startswith((b"<!doctype html", b"<html")):
        return "an HTML page, e.g. a download error page"
    if text.startswith(b"<?xml") or text.startswith(b"<"):
        return "an XML or HTML file"
    try:
        head.decode("utf-8")
        return "a plain text file"
    except UnicodeDecodeError:
        return "an unknown binary file"


def _shown(head: bytes) -> str:
    return repr(head[:4])[2:-1]


def check_pdf(pdf_path: Path, config: ParsingConfig) -> int:
    """Return the page count, or raise ParseError saying exactly what is wrong with the file."""
    pdf_path = Path(pdf_path)
    try:
        size = pdf_path.stat().st_size
    except FileNotFoundError:
        raise ParseError(f"the file {pdf_path.name} does not exist") from None
    if size == 0:
        raise ParseError("the file is empty (0 bytes)")
    if size > config.max_file_mb * 1024 * 1024:
        raise ParseError(f"the file is {size / 2**20:.1f} MB, more than the {config.max_file_mb} MB limit "
                         "(max file size in the parsing settings)")
    with pdf_path.open("rb") as fh:
        head = fh.read(1024)
    # The PDF spec lets the header start anywhere in the first 1024 bytes; MuPDF accepts that too.
    if b"%PDF-" not in head:
        raise ParseError(f"not a PDF: the file starts with '{_shown(head)}' (looks like {_guess_kind(pdf_path, head)})")
    try:
        doc = pymupdf.open(pdf_path, filetype="pdf")
    except Exception as exc:  # MuPDF raises plain RuntimeErrors/FileDataError with its own wording
        raise ParseError(f"the PDF is damaged and cannot be opened: {_mupdf_reason(exc)}") from None
    try:
        if doc.needs_pass:
            raise ParseError("the PDF is password-protected; remove the password and upload it again")
        try:
            pages = doc.page_count  # MuPDF reads the page tree here: an absurd /Count fails now
        except Exception as exc:
            raise ParseError(f"the PDF's page tree is broken ({_mupdf_reason(exc)}); it cannot be parsed") from None
        if pages == 0:
            raise ParseError("the PDF has no pages")
        if pages > config.max_pages:
            raise ParseError(f"the PDF has {pages} pages, more than the limit of {config.max_pages} "
                             f"page{'s' if config.max_pages != 1 else ''} "
                             "(max pages in the parsing settings)")
        _check_page_tree(doc, pages)
    finally:
        doc.close()
    return pages


def _check_page_tree(doc, pages: int) -> None:
    """Find every page once (about 15 µs a page), so a page tree with a cycle or a missing page fails here with
    a message instead of in the middle of a parser."""
    for number in range(pages):
        try:
            doc.load_page(number)
        except Exception as exc:
            raise ParseError(f"the PDF's page tree is broken at page {number + 1} ({_mupdf_reason(exc)}); "
                             "it cannot be parsed") from None


def _mupdf_reason(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    # MuPDF's generic message names the server-side path, which means nothing to the user.
    if not lines or "Failed to open file" in lines[-1]:
        return "MuPDF cannot read its structure (the file may be truncated or not fully uploaded)"
    return re.sub(r"^code=\d+: ", "", lines[-1])  # MuPDF's internal error number says nothing to a user


def is_pdf_bytes(data: bytes) -> bool:
    return b"%PDF-" in data[:1024]


__all__ = ["check_pdf", "is_pdf_bytes"]
