"""A description of a table, figure or equation, and the text its chunk is made of.

Offline (no VLM) the description is assembled from what the parser read: the table's rows as "column: value",
the text inside the figure's box, the equation's text, the footnote. It is marked as such wherever it is shown.
"""
from __future__ import annotations

from core.content.media_items import kind_name
from core.schema.records import ContentItem
from core.text.tables import table_records

MAX_DESCRIPTION_CHARS = 4000  # a large table's rows: ~1,000 tokens, a chunk's worth


def _cap(text: str, limit: int = MAX_DESCRIPTION_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit].rsplit("\n", 1)[0] + "\n(… more rows not shown)"


def offline_description(item: ContentItem, label: str, inner_text: str = "") -> str:
    """What the parser read of the item, in words: never empty (an item with nothing readable says so)."""
    parts: list[str] = []
    if item.type == "table":
        rows = table_records(item.table_body) if item.table_body else []
        if rows:
            parts.append(f"{label} has {len(rows)} rows:")
            parts.extend(rows)
        elif inner_text:
            parts.append(f"Text in the table (kept as an image by the parser): {inner_text}")
    elif item.type == "image":
        figure_text = inner_text or str(item.extra.get("content") or "").strip()
        if figure_text:
            parts.append(f"Text in the figure: {figure_text}")
    elif item.type == "equation":
        equation = (item.text or "").strip() or inner_text
        if equation:
            parts.append(f"Equation: {equation}")
    if item.footnote:
        parts.append(f"Note: {item.footnote}")
    if not parts:
        parts.append(f"{kind_name(item.type).lower()} on page {item.page_idx + 1}; the parser read no text in it")
    return _cap("\n".join(parts))


def chunk_text(item: ContentItem, label: str, description: str) -> str:
    """The item's chunk: its caption (or its label and page when it has none), then its description."""
    head = item.caption or f"{label} (page {item.page_idx + 1})"
    return f"{head}\n{description.strip()}".strip()
