"""Each table's label and caption as the paper prints them. MinerU gives two tables set side by side one caption
holding both ("Table 5: Results on A. Table 6: Results on B.") and the first table none: the caption is split
between them, so each table reads its own dataset and is labelled as printed (core.content's labels would call
them "Table 5" by rank and "Table 5 (2)")."""
from __future__ import annotations

import re
from collections.abc import Sequence

from core.content.media_items import caption_label, media_labels
from core.schema.records import ContentItem

_CAPTION_START = re.compile(r"(?=(?<!\S)Table\s+[A-Z]?\d+[a-z]?\s*[:.|])")


def _parts(caption: str) -> list[str]:
    return [p.strip() for p in _CAPTION_START.split(caption or "") if p.strip()]


def table_captions(items: Sequence[ContentItem]) -> dict[int, tuple[str, str]]:
    """Item index → (label, caption) for every table item."""
    labels = media_labels(items)
    tables = [it for it in items if it.type == "table"]
    out = {it.index: (labels.get(it.index, ""), it.caption) for it in tables}
    for prev, cur in zip(tables, tables[1:]):
        parts = _parts(cur.caption)
        if len(parts) >= 2 and not prev.caption and prev.page_idx == cur.page_idx and caption_label(parts[0]):
            out[prev.index] = (caption_label(parts[0]), parts[0])
            out[cur.index] = (caption_label(parts[1]) or out[cur.index][0], " ".join(parts[1:]))
    printed = {caption_label(caption) for _, caption in out.values()} - {""}
    pages = {it.index: it.page_idx for it in tables}
    seen: dict[str, int] = {}
    for index, (label, caption) in out.items():
        # A printed label wins over a rank: a table without a caption takes "Table 1" only if no caption says it.
        name = caption_label(caption) or (label if label not in printed else f"Table on page {pages[index] + 1}")
        seen[name] = seen.get(name, 0) + 1
        out[index] = (name if seen[name] == 1 else f"{name} ({seen[name]})", caption)
    return out
