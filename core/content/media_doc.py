"""A paper's tables, figures and equations with their current descriptions: what the Gallery shows and the graph's
media entities read; core/pipeline/media/describe.py writes the descriptions."""
from __future__ import annotations

from dataclasses import dataclass

from core.content.media_items import fingerprint, is_media, media_labels
from core.content.pages import load_items
from core.library import Library
from core.schema.media import OFFLINE, VLM, Description
from core.schema.records import ContentItem


@dataclass
class MediaDoc:
    """A paper's tables, figures and equations, labelled, with their current descriptions."""

    doc_id: str
    items: list[ContentItem]
    labels: dict[int, str]
    stored: dict[int, dict[str, Description]]

    @property
    def media(self) -> list[ContentItem]:
        return [i for i in self.items if is_media(i)]

    def current(self, item: ContentItem) -> Description | None:
        """The VLM's description when it has one for this very item, else the offline one."""
        rows = self.stored.get(item.index, {})
        fp = fingerprint(item)
        vlm = rows.get(VLM)
        if vlm and vlm.text and vlm.fingerprint == fp:
            return vlm
        offline = rows.get(OFFLINE)
        return offline if offline and offline.fingerprint == fp else None


def load_media_doc(lib: Library, doc_id: str, items: list[ContentItem] | None = None) -> MediaDoc:
    if items is None:
        items = load_items(lib, doc_id)
    return MediaDoc(doc_id, list(items), media_labels(items), lib.descriptions.by_doc(doc_id))
