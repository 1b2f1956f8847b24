"""Reading and writing MinerU content lists.

MinerU's content_list.json is PaperGraph's parse record whichever backend produced it. magic-pdf 1.x spelled
image captions `img_caption`/`img_footnote`; mineru >= 2 writes `image_caption`/`image_footnote`; both are read.
Unknown item types (header, footer, page_number, aside_text...) are kept so nothing a parser found is lost.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from core.schema.records import ContentItem
from core.text.safe_json import JsonLimitError, load_untrusted_json
from core.text.text_tables import is_html, text_table_html
from core.text.unicode import valid_unicode

_MODELLED = {
    "type", "page_idx", "text", "text_level", "bbox", "img_path", "image_caption", "img_caption",
    "image_footnote", "img_footnote", "table_caption", "table_footnote", "table_body", "text_format",
    "sub_type", "list_items", "papergraph_source",
}


# A content list is untrusted when imported: page_idx beyond these becomes a "10^12-page document" otherwise.
MAX_PAGES = 10_000  # when the caller knows no better bound (the PDF's real page count or the max-pages setting)
MAX_CONTENT_LIST_BYTES = 256 * 2**20  # a 2,000-page paper's content list is a few tens of MB


TEXT_TABLE_KEY = "papergraph_table_text"  # a table the parser wrote as laid-out text, as it wrote it


class MalformedContentList(ValueError):
    """The file is not a content list PaperGraph can read; the message says where and why."""


def _page_idx(value: Any, index: int, max_pages: int) -> int:
    """A non-negative integer below `max_pages`: MinerU writes ints; integral floats and digit strings pass."""
    if isinstance(value, str) and re.fullmatch(r"[0-9]{1,18}", value.strip()):
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, float):
        raise MalformedContentList(f"item {index} has a page_idx that is not a whole number: {value}")
    if isinstance(value, bool) or not isinstance(value, int):
        raise MalformedContentList(f"item {index} has a non-numeric page_idx {str(value)[:40]!r}")
    if value < 0:
        raise MalformedContentList(f"item {index} has a negative page_idx")
    if value >= max_pages:
        shown = str(value) if value < 10**15 else f"{float(value):.3g}"
        raise MalformedContentList(f"item {index} has page_idx {shown}, but the document has at most "
                                   f"{max_pages} page{'s' if max_pages != 1 else ''}")
    return value


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [str(v) for v in value if v is not None and str(v).strip()]
    return [str(value)]


def _bbox(value: Any) -> list[float] | None:
    if isinstance(value, (list, tuple)) and len(value) == 4:
        try:
            return [float(v) for v in value]
        except (TypeError, ValueError):
            return None
    return None


def item_from_dict(raw: dict[str, Any], index: int, max_pages: int = MAX_PAGES) -> ContentItem:
    if not isinstance(raw, dict):
        raise MalformedContentList(f"item {index} is a {type(raw).__name__}, not an object")
    kind = raw.get("type")
    if not isinstance(kind, str) or not kind:
        raise MalformedContentList(f"item {index} has no 'type'")
    page_idx = _page_idx(raw.get("page_idx", 0), index, max_pages)
    if kind == "image":
        captions = _strings(raw.get("image_caption", raw.get("img_caption")))
        footnotes = _strings(raw.get("image_footnote", raw.get("img_footnote")))
    else:
        captions = _strings(raw.get("table_caption"))
        footnotes = _strings(raw.get("table_footnote"))
    try:
        level = int(raw.get("text_level") or 0)
    except (TypeError, ValueError, OverflowError):
        level = 0
    text = raw.get("text")
    text = valid_unicode(text if isinstance(text, str) else "" if text is None else str(text))
    extra = {k: v for k, v in raw.items() if k not in _MODELLED}
    body = str(raw.get("table_body") or "")
    if kind == "table" and body.strip() and not is_html(body):
        # MinerU's flash tier writes some tables as laid-out text: read into rows and columns (the text as
        # written is kept beside it, so a better reading later loses nothing).
        extra.setdefault(TEXT_TABLE_KEY, body)
        body = text_table_html(body) or body
    return ContentItem(
        type=kind,
        page_idx=page_idx,
        index=index,
        text=text,
        text_level=level,
        bbox=_bbox(raw.get("bbox")),
        img_path=str(raw.get("img_path") or ""),
        captions=captions,
        footnotes=footnotes,
        table_body=body,
        text_format=str(raw.get("text_format") or ""),
        sub_type=str(raw.get("sub_type") or ""),
        list_items=_strings(raw.get("list_items")),
        source=str(raw.get("papergraph_source") or ""),
        extra=extra,
    )


def item_to_dict(item: ContentItem) -> dict[str, Any]:
    """Write an item back in mineru >= 2 spelling, omitting empty fields as MinerU does."""
    out: dict[str, Any] = {"type": item.type}
    if item.text or item.type in ("text", "equation"):
        out["text"] = item.text
    if item.text_level:
        out["text_level"] = item.text_level
    if item.type == "image":
        out["img_path"] = item.img_path
        out["image_caption"] = item.captions
        out["image_footnote"] = item.footnotes
    elif item.type == "table":
        out["img_path"] = item.img_path
        out["table_caption"] = item.captions
        out["table_footnote"] = item.footnotes
        out["table_body"] = item.table_body
    elif item.img_path:
        out["img_path"] = item.img_path
    if item.text_format:
        out["text_format"] = item.text_format
    if item.sub_type:
        out["sub_type"] = item.sub_type
    if item.list_items:
        out["list_items"] = item.list_items
    out.update(item.extra)
    if item.bbox is not None:
        out["bbox"] = item.bbox
    out["page_idx"] = item.page_idx
    if item.source:
        out["papergraph_source"] = item.source
    return out


def parse_content_list(data: Any, max_pages: int = MAX_PAGES) -> list[ContentItem]:
    if not isinstance(data, list):
        raise MalformedContentList(f"a content list is a JSON array of items, not a {type(data).__name__}")
    return [item_from_dict(raw, i, max_pages) for i, raw in enumerate(data)]


def load_content_list(path: Path, max_pages: int = MAX_PAGES) -> list[ContentItem]:
    """The items of a content list file; `max_pages` bounds page_idx (the PDF's page count when it is known)."""
    path = Path(path)
    if path.stat().st_size > MAX_CONTENT_LIST_BYTES:
        raise MalformedContentList(f"{path.name} is {path.stat().st_size / 2**20:.0f} MB, more than the "
                                   f"{MAX_CONTENT_LIST_BYTES // 2**20} MB a content list may be")
    try:
        data = load_untrusted_json(path.read_text(encoding="utf-8"), max_chars=MAX_CONTENT_LIST_BYTES)
    except UnicodeDecodeError as exc:
        raise MalformedContentList(f"{path.name} is not UTF-8 text") from exc
    except json.JSONDecodeError as exc:
        raise MalformedContentList(f"{path.name} is not valid JSON: {exc.msg} at line {exc.lineno}") from exc
    except JsonLimitError as exc:
        raise MalformedContentList(f"{path.name} cannot be read: {exc}") from None
    return parse_content_list(data, max_pages)


def save_content_list(items: list[ContentItem], path: Path) -> None:
    Path(path).write_text(json.dumps([item_to_dict(i) for i in items], ensure_ascii=False, indent=1),
                          encoding="utf-8")


def renumber(items: list[ContentItem]) -> list[ContentItem]:
    for i, item in enumerate(items):
        item.index = i
    return items
