"""What the pages show of a parsed document: page images with the parser's boxes, crops around search hits,
item listings. Paper content is untrusted: the only HTML built here (the legend) is escaped; see
core/text/safe_markdown.py for text and markdown."""
from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from PIL import Image, ImageDraw

from core.content.content_list import MalformedContentList
from core.content.pages import load_items, page_image_path
from core.library import Library
from core.schema.records import ContentItem, SearchHit
from core.text.plain import plain_text
from core.text.tables import table_text

# Box colours by item type. Headings are text items with a level; they get their own colour because "did the
# parser see my section headings?" is the first question a user asks of a page.
TYPE_COLOURS: dict[str, tuple[int, int, int]] = {
    "heading": (214, 39, 40),
    "text": (31, 119, 180),
    "list": (23, 190, 207),
    "table": (44, 160, 44),
    "image": (255, 127, 14),
    "equation": (148, 103, 189),
    "code": (140, 86, 75),
    "algorithm": (140, 86, 75),
    "page_footnote": (188, 189, 34),
    "aside_text": (227, 119, 194),
    "header": (127, 127, 127),
    "footer": (127, 127, 127),
    "page_number": (127, 127, 127),
    "discarded": (127, 127, 127),
}
OTHER_COLOUR = (90, 90, 90)
HIGHLIGHT_COLOUR = (230, 0, 126)


# ---------------------------------------------------------------------------------------------- items and boxes

def box_kind(item: ContentItem) -> str:
    return "heading" if item.is_heading else item.type


def colour_of(kind: str) -> tuple[int, int, int]:
    return TYPE_COLOURS.get(kind, OTHER_COLOUR)


def hex_colour(rgb: Sequence[int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb[:3])


def items_on_page(items: Iterable[ContentItem], page_idx: int) -> list[ContentItem]:
    return [i for i in items if i.page_idx == page_idx]


def legend(items: Iterable[ContentItem]) -> list[tuple[str, str, int]]:
    """(kind, hex colour, count) for the kinds present, most frequent first; items without a box are counted
    under their kind too, since the legend says what the parser found, drawn or not."""
    counts = Counter(box_kind(i) for i in items)
    return [(kind, hex_colour(colour_of(kind)), n) for kind, n in counts.most_common()]


def legend_html(entries: Sequence[tuple[str, str, int]], missing_boxes: int = 0) -> str:
    """A one-line HTML legend. Kinds come from the content list (untrusted), so every value is escaped."""
    chips = []
    for kind, colour, count in entries:
        if not re.fullmatch(r"#[0-9a-f]{6}", colour):
            colour = hex_colour(OTHER_COLOUR)
        chips.append(
            f'<span style="display:inline-block;margin:0 12px 4px 0;white-space:nowrap">'
            f'<span style="display:inline-block;width:12px;height:12px;border:2px solid {colour};'
            f'background:{colour}33;vertical-align:middle;margin-right:4px"></span>'
            f"{html.escape(kind)} ({int(count)})</span>")
    if missing_boxes:
        chips.append(f'<span style="color:#888">{int(missing_boxes)} item(s) without a box</span>')
    return '<div style="font-size:0.85rem;line-height:1.6">' + "".join(chips) + "</div>"


def _scaled_box(bbox: Sequence[float], size: tuple[int, int]) -> tuple[float, float, float, float] | None:
    """A 0-1000 page box in pixels, corners ordered and clamped to the image; None when it is degenerate."""
    if not bbox or len(bbox) != 4:
        return None
    w, h = size
    x0, y0, x1, y1 = (float(v) for v in bbox)
    x0, x1 = sorted((x0, x1))
    y0, y1 = sorted((y0, y1))
    box = (max(0.0, x0) * w / 1000, max(0.0, y0) * h / 1000, min(1000.0, x1) * w / 1000,
           min(1000.0, y1) * h / 1000)
    return box if box[2] > box[0] and box[3] > box[1] else None


# ---------------------------------------------------------------------------------------------- page images

def _open_rgb(path: Path) -> Image.Image:
    with Image.open(path) as img:
        return img.convert("RGB")


Boxes = Sequence[float] | Sequence[Sequence[float]] | None  # one 0-1000 box, several, or none


def as_boxes(boxes: Boxes) -> list[list[float]]:
    """One box or a list of boxes, as a list of boxes."""
    if not boxes:
        return []
    if all(isinstance(v, (int, float)) for v in boxes):
        return [[float(v) for v in boxes]] if len(boxes) == 4 else []
    return [[float(v) for v in b] for b in boxes if b and len(b) == 4]


def draw_boxes(img: Image.Image, items: Iterable[ContentItem], highlight: Boxes = None,
               width: int = 2) -> Image.Image:
    """Each item's box in its kind's colour over a translucent fill, then the highlight box(es) on top."""
    base = img.convert("RGBA")
    overlay = Image.new("RGBA", base.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    for item in items:
        box = _scaled_box(item.bbox or [], base.size)
        if box is None:
            continue
        r, g, b = colour_of(box_kind(item))
        draw.rectangle(box, fill=(r, g, b, 28), outline=(r, g, b, 255), width=width)
    for highlight_box in as_boxes(highlight):
        box = _scaled_box(highlight_box, base.size)
        if box is not None:
            pad = width * 2
            r, g, b = HIGHLIGHT_COLOUR
            draw.rectangle((box[0] - pad, box[1] - pad, box[2] + pad, box[3] + pad),
                           fill=(r, g, b, 24), outline=(r, g, b, 255), width=width + 2)
    return Image.alpha_composite(base, overlay).convert("RGB")


def page_image_with_boxes(lib: Library, doc_id: str, page_idx: int, items: Iterable[ContentItem],
                          highlight: Boxes = None) -> Image.Image:
    """The page with the boxes of `items` that lie on it, and optional highlight box(es) (0-1000 coords)."""
    img = _open_rgb(page_image_path(lib, doc_id, page_idx))
    return draw_boxes(img, items_on_page(items, page_idx), highlight)


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", (text or "").lower())


def _item_words(item: ContentItem) -> list[str]:
    text = item.text or " ".join(item.list_items)
    if item.type == "table" and item.table_body:
        text = f"{text} {table_text(item.table_body)}"
    return _words(f"{text} {item.caption} {item.footnote}")


def hit_boxes(lib: Library, hit: SearchHit) -> list[list[float]]:
    """`passage_boxes` over the hit's document; the hit's own box when its content list cannot be read."""
    try:
        items = load_items(lib, hit.chunk.doc_id)
    except MalformedContentList:
        items = []
    return passage_boxes(items, hit)


def passage_boxes(items: Sequence[ContentItem], hit: SearchHit) -> list[list[float]]:
    """The boxes of the items a search hit's passage was read from, on the hit's page, in reading order.

    The hit's own box is the union of its window's items; when the window runs from the foot of one column to
    the head of the next, that union covers most of the page. The chunk's items on the page whose words appear
    in the passage (a shared run of six words, or the whole of a shorter item) locate it more precisely."""
    passage = " " + " ".join(_words(hit.window_text)) + " "
    wanted = set(hit.chunk.item_indices)
    boxes = []
    for item in items:
        if item.index not in wanted or item.page_idx != hit.page or not item.bbox:
            continue
        words = _item_words(item)
        n = min(6, len(words))
        if n and any(" " + " ".join(words[i:i + n]) + " " in passage for i in range(len(words) - n + 1)):
            boxes.append(list(item.bbox))
    return boxes or as_boxes(hit.bbox)


def crop_hit(lib: Library, doc_id: str, page_idx: int, boxes: Boxes, margin: float = 30.0,
             min_height: float = 120.0, min_width: float = 420.0, max_height: float = 450.0) -> Image.Image:
    """The page region a search hit came from, with its box(es) drawn; the whole page when it has no box.

    The crop holds the boxes plus `margin`, at least `min_height` tall and `min_width` wide (0-1000 units), so
    a hit in one column shows that column large. When the boxes span more than `max_height` (a passage running
    into the next column), the crop starts where the passage starts, at the first box, and takes in the boxes
    that fit."""
    boxes = as_boxes(boxes)
    img = draw_boxes(_open_rgb(page_image_path(lib, doc_id, page_idx)), [], highlight=boxes)
    scaled = [b for b in (_scaled_box(box, img.size) for box in boxes) if b is not None]
    if not scaled:
        return img
    w, h = img.size
    # From the first box, take in the next ones while the region stays at most max_height tall.
    x0, y0, x1, y1 = scaled[0]
    for b in scaled[1:]:
        grown = (min(x0, b[0]), min(y0, b[1]), max(x1, b[2]), max(y1, b[3]))
        if grown[3] - grown[1] <= max_height * h / 1000:
            x0, y0, x1, y1 = grown
    y1 = min(y1, y0 + max_height * h / 1000)
    top, bottom = y0 - margin * h / 1000, y1 + margin * h / 1000
    short = min_height * h / 1000 - (bottom - top)
    if short > 0:
        top, bottom = top - short / 2, bottom + short / 2
    left, right = x0 - margin * w / 1000, x1 + margin * w / 1000
    narrow = min_width * w / 1000 - (right - left)
    if narrow > 0:
        left, right = left - narrow / 2, right + narrow / 2
    if left < 0:
        left, right = 0, right - left
    if right > w:
        left, right = left - (right - w), w
    if top < 0:
        top, bottom = 0, bottom - top
    if bottom > h:
        top, bottom = top - (bottom - h), h
    return img.crop((int(max(0, left)), int(max(0, top)), int(min(w, right)), int(min(h, bottom))))


def display_width(path: Path, max_width: int = 640) -> int:
    """The width to show an image at: its own, but never wider than `max_width` pixels."""
    try:
        with Image.open(path) as img:
            return max(1, min(img.width, max_width))
    except OSError:
        return max_width


# ---------------------------------------------------------------------------------------------- item listings

def item_rows(items: Iterable[ContentItem], text_chars: int = 300) -> dict[str, list[dict]]:
    """Items grouped by kind (most frequent kind first), one plain row each, for the Items tab."""
    groups: dict[str, list[dict]] = {}
    for item in items:
        text = " ".join(plain_text(item.text).split())  # the parser's Markdown and HTML, as read
        if not text and item.type == "table":
            text = " ".join(table_text(item.table_body).split()) if item.table_body else ""
        if not text and item.list_items:
            text = " · ".join(" ".join(plain_text(e).split()) for e in item.list_items)
        kind = box_kind(item)
        row = {"#": item.index, "page": item.page_idx + 1,
               "text": text[:text_chars] + ("…" if len(text) > text_chars else "")}
        if kind == "heading":
            row["level"] = item.text_level
        if item.captions or item.type in ("image", "table"):
            row["caption"] = plain_text(item.caption)[:text_chars]
        row["box"] = "yes" if _scaled_box(item.bbox or [], (1000, 1000)) else "no"
        groups.setdefault(kind, []).append(row)
    return dict(sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])))


def media_items(items: Iterable[ContentItem]) -> list[ContentItem]:
    """Figures and tables, in document order, for the Gallery tab."""
    return [i for i in items if i.type in ("image", "table")]


def parse_box_param(value: str | None) -> list[list[float]]:
    """Boxes passed in a URL ("x0,y0,x1,y1;x0,…", 0-1000); malformed ones are dropped."""
    boxes = []
    for part in str(value or "").split(";")[:50]:
        try:
            box = [float(v) for v in part.split(",")]
        except ValueError:
            continue
        if len(box) == 4 and all(0 <= v <= 1000 for v in box):
            boxes.append(box)
    return boxes


def box_param(boxes: Boxes) -> str:
    return ";".join(",".join(f"{v:.0f}" for v in box) for box in as_boxes(boxes))
