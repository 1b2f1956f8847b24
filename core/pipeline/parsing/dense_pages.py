"""Pages drawn with so many vector marks that MinerU's flash tier cannot be given them.

Measured on the stress PDF (../shared/corpus/stress, 14 pages): page 6 holds 92,680 filled vector paths (a scatter
plot drawn mark by mark), page 7 27,307. Parsed alone, page 7 takes MinerU 64 s and 1.6 GB; page 6 grows past any
cap (3 GB in 86 s; 19.5 GB in 20 minutes when unbounded). The growth is in MinerU's vector-formula grouping
(docvortex `_connect_vector_path_members`): it keeps a set of every pair of marks that share a grid cell, which
is quadratic in the marks per cell. The other 12 pages take 8.8 s and 0.26 GB together. Counting a page's
drawings with MuPDF's bbox log is cheap (1.3 s for page 6, milliseconds for an ordinary page).
"""
from __future__ import annotations

from pathlib import Path

import pymupdf


def vector_path_counts(pdf_path: Path) -> list[int]:
    """How many vector paths (fills and strokes) each page draws, in page order."""
    with pymupdf.open(pdf_path) as doc:
        return [sum(1 for kind, _box in page.get_bboxlog() if "path" in kind) for page in doc]


def dense_pages(pdf_path: Path, limit: int) -> dict[int, int]:
    """Page index → vector paths, for the pages drawing more than `limit` (0: none are too dense)."""
    if limit <= 0:
        return {}
    try:
        counts = vector_path_counts(pdf_path)
    except Exception:  # MuPDF cannot read it: check_pdf has let it through, MinerU may still manage
        return {}
    return {index: n for index, n in enumerate(counts) if n > limit}


def page_range_without(pages: int, skipped: set[int]) -> str:
    """MinerU's page-range syntax ("1-5,8-14", numbered from 1) for every page but the skipped indexes."""
    parts: list[str] = []
    index = 0
    while index < pages:
        if index in skipped:
            index += 1
            continue
        end = index
        while end + 1 < pages and end + 1 not in skipped:
            end += 1
        parts.append(f"{index + 1}" if end == index else f"{index + 1}-{end + 1}")
        index = end + 1
    return ",".join(parts)
