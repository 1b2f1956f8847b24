"""Markdown from a content list, for backends that do not write their own and for pages OCR replaced.

It follows MinerU's own markdown: headings as #/##, figures as image links followed by their caption, simple
tables as pipe tables (HTML kept when cells span rows or columns), page furniture left out.
"""
from __future__ import annotations

from html.parser import HTMLParser

from core.schema.records import ContentItem

_SKIPPED = {"header", "footer", "page_number", "aside_text", "discarded"}


class _TableReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.spans = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
            if any(k in ("rowspan", "colspan") and v not in (None, "1") for k, v in attrs):
                self.spans = True

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.rows:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def html_table_to_markdown(html: str) -> str | None:
    """A pipe table, or None when the table cannot be drawn as one (merged cells, ragged rows)."""
    reader = _TableReader()
    try:
        reader.feed(html)
    except Exception:  # malformed HTML from an imported file: keep it verbatim
        return None
    rows = [r for r in reader.rows if r]
    if reader.spans or not rows or len({len(r) for r in rows}) != 1:
        return None
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"
    return "\n".join([line(rows[0]), line(["---"] * len(rows[0]))] + [line(r) for r in rows[1:]])


def _item_markdown(item: ContentItem) -> str:
    text = item.text.strip()
    if item.type == "text":
        if item.text_level:
            return "#" * min(item.text_level, 6) + " " + " ".join(text.split()) if text else ""
        return text
    if item.type == "list":
        entries = item.list_items or ([text] if text else [])
        return "\n".join(e if e.lstrip().startswith(("-", "*", "•")) else f"- {e}" for e in entries)
    if item.type == "image":
        parts = [f"![]({item.img_path})" if item.img_path else "", item.caption, item.footnote]
        return "\n\n".join(p for p in parts if p)
    if item.type == "table":
        body = html_table_to_markdown(item.table_body) if item.table_body else None
        body = body or item.table_body or (f"![]({item.img_path})" if item.img_path else "")
        return "\n\n".join(p for p in (item.caption, body, item.footnote) if p)
    if item.type == "equation":
        if text:
            return text if text.startswith("$$") else f"$$\n{text}\n$$"
        return f"![]({item.img_path})" if item.img_path else ""
    if item.type in ("code", "algorithm"):
        # mineru >= 2 writes code_body / code_caption, which content_list keeps in `extra`.
        body = text or str(item.extra.get("code_body") or "") or "\n".join(item.list_items)
        caption = item.caption or " ".join(_strings(item.extra.get("code_caption")))
        return "\n\n".join(p for p in (caption, f"```\n{body.rstrip()}\n```" if body else "") if p)
    if item.type == "chart":
        caption = " ".join(_strings(item.extra.get("chart_caption")))
        return "\n\n".join(p for p in (f"![]({item.img_path})" if item.img_path else "", caption) if p)
    if item.type == "index":
        return "\n".join(item.list_items)
    return text


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value if v] if isinstance(value, list) else []


def to_markdown(items: list[ContentItem]) -> str:
    blocks = [_item_markdown(i) for i in items if i.type not in _SKIPPED]
    return "\n\n".join(b for b in blocks if b.strip()) + "\n"
