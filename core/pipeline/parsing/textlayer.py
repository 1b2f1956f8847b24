"""Decide which pages need OCR: no usable text layer, or one whose characters are not words.

Measured on ../shared/corpus (24 PDFs, 160 pages): on normal pages at least 35% of the Latin letters are vowels
and at least 92% of the 3+-letter tokens contain one; on olmocr_dolma-page-1 (a font whose encoding maps every
letter to its neighbour, "Oqnbddchmfr ne sgd" for "Proceedings of the") those figures are 7% and 35%. The
thresholds below sit far from both. Control, private-use and U+FFFD characters are what MuPDF returns for glyphs
it cannot map, so a page made mostly of them is unreadable too.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import pymupdf

MIN_CHARS = 30  # fewer non-space characters than this is "no text layer" when the page shows something
MIN_LETTERS_TO_JUDGE = 120  # too little Latin text to judge its vowels reliably
MIN_VOWEL_SHARE = 0.22
MIN_VOWELLED_TOKENS = 0.70
MAX_UNMAPPED_SHARE = 0.25
SCAN_COVERAGE = 0.5  # a picture this big under a few characters is a scan with a stray text stamp
FULL_PAGE, STAMP_CHARS = 0.85, 200  # a full-page picture under less text than this is a stamped scan

_VOWELS = frozenset("aeiouyAEIOUY")
_TOKEN = re.compile(r"[A-Za-z]{3,}")


@dataclass
class PageText:
    needs_ocr: bool
    reason: str  # "no text layer", "unreadable text layer (broken font encoding)", "" when fine or blank
    blank: bool = False  # nothing visible at all: neither text nor pictures nor drawings


def _unmapped(ch: str) -> bool:
    return ch == "\ufffd" or unicodedata.category(ch) in ("Cc", "Co", "Cn", "Cs")


def is_gibberish(text: str) -> bool:
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return False
    if sum(map(_unmapped, chars)) / len(chars) > MAX_UNMAPPED_SHARE:
        return True
    letters = [c for c in chars if c.isascii() and c.isalpha()]
    # Only judge text that is mostly Latin script: vowel statistics mean nothing for CJK or formulas.
    if len(letters) < MIN_LETTERS_TO_JUDGE or len(letters) < 0.5 * len(chars):
        return False
    vowel_share = sum(c in _VOWELS for c in letters) / len(letters)
    tokens = _TOKEN.findall(text)
    vowelled = sum(1 for t in tokens if any(c in _VOWELS for c in t)) / max(1, len(tokens))
    return vowel_share < MIN_VOWEL_SHARE or vowelled < MIN_VOWELLED_TOKENS


def _image_coverage(page: pymupdf.Page) -> float:
    area = abs(page.rect) or 1.0
    covered = 0.0
    for info in page.get_image_info():
        covered += abs(pymupdf.Rect(info["bbox"]) & page.rect)
    return min(1.0, covered / area)


def diagnose_page(page: pymupdf.Page) -> PageText:
    text = page.get_text("text")
    n_chars = sum(1 for c in text if not c.isspace())
    if n_chars >= MIN_CHARS:
        if is_gibberish(text):
            return PageText(True, "unreadable text layer (broken font encoding)")
        # Library scans often carry a one-line "Downloaded from..." stamp over the page picture.
        if n_chars < STAMP_CHARS and _image_coverage(page) >= FULL_PAGE:
            return PageText(True, "scanned page with only a few words of text layer")
        return PageText(False, "")
    coverage = _image_coverage(page)
    if coverage == 0.0 and not page.get_drawings():
        return PageText(False, "", blank=n_chars == 0)
    if n_chars == 0 or coverage >= SCAN_COVERAGE:
        return PageText(True, "no text layer")
    return PageText(False, "")
