"""Figures and tables of a page for the builtin parser: regions, crops, HTML table bodies."""
from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from core.pipeline.parsing.layout import Box

CROP_DPI = 150
MIN_FIGURE_PT = 30.0  # smaller pictures are logos, icons or bullets
MIN_VECTOR_FIGURE_PT = 60.0
MIN_FIGURE_SHARE = 0.01  # of the page area
FRAMED_WORDS = 60  # more words than this inside an uncaptioned picture or drawing: it is framed text
BACKGROUND_SHARE = 0.6  # a picture or frame this big holding most of the page's words is a background
# A page drawing more vector paths than this (a scatter plot drawn mark by mark) gets neither find_tables() nor
# cluster_drawings(): on page 6 of the stress PDF (92,680 paths) the first took 47 s and the second minutes. Its
# drawings are grouped on a coarse grid instead (grid_clusters), from MuPDF's cheap bbox log.
DENSE_PATHS = 20000
GRID_PT = 12.0  # drawings closer than about this are one figure


@dataclass
class Media:
    kind: str  # "image" or "table"
    box: Box
    table_body: str = ""
    captions: list[str] = field(default_factory=list)


def _area(b: Box) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def overlap_share(inner: Box, outer: Box) -> float:
    """Share of `inner`'s area that lies inside `outer`."""
    ix = (max(inner[0], outer[0]), max(inner[1], outer[1]), min(inner[2], outer[2]), min(inner[3], outer[3]))
    return _area(ix) / _area(inner) if _area(inner) else 0.0


def _merge_touching(boxes: list[Box], gap: float = 3.0) -> list[Box]:
    """Pictures tiled from strips or panels become one figure."""
    boxes = list(boxes)
    merged = True
    while merged:
        merged = False
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                a, b = boxes[i], boxes[j]
                if a[0] - gap <= b[2] and b[0] - gap <= a[2] and a[1] - gap <= b[3] and b[1] - gap <= a[3]:
                    boxes[i] = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
                    del boxes[j]
                    merged = True
                    break
            if merged:
                break
    return boxes


Word = tuple  # PyMuPDF "words" tuple: x0, y0, x1, y1, text, block_no, line_no, word_no


def _cell_text(words: list[Word], rect: tuple[float, float, float, float]) -> str:
    # Words by centre point, in PyMuPDF's line order. Table.extract() can scramble "91.4" into "914\n." on some
    # fonts, and page.get_textbox() walks every character of the page in Python (0.07 s per cell).
    x0, y0, x1, y1 = rect
    inside = [w for w in words if x0 <= (w[0] + w[2]) / 2 <= x1 and y0 <= (w[1] + w[3]) / 2 <= y1]
    return " ".join(w[4] for w in sorted(inside, key=lambda w: (w[5], w[6], w[7])))


def _table_html(words: list[Word], table) -> str | None:
    rows_html, filled, total = [], 0, 0
    for row in table.rows:
        cells = []
        for cell in row.cells:
            if cell is None:  # covered by the merged cell to its left
                if cells:
                    cells[-1][1] += 1
                continue
            text = _cell_text(words, cell)
            filled += bool(text)
            total += 1
            cells.append([text, 1])
        tds = "".join(f'<td colspan="{span}">{html.escape(t)}</td>' if span > 1 else f"<td>{html.escape(t)}</td>"
                      for t, span in cells)
        rows_html.append(f"<tr>{tds}</tr>")
    if table.row_count < 2 or table.col_count < 2 or filled < max(2, total // 3):
        return None  # a framed paragraph or an empty grid, not a table
    return "<table><tbody>" + "".join(rows_html) + "</tbody></table>"


def _has_rules(page: pymupdf.Page) -> bool:
    """find_tables() costs ~0.6 s a page and, on ../shared/corpus, found no table without ruling lines
    (booktabs tables have three): skip it on pages with fewer than two lines or rectangles."""
    count = 0
    for drawing in page.get_drawings():
        count += sum(1 for it in drawing["items"] if it[0] in ("l", "re"))
        if count >= 2:
            return True
    return False


def find_tables(page: pymupdf.Page) -> list[Media]:
    if not _has_rules(page):
        return []
    try:
        found = page.find_tables()
    except Exception:  # table detection is best effort; a page it chokes on still has its text
        return []
    out = []
    words = page.get_text("words") if found.tables else []
    for table in found.tables:
        body = _table_html(words, table)
        if body:
            out.append(Media("table", tuple(table.bbox), table_body=body))
    return out


def _words_inside(words: list[Word], box: Box) -> int:
    return sum(1 for w in words if box[0] <= (w[0] + w[2]) / 2 <= box[2] and box[1] <= (w[1] + w[3]) / 2 <= box[3])


def _captioned(b: Box, captions: list[Box], reach: float) -> bool:
    for c in captions:
        if min(b[2], c[2]) - max(b[0], c[0]) > 0 and -5 <= max(c[1] - b[3], b[1] - c[3]) < reach:
            return True
    return False


def vector_boxes(page: pymupdf.Page) -> list[Box]:
    """The boxes of the page's vector paths, fills and strokes (unrotated page space), from MuPDF's bbox log."""
    return [tuple(box) for kind, box in page.get_bboxlog() if "path" in kind]


def grid_clusters(boxes: list[Box], cell: float = GRID_PT) -> list[Box]:
    """Boxes grouped by the grid cells they touch (cells sharing a side join), each group's bounding box: linear
    in the boxes, where cluster_drawings() compares them pairwise."""
    owner: dict[tuple[int, int], int] = {}
    parent: list[int] = []

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for b in boxes:
        cells = [(x, y) for x in range(int(b[0] // cell), int(b[2] // cell) + 1)
                 for y in range(int(b[1] // cell), int(b[3] // cell) + 1)]
        if len(cells) > 10000:  # a page-sized frame or background: it would join everything
            continue
        for c in cells:
            if c in owner:
                continue
            owner[c] = len(parent)
            parent.append(len(parent))
            for n in ((c[0] - 1, c[1]), (c[0] + 1, c[1]), (c[0], c[1] - 1), (c[0], c[1] + 1)):
                if n in owner:
                    parent[find(owner[n])] = find(owner[c])
    groups: dict[int, list[float]] = {}
    for (x, y), i in owner.items():
        g = groups.setdefault(find(i), [x, y, x, y])
        g[0], g[1], g[2], g[3] = min(g[0], x), min(g[1], y), max(g[2], x), max(g[3], y)
    return [(g[0] * cell, g[1] * cell, (g[2] + 1) * cell, (g[3] + 1) * cell) for g in groups.values()]


def find_figures(page: pymupdf.Page, tables: list[Media], captions: list[Box],
                 dense: list[Box] | None = None) -> list[Media]:
    """Raster pictures and clusters of vector drawings, minus tables, page backgrounds and framed text.
    `captions` are the boxes of "Figure N" text blocks: a wordy drawing with a caption is still a figure.
    `dense`: the vector boxes of a page with more than DENSE_PATHS of them, grouped on a grid instead."""
    unrotated = page.rect * page.derotation_matrix  # PyMuPDF reports image and drawing boxes unrotated
    area = abs(unrotated)
    words = page.get_text("words")

    def big(b: Box, min_pt: float) -> bool:
        return b[2] - b[0] >= min_pt and b[3] - b[1] >= min_pt and _area(b) >= MIN_FIGURE_SHARE * area

    def holds_text(b: Box) -> bool:
        # Text over a "figure" means it is not one: a frame of lines around the whole page or a text box, a
        # page background, or the scan under an OCR'd ("sandwich") PDF's text layer. Treating those as figures
        # would swallow the paragraphs they hold.
        inside = _words_inside(words, b)
        if _area(b) > BACKGROUND_SHARE * area and inside >= 10 and inside >= 0.5 * len(words):
            return True
        return inside > FRAMED_WORDS and not _captioned(b, captions, 0.12 * unrotated.height)

    raster = [tuple(pymupdf.Rect(i["bbox"]) & unrotated) for i in page.get_image_info()]
    try:
        vector = grid_clusters(dense) if dense is not None else [tuple(r) for r in page.cluster_drawings()]
    except Exception:
        vector = []
    candidates = [b for b in raster if big(b, MIN_FIGURE_PT)]
    candidates += [b for b in vector if big(b, MIN_VECTOR_FIGURE_PT)]
    # Filtered before merging too, so a page frame does not absorb the real figures inside it.
    merged = _merge_touching([b for b in candidates if not holds_text(b)])
    return [Media("image", b) for b in merged if not holds_text(b) and not any(
        overlap_share(b, t.box) > 0.5 or overlap_share(t.box, b) > 0.8 for t in tables)]


def save_crop(page: pymupdf.Page, box: Box, out_dir: Path, rel_path: str) -> str:
    target = out_dir / rel_path
    target.parent.mkdir(parents=True, exist_ok=True)
    pix = page.get_pixmap(clip=pymupdf.Rect(box), dpi=CROP_DPI, alpha=False)
    pix.save(str(target), jpg_quality=85)
    return rel_path
