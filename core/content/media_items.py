"""What a table, figure or equation item is called: its label ("Table 2"), its kind's name, the paper's short
title, the graph entity's name ("Table 2 — TableFormer") and a fingerprint that changes when the item does."""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable

from core.schema.records import MEDIA_TYPES, ContentItem

KIND_NAMES = {"table": "Table", "image": "Figure", "equation": "Equation"}
# Captions start with their label in nearly every paper: "Table 2:", "Fig. 3.", "Figure 4 |", "TABLE II".
_CAPTION_LABEL = re.compile(r"^\s*(?P<word>table|tab\.|figure|fig\.|equation|eq\.)\s*"
                            r"(?P<num>(?:[A-Z]\.)?\d+(?:\.\d+)?[a-z]?|[IVXLC]+\b)", re.IGNORECASE)
_WORDS = {"table": "Table", "tab.": "Table", "figure": "Figure", "fig.": "Figure", "equation": "Equation",
          "eq.": "Equation"}
# LaTeX equation numbers: \tag{3}, or "(3)" at the end of the text layer's line.
_EQ_TAG = re.compile(r"\\tag\{\s*([^{}]{1,8})\s*\}|\(\s*(\d{1,3}[a-z]?)\s*\)\s*$")
ENTITY_NAME_SEP = " — "


def is_media(item: ContentItem) -> bool:
    return item.type in MEDIA_TYPES


def kind_name(item_type: str) -> str:
    return KIND_NAMES.get(item_type, item_type.capitalize())


def caption_label(caption: str) -> str:
    """'Table 2' from 'Table 2: Results on GLUE.'; '' when the caption does not start with a label."""
    m = _CAPTION_LABEL.match(caption or "")
    if not m:
        return ""
    return f"{_WORDS[m.group('word').lower()]} {m.group('num')}"


def media_labels(items: Iterable[ContentItem], equation_text: dict[int, str] | None = None) -> dict[int, str]:
    """Item index → label for every table, figure and equation: from its caption when it says one, else its
    kind and its rank among the items of that kind ("Figure 3" for the third figure). Labels are unique in a
    paper: a second item claiming one (a table continued on the next page) gets " (2)"."""
    labels: dict[int, str] = {}
    seen: dict[str, int] = {}
    ranks: dict[str, int] = {}
    for item in items:
        if not is_media(item):
            continue
        ranks[item.type] = ranks.get(item.type, 0) + 1
        label = caption_label(item.caption)
        if not label and item.type == "equation":
            m = _EQ_TAG.search(item.text or (equation_text or {}).get(item.index, ""))
            if m:
                label = f"Equation ({m.group(1) or m.group(2)})"
        label = label or f"{kind_name(item.type)} {ranks[item.type]}"
        seen[label] = seen.get(label, 0) + 1
        labels[item.index] = label if seen[label] == 1 else f"{label} ({seen[label]})"
    return labels


def short_title(title: str, max_chars: int = 40) -> str:
    """The part of a title a reader would say: before a colon ("TableFormer: Table Structure…" → "TableFormer"),
    else its first words."""
    title = " ".join((title or "").split())
    head = re.split(r"\s*[:—–|]\s+|\s+-\s+", title, maxsplit=1)[0]
    if 2 <= len(head) <= max_chars:
        return head
    words, out = title.split(), ""
    for word in words:
        if len(out) + len(word) + 1 > max_chars:
            break
        out = f"{out} {word}".strip()
    return out or title[:max_chars] or "untitled"


def entity_name(label: str, paper_title: str) -> str:
    return f"{label}{ENTITY_NAME_SEP}{short_title(paper_title)}"


def fingerprint(item: ContentItem) -> str:
    """Changes when what a description is made from changes (a re-parse that moved or re-read the item)."""
    payload = [item.type, item.page_idx, item.caption, item.footnote, item.table_body, item.text, item.img_path,
               [round(v) for v in item.bbox] if item.bbox else None]
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode("utf-8")).hexdigest()[:24]
