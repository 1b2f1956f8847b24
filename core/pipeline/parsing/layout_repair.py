"""Repairs of the MinerU flash tier's layout mistakes, from its own signals (item types, boxes, what repeats across
pages) checked against the PDF's text layer. The flash tier has no layout model: it

- reads a running header or footer set apart from the text as a display equation ("Optimized Table Tokenization
  for Table Structure Recognition 9" as Equation 1), which then becomes a chunk of its own and a top search hit;
- boxes a display equation together with the edge of a neighbouring line of body text, so the crop (and the box
  drawn on the page) shows "...loss function:" above the formula;
- writes a table cell holding values set on several lines as one glued token ("0.9650.969" for 0.965 / 0.969);
- merges a table's header cells or a row's numbers, or loses header rows: the grid is then rebuilt from the
  text layer (table_grid_repair.py).

Each repair only acts when the text layer confirms it, and keeps what was there otherwise.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from core.pipeline.parsing.table_grid_repair import GridCounts, repair_table_grid
from core.schema.records import ContentItem

CROP_DPI = 200  # the flash tier's own crop resolution
_MATH = set("=<>±∑∏∫√∂≤≥≈≠×÷→←↦∈∉∀∃∞∇λθϕψαβγδεσμπ^_{}|")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]+")
_NUMBERED = re.compile(r"^\s*\(?\d+[a-z]?\)?\s*$")
_CELL_TEXT = re.compile(r">([^<>]+)<")
TOP_BAND, BOTTOM_BAND = 200, 850  # a running header or footer lies in the top fifth or the bottom seventh


@dataclass
class RepairCounts:
    headers: int = 0  # equations that were a running header or footer
    crops: int = 0  # equation boxes that took in a neighbouring line, tightened
    cells: int = 0  # glued table tokens split
    grids: GridCounts = field(default_factory=GridCounts)  # damaged tables rebuilt from the text layer
    examples: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Line:
    box: tuple[float, float, float, float]  # 0-1000
    text: str


def repair_layout(items: list[ContentItem], pdf_path: Path, out_dir: Path) -> RepairCounts:
    """Repair `items` (MinerU's, in place) against the PDF; crops are re-cut into `out_dir`."""
    counts = RepairCounts()
    if not any(i.type in ("equation", "table") for i in items):
        return counts
    with pymupdf.open(pdf_path) as doc:
        pages = {i.page_idx for i in items if i.type in ("equation", "table") and i.bbox}
        lines = {p: _page_lines(doc[p]) for p in pages if p < doc.page_count}
        repeated = _repeated_texts(items, doc)
        for item in items:
            if not item.bbox or item.page_idx not in lines:
                continue
            if item.type == "equation":
                _repair_equation(item, items, doc[item.page_idx], lines[item.page_idx], repeated, out_dir, counts)
            elif item.type == "table" and item.table_body:
                _repair_cells(item, doc[item.page_idx], counts)  # first: a glued token is no lost word
                repair_table_grid(item, doc[item.page_idx], counts.grids)
    return counts


def _page_lines(page: pymupdf.Page) -> list[_Line]:
    width, height = page.rect.width, page.rect.height
    out = []
    for block in page.get_text("dict")["blocks"]:
        for line in block.get("lines", []):
            text = "".join(span["text"] for span in line["spans"]).strip()
            if text:
                x0, y0, x1, y1 = line["bbox"]
                out.append(_Line((x0 * 1000 / width, y0 * 1000 / height, x1 * 1000 / width, y1 * 1000 / height), text))
    return out


def _text_in(page: pymupdf.Page, box: list[float]) -> str:
    width, height = page.rect.width, page.rect.height
    rect = pymupdf.Rect(box[0] * width / 1000, box[1] * height / 1000, box[2] * width / 1000, box[3] * height / 1000)
    return " ".join(page.get_textbox(rect).split())


def _key(text: str) -> str:
    """A running header's text with its page number taken out: "Title 9" and "Title 10" are the same header."""
    return re.sub(r"\d+", "#", " ".join(text.lower().split()))


def _repeated_texts(items: list[ContentItem], doc: pymupdf.Document) -> set[str]:
    """Keys of equation texts found in the top or bottom band of two pages or more."""
    pages_of: dict[str, set[int]] = {}
    for item in items:
        if item.type == "equation" and item.bbox and _in_band(item.bbox) and item.page_idx < doc.page_count:
            pages_of.setdefault(_key(_text_in(doc[item.page_idx], item.bbox)), set()).add(item.page_idx)
    return {key for key, pages in pages_of.items() if key and len(pages) >= 2}


def _in_band(box: list[float]) -> bool:
    return box[3] <= TOP_BAND or box[1] >= BOTTOM_BAND


def reads_as_prose(text: str) -> bool:
    """Words, not a formula: no mathematical sign, and at least three words that make most of the text."""
    if any(ch in _MATH for ch in text):
        return False
    tokens = text.split()
    words = [t for t in tokens if _WORD.fullmatch(t.strip(".,:;()"))]
    return len(words) >= 3 and len(words) >= 0.6 * len([t for t in tokens if not _NUMBERED.match(t)])


def _is_running_line(item: ContentItem, items: list[ContentItem], text: str, repeated: set[str]) -> str:
    """"header" / "footer" when the equation is really a running header or footer, else ""."""
    box = item.bbox or []
    if not _in_band(box):
        return ""
    top = box[3] <= TOP_BAND
    furniture = {"header", "footer", "page_number", "page_footnote", "aside_text"}
    others = [i for i in items if i.page_idx == item.page_idx and i is not item and i.bbox and i.type not in furniture]
    outermost = all(o.bbox[1] >= box[3] - 2 for o in others) if top else all(o.bbox[3] <= box[1] + 2 for o in others)
    if not outermost:
        return ""
    if _key(text) in repeated or reads_as_prose(text):
        return "header" if top else "footer"
    return ""


def _repair_equation(item: ContentItem, items: list[ContentItem], page: pymupdf.Page, lines: list[_Line],
                     repeated: set[str], out_dir: Path, counts: RepairCounts) -> None:
    text = _text_in(page, item.bbox)
    running = _is_running_line(item, items, text, repeated)
    if running:
        counts.headers += 1
        counts.examples.append(f"p{item.page_idx + 1} equation → {running}: {text[:60]}")
        item.type, item.text, item.img_path, item.text_format = running, text, "", ""
        return
    tightened = tightened_box(item, items, lines)
    if tightened is not None and tightened != item.bbox:
        counts.crops += 1
        counts.examples.append(f"p{item.page_idx + 1} equation box {item.bbox} → {tightened}")
        item.bbox = tightened
        target = (out_dir / item.img_path).resolve() if item.img_path else None
        if target is not None and target.is_relative_to(Path(out_dir).resolve()):
            _recrop(page, tightened, target)


def is_prose_line(text: str) -> bool:
    """A line of running text ("using the following loss function:"), not a piece of a formula ("i,j witjxi,j")
    nor code: three words or more, half of its tokens at least."""
    tokens = text.split()
    words = [t for t in tokens if re.fullmatch(r"[A-Za-z][a-z'’-]+", t.strip(".,:;()"))]
    return len(words) >= 3 and len(words) >= 0.5 * len(tokens)


def neighbour_lines(item: ContentItem, items: list[ContentItem], lines: list[_Line]) -> list[_Line]:
    """Lines of body text the equation's box takes in: a line of prose whose centre lies in a text item's box (so
    the text item holds it), that overlaps the equation's box across and by more than a third of its height down."""
    box = item.bbox or []
    texts = [i.bbox for i in items if i.page_idx == item.page_idx and i.type == "text" and i.bbox]
    found = []
    for line in lines:
        x0, y0, x1, y1 = line.box
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        if min(x1, box[2]) - max(x0, box[0]) <= 0:
            continue
        down = min(y1, box[3]) - max(y0, box[1])
        if down <= (y1 - y0) / 3 or not is_prose_line(line.text):
            continue
        if any(t[0] <= cx <= t[2] and t[1] <= cy <= t[3] for t in texts):
            found.append(line)
    return found


def tightened_box(item: ContentItem, items: list[ContentItem], lines: list[_Line]) -> list[float] | None:
    """The equation's box without the neighbouring lines at its top or bottom edge, or None when a neighbour lies
    in its middle (then the box is not a loose crop but a wrong one: left as it is)."""
    x0, y0, x1, y1 = item.bbox or [0, 0, 0, 0]
    middle = (y0 + y1) / 2
    new_y0, new_y1 = y0, y1
    for line in neighbour_lines(item, items, lines):
        ly0, ly1 = line.box[1], line.box[3]
        if (ly0 + ly1) / 2 < middle:
            new_y0 = max(new_y0, ly1)
        else:
            new_y1 = min(new_y1, ly0)
    if new_y1 - new_y0 < 0.4 * (y1 - y0):
        return None
    return [x0, float(math.ceil(new_y0)), x1, float(math.floor(new_y1))]  # outward of the lines, not onto them


def _recrop(page: pymupdf.Page, box: list[float], target: Path) -> None:
    width, height = page.rect.width, page.rect.height
    clip = pymupdf.Rect(box[0] * width / 1000, box[1] * height / 1000, box[2] * width / 1000, box[3] * height / 1000)
    target.parent.mkdir(parents=True, exist_ok=True)
    page.get_pixmap(clip=clip, dpi=CROP_DPI).save(str(target), jpg_quality=95)


def _repair_cells(item: ContentItem, page: pymupdf.Page, counts: RepairCounts) -> None:
    width, height = page.rect.width, page.rect.height
    b = item.bbox or []
    clip = pymupdf.Rect(b[0] * width / 1000 - 2, b[1] * height / 1000 - 2, b[2] * width / 1000 + 2,
                        b[3] * height / 1000 + 2)
    words = Counter(w[4] for w in page.get_text("words", clip=clip))
    if not words:
        return
    split = 0

    def cell(match: re.Match) -> str:
        nonlocal split
        tokens = []
        for token in match.group(1).split(" "):
            pieces = split_glued(token, words)
            split += pieces is not None
            tokens.append(" ".join(pieces) if pieces else token)
        return ">" + " ".join(tokens) + "<"

    body = _CELL_TEXT.sub(cell, item.table_body)
    if split:
        counts.cells += split
        counts.examples.append(f"p{item.page_idx + 1} table: {split} glued cell values split")
        item.table_body = body


def split_glued(token: str, words: Counter) -> list[str] | None:
    """`token` as two or more words of the table's text layer written together ("0.9650.969" → 0.965, 0.969), or
    None when it is a word there itself or no such reading exists. Of several readings, the one in fewest pieces."""
    if len(token) < 3 or token in words or "&" in token:
        return None
    best: list[list[str] | None] = [None] * (len(token) + 1)
    best[0] = []
    for end in range(1, len(token) + 1):
        for start in range(end):
            head, piece = best[start], token[start:end]
            if (len(piece) < 2 and not piece.isdigit()) or head is None:  # a stray letter is no reading
                continue
            if end < len(token) and piece.endswith(("-", "\u2010")):  # "S2ORC-" + "SCIBERT": a word hyphenated
                continue                                                # at a line end, joined rightly
            if piece in words and (best[end] is None or len(head) + 1 < len(best[end])):
                best[end] = [*head, piece]
    pieces = best[len(token)]
    return pieces if pieces and len(pieces) >= 2 else None
