"""OCR of one PDF page with RapidOCR 3.x (its models ship in the wheel, so it works offline).

The engine takes ~1 s to load and is shared: one per process, created on first use by the process's resource
registry, whose per-key lock matters because Streamlit may parse from several threads and onnxruntime sessions
are not meant to be built concurrently.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
import pymupdf

from core.models.registry import resources, thread_budget
from core.pipeline.parsing.layout import Box

MIN_SCORE = 0.5  # RapidOCR's own default cut-off for recognised text

_run_lock = threading.Lock()


@dataclass
class OcrLine:
    box: Box  # page coordinates (points)
    text: str
    score: float


def get_engine() -> Any:
    """The process's one engine (core.models.registry), loaded on first use."""
    return resources.get(("ocr", "rapidocr"), _load_engine)


def _load_engine() -> Any:
    from rapidocr import RapidOCR  # imported here: onnxruntime is slow to import and often unused

    # The 180-degree line classifier flips ordinary upright lines now and then ("sampling, which
    # stalls" came back as "samid se ss"); scans are upright far more often than upside down.
    # The process's share of the cores (a compute worker has one): onnxruntime would otherwise start a thread per
    # core in every worker, and two workers' spinning threads on two cores burn CPU for nothing.
    engine = RapidOCR(params={"Global.log_level": "warning", "Global.use_cls": False,
                              "EngineConfig.onnxruntime.intra_op_num_threads": thread_budget(),
                              "EngineConfig.onnxruntime.inter_op_num_threads": 1})
    logging.getLogger("RapidOCR").setLevel(logging.WARNING)
    return engine


def _page_array(page: pymupdf.Page, dpi: int) -> tuple[np.ndarray, float]:
    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csRGB, alpha=False)
    img = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, pix.n)
    return img, pix.width / page.rect.width


def ocr_page(page: pymupdf.Page, dpi: int) -> list[OcrLine]:
    """Text lines found on the rendered page, in page coordinates, low-confidence lines dropped."""
    img, scale = _page_array(page, dpi)
    engine = get_engine()
    with _run_lock:  # one page at a time: onnxruntime already uses every core for one image
        result = engine(img)
    if result is None or result.boxes is None or result.txts is None:
        return []
    lines = []
    x_off, y_off = page.rect.x0, page.rect.y0
    for quad, text, score in zip(result.boxes, result.txts, result.scores):
        text = " ".join(str(text).split())
        if not text or float(score) < MIN_SCORE:
            continue
        xs, ys = [float(p[0]) for p in quad], [float(p[1]) for p in quad]
        box = (x_off + min(xs) / scale, y_off + min(ys) / scale, x_off + max(xs) / scale, y_off + max(ys) / scale)
        lines.append(OcrLine(box, text, float(score)))
    return lines
