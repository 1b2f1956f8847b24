"""What the Gallery page lists: every table, figure and equation of the ready papers, with its label, original
caption and generated description(s), filtered by paper, kind and words of caption or description."""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.content.media_doc import load_media_doc
from core.content.media_items import fingerprint, kind_name
from core.library import Library
from core.schema.media import OFFLINE, VLM, Description
from core.schema.records import ContentItem

KINDS = ("table", "image", "equation")


@dataclass
class GalleryEntry:
    doc_id: str
    doc_title: str
    item: ContentItem
    label: str
    offline: Description | None
    vlm: Description | None  # the VLM's description of this very item, or its failure message

    @property
    def kind(self) -> str:
        return kind_name(self.item.type)

    @property
    def current(self) -> Description | None:
        return self.vlm if self.vlm and self.vlm.text else self.offline

    def search_text(self) -> str:
        parts = [self.label, self.item.caption, self.item.footnote]
        parts += [d.text for d in (self.offline, self.vlm) if d]
        return " ".join(p for p in parts if p).lower()


def _words(query: str) -> list[str]:
    return re.findall(r"\w+", (query or "").lower())


def gallery_entries(lib: Library, doc_ids: Sequence[str] | None = None, kinds: Iterable[str] | None = None,
                    query: str = "") -> list[GalleryEntry]:
    """Entries in paper order then document order; `query` keeps those whose label, caption or descriptions
    hold every word of it."""
    wanted_kinds = set(kinds) if kinds else set(KINDS)
    words = _words(query)
    docs = [d for d in lib.documents.ready_papers() if not doc_ids or d.id in doc_ids]
    out = []
    for doc in sorted(docs, key=lambda d: d.display_title.lower()):
        media = load_media_doc(lib, doc.id)
        for item in media.media:
            if item.type not in wanted_kinds:
                continue
            rows = media.stored.get(item.index, {})
            fp = fingerprint(item)
            offline = rows.get(OFFLINE) if rows.get(OFFLINE) and rows[OFFLINE].fingerprint == fp else None
            vlm = rows.get(VLM) if rows.get(VLM) and rows[VLM].fingerprint == fp else None
            entry = GalleryEntry(doc.id, doc.display_title, item, media.labels[item.index], offline, vlm)
            if words:
                text = entry.search_text()
                if not all(w in text for w in words):
                    continue
            out.append(entry)
    return out


def kind_counts(entries: Iterable[GalleryEntry]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for e in entries:
        counts[e.kind] = counts.get(e.kind, 0) + 1
    return counts
