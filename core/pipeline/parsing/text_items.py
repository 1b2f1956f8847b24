"""Content items built by the text-document readers (Markdown, HTML, plain text): MinerU's shapes, no boxes."""
from __future__ import annotations

import html

from core.schema.records import ContentItem

TEXT_SOURCE = "text"  # ContentItem.source of every item a text document yields


def squash(text: str) -> str:
    return " ".join(text.split())


def heading(text: str, level: int) -> ContentItem:
    return ContentItem(type="text", page_idx=0, text=squash(text), text_level=max(1, min(level, 6)),
                       source=TEXT_SOURCE)


def paragraph(text: str) -> ContentItem:
    return ContentItem(type="text", page_idx=0, text=text.strip(), source=TEXT_SOURCE)


def list_item(entries: list[str]) -> ContentItem:
    return ContentItem(type="list", page_idx=0, list_items=[squash(e) for e in entries if e.strip()],
                       source=TEXT_SOURCE)


def code(text: str) -> ContentItem:
    return ContentItem(type="code", page_idx=0, text=text.rstrip("\n"), source=TEXT_SOURCE)


def table(rows: list[list[str]], header: bool = True) -> ContentItem:
    """A table item with MinerU's HTML table_body; every cell is escaped text (the reader kept no markup)."""
    lines = []
    for n, cells in enumerate(rows):
        tag = "th" if header and n == 0 else "td"
        lines.append("<tr>" + "".join(f"<{tag}>{html.escape(squash(c))}</{tag}>" for c in cells) + "</tr>")
    return ContentItem(type="table", page_idx=0, table_body="<table>" + "".join(lines) + "</table>",
                       source=TEXT_SOURCE)


def has_words(item: ContentItem) -> bool:
    return bool(item.text.strip() or item.list_items or item.table_body)


def normalise_levels(items: list[ContentItem]) -> list[ContentItem]:
    """Shift heading levels so the shallowest is 1: a note whose top headings are `##` still gets its first heading
    as the title and its sections as level-1/2 chunk boundaries, as a paper's title and sections are."""
    levels = [i.text_level for i in items if i.is_heading]
    shift = min(levels) - 1 if levels else 0
    for item in items:
        if item.is_heading:
            item.text_level -= shift
    return items
