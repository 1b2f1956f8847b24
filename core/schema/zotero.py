"""What a Zotero data folder's database holds for an import, as plain records (read by core/store/sqlite_zotero.py,
turned into library papers by core/pipeline/metadata/zotero_import.py). Only what a paper needs: its fields by
Zotero's names, its creators in order, its attachments, its collections, whether it is in the trash."""
from __future__ import annotations

from dataclasses import dataclass, field

# itemAttachments.linkMode: a file Zotero keeps under storage/<attachment key>/, a URL snapshot kept there too, a
# file elsewhere that Zotero links to, a link to a web page, an image embedded in a note.
IMPORTED_FILE, IMPORTED_URL, LINKED_FILE, LINKED_URL, EMBEDDED_IMAGE = range(5)


@dataclass
class ZoteroAttachment:
    key: str  # the attachment item's own key: its file is storage/<key>/<name>
    path: str  # "storage:paper.pdf", an absolute path, or "attachments:relative/path"
    link_mode: int
    content_type: str
    deleted: bool = False


@dataclass
class ZoteroItem:
    item_id: int
    key: str
    item_type: str
    fields: dict[str, str] = field(default_factory=dict)  # Zotero field name → value (title, date, DOI, extra…)
    creators: list[tuple[str, str, str, int]] = field(default_factory=list)  # (type, first, last, fieldMode), ordered
    attachments: list[ZoteroAttachment] = field(default_factory=list)
    collections: set[int] = field(default_factory=set)
    deleted: bool = False  # in Zotero's trash


@dataclass
class ZoteroLibrary:
    items: list[ZoteroItem] = field(default_factory=list)  # regular items and standalone attachments
    collections: dict[int, tuple[str, int | None]] = field(default_factory=dict)  # id → (name, parent id)
    not_papers: dict[str, int] = field(default_factory=dict)  # notes, annotations… by type: counted, not imported
    locked: bool = False  # another program (Zotero, running) held the database locked: read from the copy
