"""The storage contracts, in the spirit of LightRAG's BaseKVStorage / BaseVectorStorage / DocStatusStorage.

Pipelines and pages talk to these protocols only, so a backend (SQLite, Chroma embedded or server, later a
graph store) can be swapped by writing one file.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from core.schema.graph import GraphEdge, GraphNode
from core.schema.records import Chunk, DocStatus, Document


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

    def delete(self, ids: Sequence[str]) -> None: ...

    def get_embeddings(self, ids: Sequence[str]) -> dict[str, np.ndarray]: ...

    def all_ids(self) -> list[str]: ...

    def get_documents(self, ids: Sequence[str]) -> dict[str, str]:
        """The stored text of each id that exists."""

    def update_metadata(self, ids: Sequence[str], metadatas: Sequence[dict[str, Any]]) -> None:
        """Change metadata without re-embedding."""

    def fetch(self, ids: Sequence[str]) -> list[tuple[VectorMatch, np.ndarray]]:
        """Stored records by id, with their vectors; ids that do not exist are skipped."""

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

    def claim_graph_next(self, worker: str) -> Document | None:
        """Atomically take the oldest ready document whose graph stage is pending."""

    def graph_progress(self) -> dict[str, tuple[str, float]]: ...

    def graph_workers(self) -> dict[str, str]:
        """Worker id of every document whose graph is being extracted, for crash recovery."""


class GraphStore(Protocol):
    """The merged entity graph (LightRAG's BaseGraphStorage). Edges are keyed by (source, target): RELATED edges
    are undirected with source < target, MENTIONED_IN edges go from an entity to a paper node."""

    def get_node(self, key: str) -> GraphNode | None: ...

    def get_nodes(self, keys: Iterable[str]) -> dict[str, GraphNode]: ...

    def get_edge(self, source: str, target: str) -> GraphEdge | None: ...

    def get_edges(self, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], GraphEdge]: ...

    def node_edges(self, key: str) -> list[GraphEdge]: ...

    def edges_of(self, keys: Iterable[str]) -> list[GraphEdge]:
        """Every edge touching any of the keys, each once."""

    def degrees(self, keys: Iterable[str]) -> dict[str, int]: ...

    def apply(self, upsert_nodes: Sequence[GraphNode] = (), upsert_edges: Sequence[GraphEdge] = (),
              delete_nodes: Sequence[str] = (), delete_edges: Sequence[tuple[str, str]] = ()) -> None:
        """One atomic batch: either all of it is visible afterwards or none of it. Deleting a node deletes
        its edges."""

    def set_communities(self, assignment: dict[str, int | None]) -> None: ...

    def counts(self) -> tuple[int, int]:
        """Nodes and edges."""

    def all_nodes(self) -> Iterator[GraphNode]: ...

    def all_edges(self) -> Iterator[GraphEdge]: ...

    def edge_outline(self) -> Iterator[tuple[str, str, str, float]]:
        """(source, target, relation, weight) of every edge: what a whole-graph view needs, without the
        descriptions and provenance lists that make `all_edges` several times slower."""

    def clear(self) -> None: ...
