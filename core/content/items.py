"""An item's searchable words: what chunking indexes, what the reader and the graph's extractors read."""
from __future__ import annotations

import re

from core.schema.records import ContentItem
from core.text.tables import table_text


def media_text(item: ContentItem) -> str:
    """The searchable text of a table, figure or equation: its caption, its footnote and what it contains."""
    parts = [item.caption]
    if item.type == "table":
        parts.append(table_text(item.table_body))
    elif item.type == "image":
        parts.append(str(item.extra.get("content") or ""))  # mineru puts text found inside figures here
    elif item.type == "equation":
        parts.append(item.text)
    parts.append(item.footnote)
    return "\n".join(p.strip() for p in parts if p and p.strip())


_INLINE_MARKUP = re.compile(r"</?(?:sup|sub|b|i|em|strong|span)[^>]*>|\*\*")


def item_text(item: ContentItem) -> str:
    """An item's words without the inline markup mineru keeps (`<sup>1</sup>`, `**bold**`)."""
    text = "\n".join(item.list_items) if item.type == "list" and item.list_items else item.text
    if item.type in ("code", "algorithm") and not text.strip():
        # mineru >= 2 puts a code block's text in code_body and its caption in code_caption.
        caption = item.extra.get("code_caption") or []
        caption = " ".join(caption) if isinstance(caption, list) else str(caption)
        text = "\n".join(p for p in (caption, str(item.extra.get("code_body") or "")) if p.strip())
    return _INLINE_MARKUP.sub("", text).strip()
