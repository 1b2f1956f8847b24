"""What the Results page shows beside a leaderboard row: the table the number was read from, cropped from its
page as the Gallery and Document pages crop a table (core.content.images.item_png)."""
from __future__ import annotations

from core.content.content_list import MalformedContentList
from core.content.images import item_png
from core.content.pages import load_items
from core.library import Library


def table_crop(lib: Library, doc_id: str, item_index: int) -> bytes | None:
    """PNG of the table item, or None when the paper has no such item any more (parsed again) or no image of it."""
    try:
        items = load_items(lib, doc_id)
    except (MalformedContentList, OSError):
        return None
    item = next((i for i in items if i.index == item_index), None)
    if item is None or item.type != "table":
        return None
    return item_png(lib, doc_id, item)
