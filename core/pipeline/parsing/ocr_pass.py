"""Replace the items of pages without a usable text layer by OCR'd text, or warn when OCR is off."""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pymupdf

from core.pipeline.parsing.layout import reading_order
from core.pipeline.parsing.ocr import OcrLine, ocr_page
from core.pipeline.parsing.ocr_layout import ocr_items
from core.pipeline.parsing.result import ParseError
from core.pipeline.parsing.textlayer import PageText, diagnose_page
from core.schema.records import ContentItem
from core.settings.config import ParsingConfig

_MEDIA = ("image", "table", "chart")


def page_list(pages: list[int]) -> str:
    """0-based page indices as the user reads them: "page 3", "pages 1–4, 7"."""
    runs: list[list[int]] = []
    for p in sorted(pages):
        if runs and p == runs[-1][-1] + 1:
            runs[-1].append(p)
        else:
            runs.append([p])
    text = ", ".join(f"{r[0] + 1}" if len(r) == 1 else f"{r[0] + 1}–{r[-1] + 1}" for r in runs)
    return f"page{'s' if len(pages) > 1 else ''} {text}"


def _safe_diagnose(page: pymupdf.Page) -> PageText:
    try:
        return diagnose_page(page)
    except Exception:  # a page MuPDF cannot read is left to the backends, which report it
        return PageText(False, "")


def diagnose(pdf_path: Path) -> list[PageText]:
    with pymupdf.open(pdf_path) as doc:
        return [_safe_diagnose(page) for page in doc]


def _keep(item: ContentItem, lines: list[OcrLine], page: pymupdf.Page) -> bool:
    """Keep a backend's picture that is a real figure, not the scan itself or one of its strips."""
    if item.type not in _MEDIA or not item.bbox:
        return False
    x0, y0, x1, y1 = item.bbox
    area = max(0.0, x1 - x0) * max(0.0, y1 - y0) / 1e6  # share of the page
    if not 0.02 <= area < 0.5:
        return False
    w, h = page.rect.width, page.rect.height
    covered = 0.0
    for ln in lines:
        bx = (ln.box[0] * 1000 / w, ln.box[1] * 1000 / h, ln.box[2] * 1000 / w, ln.box[3] * 1000 / h)
        covered += max(0.0, min(x1, bx[2]) - max(x0, bx[0])) * max(0.0, min(y1, bx[3]) - max(y0, bx[1]))
    return covered / ((x1 - x0) * (y1 - y0)) < 0.15


def _group(messages: dict[str, list[int]]) -> list[str]:
    return [f"{page_list(pages)}: {msg}" for msg, pages in messages.items()]


def apply_ocr(pdf_path: Path, items: list[ContentItem], diagnoses: list[PageText], config: ParsingConfig, *,
              progress: Callable[[str], None], deadline: float | None) -> tuple[list[ContentItem], list[str], bool]:
    """Return (items, warnings, whether OCR ran). Items keep page order; OCR'd pages are rebuilt."""
    need = [i for i, d in enumerate(diagnoses) if d.needs_ocr]
    if not need:
        return items, [], False
    messages: dict[str, list[int]] = {}
    if not config.ocr:
        for i in need:
            messages.setdefault(f"{diagnoses[i].reason}; OCR is off, so its text is missing", []).append(i)
        # Words read from a broken encoding are noise that would pollute search: drop them, keep pictures.
        unreadable = {i for i in need if diagnoses[i].reason.startswith("unreadable")}
        kept = [it for it in items if it.page_idx not in unreadable or it.type in _MEDIA]
        for it in kept:
            if it.page_idx in unreadable:
                it.captions, it.table_body = [], ""
        return kept, _group(messages), False
    by_page: dict[int, list[ContentItem]] = {}
    for item in items:
        by_page.setdefault(item.page_idx, []).append(item)
    with pymupdf.open(pdf_path) as doc:
        for n, i in enumerate(need):
            if deadline is not None and time.monotonic() > deadline:
                raise ParseError(f"OCR stopped at page {i + 1}: parsing exceeded the time limit "
                                 "(timeout in the parsing settings)")
            progress(f"OCR: page {i + 1} ({n + 1} of {len(need)})")
            page = doc[i]
            try:
                lines = ocr_page(page, config.ocr_dpi)
            except Exception as exc:  # one bad page (odd image data, onnxruntime error) must not sink the file
                messages.setdefault(f"OCR failed ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})",
                                    []).append(i)
                continue
            kept = [it for it in by_page.get(i, []) if _keep(it, lines, page)]
            if diagnoses[i].reason.startswith("unreadable"):
                for it in kept:  # captions came from the same broken text layer
                    it.captions = []
            new = kept + ocr_items(lines, i, page.rect.width, page.rect.height)
            by_page[i] = [new[k] for k in reading_order([tuple(it.bbox or (0, 0, 0, 0)) for it in new])]
            found = "OCR'd" if lines else "and OCR found no text"
            messages.setdefault(f"{diagnoses[i].reason}, {found}", []).append(i)
    merged = [it for p in sorted(by_page) for it in by_page[p]]
    return merged, _group(messages), True
