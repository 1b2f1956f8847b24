"""The text around an item, within a token budget: what the paper says about a table or figure is usually in
the paragraphs beside it, on the same page, or in the section that refers to it."""
from __future__ import annotations

from collections.abc import Sequence

from core.content.media_items import caption_label
from core.schema.records import MEDIA_TYPES, ContentItem
from core.text.tokens import approx_tokens

_SKIPPED = {"header", "footer", "page_number", "discarded", "page_footnote", "aside_text"} | set(MEDIA_TYPES)


def _text(item: ContentItem) -> str:
    text = "\n".join(item.list_items) if item.list_items else item.text
    return " ".join((text or "").split())


def surrounding_text(items: Sequence[ContentItem], target: ContentItem, max_tokens: int) -> str:
    """Text items of the target's page (and the pages beside it when the page is short), nearest first in
    reading order until `max_tokens` is spent, then given back in document order. Paragraphs that name the
    item's label ("Table 2") are taken first, wherever they are in the paper."""
    if max_tokens <= 0:
        return ""
    label = caption_label(target.caption).lower()
    candidates = [i for i in items if i.type not in _SKIPPED and _text(i) and abs(i.page_idx - target.page_idx) <= 1]
    referring = [i for i in items if label and i.type not in _SKIPPED and label in _text(i).lower()]

    def distance(i: ContentItem) -> tuple[int, int]:
        return (abs(i.page_idx - target.page_idx), abs(i.index - target.index))

    chosen: dict[int, ContentItem] = {}
    used = 0
    for item in referring + sorted(candidates, key=distance):
        if item.index in chosen:
            continue
        cost = approx_tokens(_text(item))
        if used + cost > max_tokens:
            if not chosen:  # one long paragraph: its start is still the best context there is
                chosen[item.index] = ContentItem(type=item.type, page_idx=item.page_idx, index=item.index,
                                                 text=_text(item)[:max_tokens * 4])
            break
        chosen[item.index] = item
        used += cost
    return "\n".join(_text(chosen[k]) for k in sorted(chosen))
