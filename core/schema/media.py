"""What is known of a table, figure or equation beyond its parsed item: its description and the entities a VLM named."""
from __future__ import annotations

from dataclasses import dataclass, field

OFFLINE = "offline"
VLM = "vlm"
OFFLINE_NOTE = "assembled from the parsed text, not written by a vision-language model"


@dataclass
class MediaEntity:
    name: str
    type: str
    description: str = ""


@dataclass
class Description:
    doc_id: str
    item_index: int
    fingerprint: str
    source: str  # offline | vlm
    text: str
    model: str = ""  # the VLM's name ("openai:llava"); "" offline
    entities: list[MediaEntity] = field(default_factory=list)
    message: str = ""  # what went wrong (broken JSON, a failed call), for the gallery
    created_at: float = 0.0

    @property
    def by_vlm(self) -> bool:
        return self.source == VLM

    @property
    def note(self) -> str:
        return f"written by {self.model}" if self.by_vlm else OFFLINE_NOTE
