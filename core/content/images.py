"""The picture of a table, figure or equation as PNG bytes: MinerU's crop when it wrote one, else the item's
box cut from the rendered page. Used by the gallery, the VLM (as a data URL) and the answers' citations."""
from __future__ import annotations

import io
import logging
from pathlib import Path

from PIL import Image

from core.content.pages import PageImageUnavailable, load_items, page_image_path
from core.library import Library
from core.schema.records import MEDIA_TYPES, Chunk, ContentItem
from core.text.safe_markdown import safe_local_file

log = logging.getLogger(__name__)

MAX_SIDE = 1600  # pixels: enough to read a table's digits, small enough for a VLM request
CROP_MARGIN = 8.0  # 0-1000 page units around a box cut from the page


def _png(img: Image.Image) -> bytes:
    img = img.convert("RGB")
    if max(img.size) > MAX_SIDE:
        img.thumbnail((MAX_SIDE, MAX_SIDE))
    buffer = io.BytesIO()
    img.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def _parser_image(lib: Library, doc_id: str, item: ContentItem) -> Path | None:
    if not item.img_path:
        return None
    return safe_local_file(lib.workspace.parsed_dir(doc_id), item.img_path)


def _page_crop(lib: Library, doc_id: str, item: ContentItem) -> Image.Image | None:
    if not item.bbox or len(item.bbox) != 4:
        return None
    try:
        page = page_image_path(lib, doc_id, item.page_idx)
    except PageImageUnavailable:
        return None
    with Image.open(page) as img:
        w, h = img.size
        x0, y0, x1, y1 = item.bbox
        box = (max(0, (min(x0, x1) - CROP_MARGIN) * w / 1000), max(0, (min(y0, y1) - CROP_MARGIN) * h / 1000),
               min(w, (max(x0, x1) + CROP_MARGIN) * w / 1000), min(h, (max(y0, y1) + CROP_MARGIN) * h / 1000))
        if box[2] - box[0] < 2 or box[3] - box[1] < 2:
            return None
        return img.crop(tuple(int(v) for v in box)).convert("RGB")


def item_png(lib: Library, doc_id: str, item: ContentItem) -> bytes | None:
    """PNG bytes of the item, or None when there is neither an image file nor a page to cut it from."""
    path = _parser_image(lib, doc_id, item)
    if path is not None:
        try:
            with Image.open(path) as img:
                return _png(img)
        except OSError as exc:  # a truncated or unreadable crop: fall back to the page
            log.warning("unreadable item image %s: %s", path, exc)
    crop = _page_crop(lib, doc_id, item)
    return _png(crop) if crop is not None else None


def chunk_item(lib: Library, chunk: Chunk) -> ContentItem | None:
    """The table, figure or equation an item chunk was made from; None for a text chunk."""
    if chunk.kind not in MEDIA_TYPES or not chunk.item_indices:
        return None
    wanted = chunk.item_indices[0]
    return next((i for i in load_items(lib, chunk.doc_id) if i.index == wanted), None)


def item_image(lib: Library, chunk: Chunk) -> bytes | None:
    """PNG of the table/figure/equation an item chunk stands for (the parser's image file, else a crop of the
    page); None for a text chunk or when no image can be had (an import without its PDF)."""
    item = chunk_item(lib, chunk)
    return item_png(lib, chunk.doc_id, item) if item is not None else None
