"""Text found inside an item's box on its PDF page: the labels of a figure, the symbols of an equation that
MinerU kept only as an image. PyMuPDF's text layer first (~1 ms a box); RapidOCR on the crop when the box has no
text layer (a raster figure), since that costs ~0.5-2 CPU-s a crop."""
from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger(__name__)

OCR_DPI = 150
MIN_OCR_SIDE_PT = 24.0  # boxes thinner than this hold no readable line


def _rect(page, bbox: Sequence[float]):
    import pymupdf

    w, h = page.rect.width, page.rect.height
    x0, y0, x1, y1 = (float(v) for v in bbox)
    x0, x1 = sorted((x0, x1))
    y0, y1 = sorted((y0, y1))
    return pymupdf.Rect(page.rect.x0 + x0 * w / 1000, page.rect.y0 + y0 * h / 1000,
                        page.rect.x0 + x1 * w / 1000, page.rect.y0 + y1 * h / 1000)


def _ocr_clip(page, rect) -> str:
    import numpy as np
    import pymupdf

    from core.pipeline.parsing.ocr import MIN_SCORE, _run_lock, get_engine  # PyMuPDF at import: only to OCR a box

    pix = page.get_pixmap(dpi=OCR_DPI, clip=rect, colorspace=pymupdf.csRGB, alpha=False)
    img = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, pix.n)
    engine = get_engine()
    with _run_lock:
        result = engine(img)
    if result is None or result.txts is None:
        return ""
    # A plot's ticks and marks come back as stray symbols ("_", "|"): keep lines with a word or a number in them.
    lines = [" ".join(str(t).split()) for t, s in zip(result.txts, result.scores) if float(s) >= MIN_SCORE]
    return " ".join(line for line in lines if sum(ch.isalnum() for ch in line) >= 2)


def texts_in_boxes(pdf_path: Path, boxes: Sequence[tuple[int, Sequence[float] | None]], ocr: bool = True
                   ) -> list[str]:
    """For each (page index, 0-1000 box): the words inside it, in reading order; '' when there is no box, no
    such page or no PDF. The PDF is opened once for all boxes."""
    out = [""] * len(boxes)
    if not boxes or not Path(pdf_path).exists():
        return out
    import pymupdf

    try:
        pdf = pymupdf.open(pdf_path)
    except Exception as exc:  # a source MuPDF cannot open was already reported by parsing
        log.warning("cannot open %s for figure text: %s", pdf_path, exc)
        return out
    with pdf:
        for n, (page_idx, bbox) in enumerate(boxes):
            if not bbox or len(bbox) != 4 or not (0 <= page_idx < pdf.page_count):
                continue
            page = pdf[page_idx]
            rect = _rect(page, bbox)
            if rect.is_empty:
                continue
            text = " ".join(page.get_text("text", clip=rect, sort=True).split())
            if not text and ocr and min(rect.width, rect.height) >= MIN_OCR_SIDE_PT:
                try:
                    text = _ocr_clip(page, rect)
                except Exception as exc:  # OCR is a bonus: an item without it still gets a description
                    log.warning("OCR of a figure on page %d failed: %s", page_idx + 1, exc)
            out[n] = text
    return out
