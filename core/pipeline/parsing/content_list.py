"""Reading and writing MinerU content lists.

MinerU's content_list.json is PaperGraph's parse record whichever backend produced it. magic-pdf 1.x spelled
image captions `img_caption`/`img_footnote`; mineru >= 2 writes `image_caption`/`image_footnote`; both are read.
Unknown item types (header, footer, page_number, aside_text...) are kept so nothing a parser found is lost.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.schema.records import ContentItem

_MODELLED = {
    "type", "page_idx", "text", "text_level", "bbox", "img_path", "image_caption", "img_caption",
    "image_footnote", "img_footnote", "table_caption", "table_footnote", "table_body", "text_format",
    "sub_type", "list_items", "papergraph_source",
}


class MalformedContentList(ValueError):
    """The file is not a content list PaperGraph can read; the message says where and why."""


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


def item_from_dict(raw: dict[str, Any], index: int) -> ContentItem:
    if not isinstance(raw, dict):
        raise MalformedContentList(f"item {index} is a {type(raw).__name__}, not an object")
    kind = raw.get("type")
    if not isinstance(kind, str) or not kind:
        raise MalformedContentList(f"item {index} has no 'type'")
    try:
        page_idx = int(raw.get("page_idx", 0))
    except (TypeError, ValueError) as exc:
        raise MalformedContentList(f"item {index} has a non-numeric page_idx {raw.get('page_idx')!r}") from exc
    if page_idx < 0:
        raise MalformedContentList(f"item {index} has a negative page_idx")
    if kind == "image":
        captions = _strings(raw.get("image_caption", raw.get("img_caption")))
        footnotes = _strings(raw.get("image_footnote", raw.get("img_footnote")))
    else:
        captions = _strings(raw.get("table_caption"))
        footnotes = _strings(raw.get("table_footnote"))
    try:
        level = int(raw.get("text_level") or 0)
    except (TypeError, ValueError):
        level = 0
    text = raw.get("text")
    if not isinstance(text, str):
        text = "" if text is None else str(text)
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
        table_body=str(raw.get("table_body") or ""),
        text_format=str(raw.get("text_format") or ""),
        sub_type=str(raw.get("sub_type") or ""),
        list_items=_strings(raw.get("list_items")),
        source=str(raw.get("papergraph_source") or ""),
        extra={k: v for k, v in raw.items() if k not in _MODELLED},
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


def parse_content_list(data: Any) -> list[ContentItem]:
    if not isinstance(data, list):
        raise MalformedContentList(f"a content list is a JSON array of items, not a {type(data).__name__}")
    return [item_from_dict(raw, i) for i, raw in enumerate(data)]


def load_content_list(path: Path) -> list[ContentItem]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise MalformedContentList(f"{Path(path).name} is not UTF-8 text") from exc
    except json.JSONDecodeError as exc:
        raise MalformedContentList(f"{Path(path).name} is not valid JSON: {exc.msg} at line {exc.lineno}") from exc
    return parse_content_list(data)


def save_content_list(items: list[ContentItem], path: Path) -> None:
    Path(path).write_text(json.dumps([item_to_dict(i) for i in items], ensure_ascii=False, indent=1),
                          encoding="utf-8")


def renumber(items: list[ContentItem]) -> list[ContentItem]:
    for i, item in enumerate(items):
        item.index = i
    return items
