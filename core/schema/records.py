"""The records that flow through PaperGraph: content items, documents, chunks and search hits."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class IllegalTransition(ValueError):
    """A status write the state machine does not allow: a bug in the caller, never a user error."""


# StrEnum: the values are what SQLite stores, and an f-string or format() shows the value, not "DocStatus.READY".
class DocStatus(StrEnum):
    """A document's ingest: queued → parsing → indexing → ready | failed. Retry queues a ready or failed
    document again; recovery queues again one whose worker died while parsing or indexing."""

    QUEUED = "queued"
    PARSING = "parsing"
    INDEXING = "indexing"
    READY = "ready"
    FAILED = "failed"

    @property
    def in_progress(self) -> bool:
        return self in (DocStatus.QUEUED, DocStatus.PARSING, DocStatus.INDEXING)

    def can_become(self, other: DocStatus) -> bool:
        return other in _DOC_MOVES[self]


_DOC_MOVES = {
    DocStatus.QUEUED: {DocStatus.PARSING},  # a worker claims it
    DocStatus.PARSING: {DocStatus.INDEXING, DocStatus.FAILED, DocStatus.QUEUED},  # queued: its worker died
    DocStatus.INDEXING: {DocStatus.READY, DocStatus.FAILED, DocStatus.QUEUED},
    DocStatus.READY: {DocStatus.QUEUED},  # retry
    DocStatus.FAILED: {DocStatus.QUEUED},  # retry
}


class GraphStatus(StrEnum):
    """A ready paper's graph stage: pending → extracting → done | failed. Any state may go back to pending (a
    retry, a cleared graph, a new parse of the paper) or to NONE (its ingest failed: it has no graph); an
    extraction that is paused or whose worker died goes back to pending."""

    NONE = ""  # the graph stage was never queued for this paper
    PENDING = "pending"
    EXTRACTING = "extracting"
    DONE = "done"
    FAILED = "failed"

    @property
    def in_progress(self) -> bool:
        return self in (GraphStatus.PENDING, GraphStatus.EXTRACTING)

    def can_become(self, other: GraphStatus) -> bool:
        return other in _GRAPH_MOVES[self]


_GRAPH_MOVES = {
    GraphStatus.NONE: {GraphStatus.NONE, GraphStatus.PENDING},  # NONE → NONE: a first ingest that failed
    GraphStatus.PENDING: {GraphStatus.PENDING, GraphStatus.EXTRACTING, GraphStatus.NONE},
    GraphStatus.EXTRACTING: {GraphStatus.PENDING, GraphStatus.DONE, GraphStatus.FAILED, GraphStatus.NONE},
    GraphStatus.DONE: {GraphStatus.PENDING, GraphStatus.NONE},
    GraphStatus.FAILED: {GraphStatus.PENDING, GraphStatus.NONE},
}


# Item types that carry the paper's content; the rest (running headers, page numbers...) are kept but not indexed.
CONTENT_TYPES = ("text", "list", "table", "image", "equation", "code", "algorithm")
MEDIA_TYPES = ("table", "image", "equation")


@dataclass
class ContentItem:
    """One item of MinerU's content_list.json, with both spellings of its fields read into one."""

    type: str
    page_idx: int
    index: int = 0  # position in the document's content list
    text: str = ""
    text_level: int = 0  # 1 = title / top heading, 2 = section heading, 0 = body
    bbox: list[float] | None = None  # 0-1000 page coordinates: x0, y0, x1, y1
    img_path: str = ""
    captions: list[str] = field(default_factory=list)
    footnotes: list[str] = field(default_factory=list)
    table_body: str = ""  # HTML
    text_format: str = ""  # equations: latex / image
    sub_type: str = ""  # list items: e.g. "reference"
    list_items: list[str] = field(default_factory=list)
    source: str = ""  # which backend wrote this item: mineru / ocr / builtin / import
    extra: dict[str, Any] = field(default_factory=dict)  # fields we do not model, kept for round trips

    @property
    def is_heading(self) -> bool:
        return self.type == "text" and self.text_level > 0

    @property
    def caption(self) -> str:
        return " ".join(c for c in self.captions if c).strip()

    @property
    def footnote(self) -> str:
        return " ".join(c for c in self.footnotes if c).strip()


@dataclass
class Document:
    id: str  # sha256 of the PDF's bytes
    filename: str
    title: str = ""
    status: DocStatus = DocStatus.QUEUED
    message: str = ""
    pages: int = 0
    backend: str = ""
    size_bytes: int = 0
    created_at: float = 0.0
    updated_at: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    item_counts: dict[str, int] = field(default_factory=dict)
    chunk_count: int = 0
    warnings: list[str] = field(default_factory=list)
    # The graph stage runs after a document is ready (searchable).
    graph_status: GraphStatus = GraphStatus.NONE
    graph_message: str = ""

    @property
    def display_title(self) -> str:
        return self.title or self.filename


@dataclass
class Chunk:
    id: str
    doc_id: str
    index: int
    kind: str  # text, or the media type (table / image / equation) for an item chunk
    text: str
    pages: list[int]
    item_indices: list[int]
    section: str = ""
    tokens: int = 0


@dataclass
class SearchHit:
    chunk: Chunk
    score: float  # cosine similarity of the best-matching window
    window_text: str  # the passage that matched
    page: int  # page of the matched passage (0-based)
    bbox: list[float] | None  # union box of the matched items on that page, 0-1000
    doc_title: str = ""
