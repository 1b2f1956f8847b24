"""The builtin parser: MinerU's content-list schema from PyMuPDF alone, for when mineru is off or fails."""
from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import pymupdf

from core.pipeline.parsing.builtin_media import (
    DENSE_PATHS,
    Media,
    find_figures,
    find_tables,
    overlap_share,
    save_crop,
    vector_boxes,
)
from core.pipeline.parsing.builtin_text import CAPTION, TextBlock, body_size, furniture_type, is_heading, page_blocks
from core.pipeline.parsing.layout import Box, reading_order, to_1000
from core.pipeline.parsing.result import IMAGES_DIR, ParseError
from core.schema.records import ContentItem

ABSTRACT = re.compile(r"^abstract\b", re.IGNORECASE)
TITLE_RATIO = 1.25  # the title is set at least this much larger than the body text
CAPTION_REACH = 0.12  # of the page height: how far a caption may sit from its figure or table


def _caption_kind(block: TextBlock) -> str:
    m = CAPTION.match(block.text)
    if not m or (m.group("sep") is None and len(block.text.split()) > 3):
        return ""  # "Table 1 reports..." is a sentence, not a caption
    return "table" if m.group("kind").lower().startswith("tab") else "image"


def _gap(block: Box, media: Box) -> float:
    below, above = block[1] - media[3], media[1] - block[3]
    return max(below, above)


def _attach_captions(blocks: list[TextBlock], media: list[Media], page_h: float) -> set[int]:
    """Give each figure/table its nearest caption; return the indices of blocks used as captions."""
    used: set[int] = set()
    for m in sorted(media, key=lambda m: m.box[1]):
        best, best_gap = None, CAPTION_REACH * page_h
        for i, b in enumerate(blocks):
            if i in used or _caption_kind(b) != m.kind:
                continue
            if min(b.box[2], m.box[2]) - max(b.box[0], m.box[0]) <= 0:
                continue
            gap = _gap(b.box, m.box)
            if -5 <= gap < best_gap:
                best, best_gap = i, gap
        if best is not None:
            used.add(best)
            m.captions.append(blocks[best].text)
    return used


def _title_indices(blocks: list[TextBlock], body: float, page_h: float) -> set[int]:
    top = [i for i, b in enumerate(blocks)
           if b.box[3] < page_h * 0.45 and not b.vertical and b.size >= body * TITLE_RATIO
           and not CAPTION.match(b.text) and len(b.text) < 300]
    if not top:
        return set()
    biggest = max(blocks[i].size for i in top)
    return {i for i in top if blocks[i].size >= biggest - 0.5}


def _display(page: pymupdf.Page, box: Box) -> Box:
    """PyMuPDF reports boxes in unrotated page space; items (and crops) use the page as it is shown."""
    if not page.rotation:
        return box
    return tuple(pymupdf.Rect(box) * page.rotation_matrix)


def _page_items(page: pymupdf.Page, blocks: list[TextBlock], body: float, out_dir: Path) -> list[ContentItem]:
    w, h, p = page.rect.width, page.rect.height, page.number
    layout_h = (page.rect * page.derotation_matrix).height  # blocks are in unrotated page space

    def bbox(box: Box) -> list[float]:
        return to_1000(_display(page, box), w, h)

    paths = vector_boxes(page)
    dense = paths if len(paths) > DENSE_PATHS else None
    tables = find_tables(page) if dense is None else []
    figure_captions = [b.box for b in blocks if _caption_kind(b) == "image"]
    media = tables + find_figures(page, tables, figure_captions, dense)
    blocks = [b for b in blocks if not any(overlap_share(b.box, m.box) > 0.6 for m in media)]
    captions = _attach_captions(blocks, media, layout_h)
    titles = _title_indices(blocks, body, layout_h) if p == 0 else set()
    abstract_top = min((b.box[1] for b in blocks if p == 0 and ABSTRACT.match(b.text)), default=-1.0)
    furniture: list[ContentItem] = []
    elements: list[tuple[Box, ContentItem]] = []
    for i, b in enumerate(blocks):
        if i in captions:
            continue
        kind = furniture_type(b, layout_h)
        item = ContentItem(type=kind or "text", page_idx=p, text=b.text, bbox=bbox(b.box), source="builtin")
        if kind:
            furniture.append(item)
            continue
        front_matter = b.box[3] <= abstract_top  # authors and affiliations are often bold or large
        item.text_level = 1 if i in titles else 2 if is_heading(b, body) and not front_matter else 0
        elements.append((b.box, item))
    for k, m in enumerate(media):
        rel = f"{IMAGES_DIR}/page_{p}_{m.kind}_{k}.jpg"
        crop = save_crop(page, _display(page, m.box), out_dir, rel)
        item = ContentItem(type=m.kind, page_idx=p, bbox=bbox(m.box), captions=m.captions,
                           table_body=m.table_body, img_path=crop, source="builtin")
        elements.append((m.box, item))
    ordered = [elements[i][1] for i in reading_order([e[0] for e in elements])]
    headers = [f for f in furniture if f.type == "header"]
    return headers + ordered + [f for f in furniture if f.type != "header"]


def _merge_titles(items: list[ContentItem]) -> list[ContentItem]:
    """A title set over several blocks becomes one level-1 heading."""
    out: list[ContentItem] = []
    for item in items:
        prev = out[-1] if out else None
        if prev and prev.text_level == 1 and item.text_level == 1 and prev.page_idx == item.page_idx:
            prev.text = f"{prev.text} {item.text}"
            if prev.bbox and item.bbox:
                prev.bbox = [min(prev.bbox[0], item.bbox[0]), min(prev.bbox[1], item.bbox[1]),
                             max(prev.bbox[2], item.bbox[2]), max(prev.bbox[3], item.bbox[3])]
            continue
        out.append(item)
    return out


def parse_builtin(pdf_path: Path, out_dir: Path, *, progress: Callable[[str], None],
                  deadline: float | None = None, pages: set[int] | None = None) -> list[ContentItem]:
    """The content list of the PDF, or of the pages (indexes from 0) named in `pages`."""
    items: list[ContentItem] = []
    with pymupdf.open(pdf_path) as doc:
        all_blocks = [page_blocks(page) for page in doc]
        body = body_size(all_blocks)
        for page in doc:
            if pages is not None and page.number not in pages:
                continue
            if deadline is not None and time.monotonic() > deadline:
                raise ParseError(f"parsing stopped at page {page.number + 1} of {doc.page_count}: "
                                 "it exceeded the time limit (timeout in the parsing settings)")
            if page.number % 10 == 0:
                progress(f"PyMuPDF: page {page.number + 1} of {doc.page_count}")
            items.extend(_page_items(page, all_blocks[page.number], body, out_dir))
    return _merge_titles(items)
