"""The storage contracts, in the spirit of LightRAG's BaseKVStorage / BaseVectorStorage / DocStatusStorage.

Pipelines and pages talk to these protocols only, so a backend (SQLite, Chroma embedded or server, later a
graph store) can be swapped by writing one file.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence

import numpy as np

from core.records import Chunk, DocStatus, Document


@dataclass
class VectorMatch:
    id: str
    score: float  # cosine similarity, higher is better
    document: str
    metadata: dict[str, Any]


class VectorStore(Protocol):
    def upsert(self, ids: Sequence[str], embeddings: np.ndarray, documents: Sequence[str],
               metadatas: Sequence[dict[str, Any]]) -> None: ...

    def query(self, embedding: np.ndarray, top_k: int, where: dict[str, Any] | None = None) -> list[VectorMatch]: ...

    def delete_doc(self, doc_id: str) -> None: ...

    def doc_ids(self) -> set[str]: ...

    def count(self) -> int: ...


class ChunkStore(Protocol):
    def put_doc_chunks(self, doc_id: str, chunks: Sequence[Chunk]) -> None:
        """Replace every chunk of a document in one transaction."""

    def get_many(self, ids: Sequence[str]) -> dict[str, Chunk]: ...

    def by_doc(self, doc_id: str) -> list[Chunk]: ...

    def sections(self) -> list[str]:
        """Every section heading that has chunks, for the section filter."""

    def delete_doc(self, doc_id: str) -> None: ...


class DocumentStore(Protocol):
    def get(self, doc_id: str) -> Document | None: ...

    def list(self) -> list[Document]: ...

    def ids_with_status(self, status: DocStatus) -> list[str]: ...

    def progress(self) -> dict[str, tuple[str, float]]:
        """Stage detail and fraction done of every document in progress."""

    def in_progress_workers(self) -> dict[str, str]:
        """Worker id of every document being parsed or indexed, for crash recovery."""

    def insert(self, doc: Document) -> bool:
        """False when a document with that id is already registered."""

    def update(self, doc_id: str, **fields: Any) -> None: ...

    def set_status(self, doc_id: str, status: DocStatus, message: str = "", **fields: Any) -> None: ...

    def claim_next(self, worker: str) -> Document | None:
        """Atomically move the oldest queued document to parsing for this worker."""

    def delete(self, doc_id: str) -> None: ...
