"""The storage contracts, in the spirit of LightRAG's BaseKVStorage / BaseVectorStorage / DocStatusStorage.

Pipelines and pages talk to these protocols only, so a backend (SQLite, Chroma embedded or server, later a
graph store) can be swapped by writing one file. Nothing here names a backend's own types: filters are
VectorFilter, not Chroma's `where` dialect, and a store that cannot be reached raises StoreUnavailable.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from core.schema.graph import (
    ChunkExtraction,
    EntitySource,
    GraphEdge,
    GraphNode,
    PaperRecord,
    Reference,
    RelationSource,
)
from core.schema.metadata import PaperMetadata
from core.schema.overrides import Override
from core.schema.records import Chunk, DocStatus, Document, GraphStatus
from core.schema.references import CitationLink, ParsedReference


class StoreUnavailable(RuntimeError):
    """A store's server cannot be reached or refused the login (Chroma server, Neo4j); the message says what
    to check. Pages catch this one type whatever the backend."""


@dataclass(frozen=True)
class VectorFilter:
    """Which stored vectors a query may return, in metadata PaperGraph writes with every window. Each field
    is None for no constraint, or the allowed values: an empty list matches nothing."""

    doc_ids: Sequence[str] | None = None
    kinds: Sequence[str] | None = None  # text / table / image / equation
    sections: Sequence[str] | None = None  # exact section headings

    def matches_nothing(self) -> bool:
        return any(values is not None and len(values) == 0 for values in (self.doc_ids, self.kinds, self.sections))


@dataclass
class VectorMatch:
    id: str
    score: float  # cosine similarity, higher is better
    document: str
    metadata: dict[str, Any]


class VectorStore(Protocol):
    def upsert(self, ids: Sequence[str], embeddings: np.ndarray, documents: Sequence[str],
               metadatas: Sequence[dict[str, Any]]) -> None: ...

    def query(self, embedding: np.ndarray, top_k: int, filters: VectorFilter | None = None,
              among: Sequence[str] | None = None) -> list[VectorMatch]:
        """The top_k nearest records that pass the filters (and, with `among`, have one of these ids), best
        first."""

    def query_many(self, embeddings: np.ndarray, top_k: int, filters: VectorFilter | None = None
                   ) -> list[list[VectorMatch]]:
        """`query` for each row of `embeddings`, in as few calls to the store as it allows."""

    def delete_doc(self, doc_id: str) -> None: ...

    def delete_docs(self, doc_ids: Sequence[str]) -> None: ...

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

    def doc_counts(self) -> dict[str, int]:
        """doc id → records naming it (a window its paper; an entity or relation vector every paper in it)."""

    def count(self) -> int: ...


class ChunkStore(Protocol):
    def put_doc_chunks(self, doc_id: str, chunks: Sequence[Chunk]) -> None:
        """Replace every chunk of a document in one transaction."""

    def put_chunks_of_docs(self, chunks_by_doc: Mapping[str, Sequence[Chunk]]) -> None:
        """Replace every chunk of several documents in one transaction."""

    def get_many(self, ids: Sequence[str]) -> dict[str, Chunk]: ...

    def by_doc(self, doc_id: str) -> list[Chunk]: ...

    def sections(self) -> list[str]:
        """Every section heading that has chunks, for the section filter."""

    def delete_doc(self, doc_id: str) -> None: ...

    def doc_counts(self) -> dict[str, int]:
        """doc id → its number of chunks, for every document that has any."""


class DocumentStore(Protocol):
    """The registry of documents and their two status machines (DocStatus, GraphStatus in core.schema.records).
    Status writes are checked against the machines' transitions and raise IllegalTransition otherwise; callers
    name what they change (a status, a live stage), never a column."""

    def get(self, doc_id: str) -> Document | None: ...

    def list(self) -> list[Document]: ...

    def ready_papers(self) -> list[Document]:
        """The searchable papers (status ready), oldest first."""

    def ids_with_status(self, status: DocStatus) -> list[str]: ...

    def status_counts(self) -> dict[DocStatus, int]:
        """How many documents are in each status (absent: none): the sidebar's line on every full rerun of the
        app, without reading a row per document (the whole list is ~45 ms at 1,000 papers)."""

    def ready_titles(self) -> dict[str, str]:
        """Display title of every searchable paper by id, oldest first: a question's scope, without reading whole
        rows (45 ms per question at 1,000 papers for `ready_papers`)."""

    def progress(self) -> dict[str, tuple[str, float]]:
        """Stage detail and fraction done of every document in progress."""

    def in_progress_workers(self) -> dict[str, str]:
        """Worker id of every document being parsed or indexed, for crash recovery."""

    def insert(self, doc: Document) -> bool:
        """False when a document with that id is already registered."""

    def set_status(self, doc_id: str, status: DocStatus, message: str = "", *, graph: GraphStatus | None = None,
                   graph_detail: str = "", **fields: Any) -> None:
        """Move the ingest to `status` (and, with `graph`, the graph stage in the same write); `fields` are plain
        record fields (title, pages, backend, timings, item_counts, chunk_count, warnings)."""

    def set_graph_status(self, doc_id: str, status: GraphStatus, message: str = "", *, detail: str = "",
                         fraction: float | None = None, expect: GraphStatus | None = None, **fields: Any) -> bool:
        """Move the graph stage to `status`; with `expect`, only if it is still in that state. False when
        nothing was written."""

    def report_stage(self, doc_id: str, detail: str, fraction: float) -> None:
        """Live detail and fraction done of the ingest."""

    def report_stages(self, doc_ids: Sequence[str], detail: str, fraction: float) -> None:
        """The same live detail for several documents, in one write."""

    def report_graph_stage(self, doc_id: str, detail: str, fraction: float) -> None:
        """Live detail and fraction done of the graph stage."""

    def claim_next(self, worker: str) -> Document | None:
        """Atomically move the oldest queued document to parsing for this worker."""

    def delete(self, doc_id: str) -> None: ...

    def set_title(self, doc_id: str, title: str) -> None:
        """The display title, whatever the statuses (the paper's metadata changed: a refresh or a correction)."""

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

    def set_communities(self, assignment: dict[str, int | None], keep_others: bool = False) -> None:
        """Nodes' communities; the nodes it does not name lose theirs, unless `keep_others` (an incremental
        refresh names only the nodes of the communities it recomputed)."""

    def counts(self) -> tuple[int, int]:
        """Nodes and edges."""

    def has_nodes(self) -> bool:
        """Whether the graph has any node: checked at every question by the graph modes, so never a count."""

    def version(self) -> str:
        """A token that changes whenever the graph does (apply, set_communities, clear), cheap to read: caches of
        the whole graph (core.query.mention_index) check it at every question. SQLite counts its writes; Neo4j
        gives its counts for now, so there an edit that keeps both counts goes unseen until the graph sources'
        version moves (as every rebuild from them does)."""

    def all_nodes(self) -> Iterator[GraphNode]: ...

    def all_edges(self) -> Iterator[GraphEdge]: ...

    def edge_outline(self) -> Iterator[tuple[str, str, str, float]]:
        """(source, target, relation, weight) of every edge: what a whole-graph view needs, without the
        descriptions and provenance lists that make `all_edges` several times slower."""

    def clear(self) -> None: ...


class GraphSources(Protocol):
    """The provenance the merged graph is rebuilt from (core.pipeline.graph.merge): raw per-chunk extractions,
    per-chunk contributions to entities and relations, aliases from merges, the dirty set, paper records,
    bibliography entries, community reports and manual overrides. A change and the marking of what it touched
    commit together, so rebuilding the dirty set after a crash is enough."""

    # --- raw extractions, kept so the graph can be rebuilt without extracting again
    def extracted(self, doc_id: str, extractor: str) -> dict[str, str]:
        """chunk id → text hash of the chunks this extractor already did for the document."""

    def put_extraction(self, doc_id: str, ord_: int, sha: str, extraction: ChunkExtraction) -> None: ...

    def extractions(self, doc_id: str) -> list[tuple[int, ChunkExtraction]]: ...

    def forget_extractions(self, doc_id: str, keep_chunk_ids: Iterable[str] = ()) -> None: ...

    def clear(self, keep_extractions: bool = True) -> None:
        """Forget every contribution, alias, paper record and report (the graph is rebuilt from extractions)."""

    # --- contributions and the dirty set
    def replace_doc(self, doc_id: str, entities: Sequence[EntitySource], relations: Sequence[RelationSource],
                    paper: PaperRecord | None, references: Sequence[Reference] = (),
                    phrases: Sequence[tuple[str, str]] = ()) -> None:
        """Swap a document's contributions (None/empty: remove them) and mark everything touched, atomically;
        `phrases` are its (chunk id, phrase key) pairs, for retrieval only (core/store/sqlite_phrases.py)."""

    def dirty(self) -> tuple[list[str], list[tuple[str, str]]]:
        """Node keys and edge pairs whose merged form must be rebuilt."""

    def clear_dirty(self, nodes: Sequence[str], edges: Sequence[tuple[str, str]], upto: int | None = None) -> None:
        """Unmark; with `upto` (the `meta("version")` read before the sources were), only marks made up to it."""

    def mark_dirty(self, nodes: Iterable[str] = (), edges: Iterable[tuple[str, str]] = ()) -> None: ...

    # --- what each document left, for deletes and the garbage collector
    def doc_ids(self) -> set[str]:
        """Every document with an extraction, a contribution, a paper record or a bibliography entry."""

    def doc_row_counts(self, doc_ids: Iterable[str]) -> dict[str, int]:
        """Rows of these documents per kind: extractions, entity_sources, relation_sources, papers, references,
        phrases."""

    def entity_sources(self, keys: Iterable[str]) -> dict[str, list[EntitySource]]: ...

    def chunk_phrases(self) -> dict[str, list[str]]:
        """chunk id → every candidate phrase key its text mentions (terms or not): the retrieval walks' phrase
        layer, never shown. Empty for chunks of the LLM extractor and for graphs built before phrases existed."""

    def relation_sources(self, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], list[RelationSource]]: ...

    def has_sources(self, key: str) -> bool: ...

    def relation_pairs_of(self, key: str) -> list[tuple[str, str]]:
        """Every relation pair with a contribution touching `key` (whether or not its edge is in the graph)."""

    def docs_of(self, key: str) -> list[str]: ...

    def mentions(self, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], list[str]]:
        """(entity key, doc id) → the chunk ids of that document where the entity occurs."""

    # --- aliases from merges
    def aliases(self) -> dict[str, str]: ...

    def merge_keys(self, keys: Sequence[str], canonical: str) -> None:
        """Re-key every contribution of `keys` to `canonical` and remember the aliases."""

    # --- papers, references, community reports, metadata
    def papers(self, doc_ids: Iterable[str] | None = None) -> dict[str, PaperRecord]:
        """The graph's record of each paper (all, or those of `doc_ids`: a merge reads only the papers it
        touches, not the whole collection)."""

    def references(self, doc_id: str) -> list[Reference]: ...

    def put_community_reports(self, reports: Sequence[dict], version: str) -> None: ...

    def has_community_reports(self) -> bool: ...

    def community_reports(self) -> list[dict]: ...

    def meta(self, key: str, default: str = "") -> str: ...

    # --- manual edits
    def put_override(self, override: Override, nodes: Iterable[str] = (),
                     edges: Iterable[tuple[str, str]] = (), alias: tuple[str, str] | None = None) -> None:
        """Record an edit and mark what it changes dirty (and an alias a rename brings), in one transaction."""

    def remove_override(self, kind: str, a: str, b: str, field: str, nodes: Iterable[str] = (),
                        edges: Iterable[tuple[str, str]] = ()) -> bool: ...

    def overrides(self) -> list[Override]: ...


class MetadataStore(Protocol):
    """Each paper's bibliographic fields with their sources (core.schema.metadata). An extractor's write replaces
    only what extractors wrote: fields whose source is manual or bibtex (KEPT_SOURCES) stay."""

    def get(self, doc_id: str) -> PaperMetadata | None:
        """None when nothing is stored for the paper."""

    def get_many(self, doc_ids: Iterable[str] | None = None) -> dict[str, PaperMetadata]:
        """Every paper's metadata (or these papers'), in one read."""

    def put_extracted(self, meta: PaperMetadata) -> PaperMetadata:
        """Replace the extracted fields of meta.doc_id, keep the kept ones; returns what is stored now."""

    def set_field(self, doc_id: str, name: str, value: object, source: str) -> PaperMetadata:
        """One field from a person or an import (a value already checked by the caller); '' / None / [] clears
        the field's kept value, so the extracted one can return at the next refresh."""

    def delete_doc(self, doc_id: str) -> None: ...

    def doc_counts(self) -> dict[str, int]:
        """doc id → stored fields, for every document that has any."""


class ReferenceStore(Protocol):
    """Each paper's parsed reference list and citation links (core.schema.references), and the library paper each
    entry resolves to (`cited_doc_id`; a delete clears every resolution to the deleted paper)."""

    def replace_doc(self, doc_id: str, refs: Sequence[ParsedReference], keys: Sequence[tuple[str, str]],
                    links: Sequence[CitationLink]) -> None: ...  # keys: each entry's (title key, text key)
    def references(self, doc_id: str) -> list[ParsedReference]: ...
    def links(self, doc_id: str) -> list[CitationLink]: ...
    def cited_by(self, doc_id: str) -> list[ParsedReference]: ...  # other papers' entries resolved to it
    def resolved(self, doc_ids: Iterable[str] | None = None) -> list[ParsedReference]: ...  # citing or cited
    def candidates(self, doi: str, arxiv: str, title_key: str, min_prefix: int = 20
                   ) -> list[ParsedReference]: ...  # year unchecked
    def set_cited(self, pairs: Iterable[tuple[str, int, str]]) -> None: ...  # (doc id, idx, cited id or '')
    def delete_doc(self, doc_id: str) -> None: ...
    def doc_counts(self) -> dict[str, int]: ...  # its entries and links, and entries resolved to it


class HistoryStore(Protocol):
    """Questions asked and their results, newest first. Entries are plain dicts with keys id, ts, question,
    mode, batch, summary and payload (the result as JSON text)."""

    def add(self, *, entry_id: str, ts: float, question: str, mode: str, batch: str, summary: str, payload: str,
            keep: int) -> None:
        """Store one entry and drop all but the `keep` newest, in one transaction."""

    def recent(self, limit: int) -> list[dict[str, Any]]: ...

    def clear(self) -> None: ...


class LLMCacheStore(Protocol):
    """LLM replies by request key, and a log of every call. Only replies are stored, never an error (a failure
    must be retried) and never a key to an endpoint."""

    def get(self, key: str) -> dict[str, Any] | None:
        """{"text", "prompt_tokens", "completion_tokens"} of the cached reply, or None."""

    def has(self, key: str) -> bool: ...

    def put(self, key: str, model: str, text: str, prompt_tokens: int = 0, completion_tokens: int = 0) -> None: ...

    def forget(self, key: str) -> None:
        """Drop one cached reply, so that exact request reaches the model again."""

    def log_call(self, *, model: str, purpose: str, prompt_tokens: int, completion_tokens: int, latency_s: float,
                 cached: bool, streamed: bool, error: str) -> None: ...

    def usage_by_purpose(self) -> list[dict[str, Any]]:
        """Per purpose (sorted): calls (made, not cached), cache_hits, errors, and the prompt_tokens,
        completion_tokens and latency_s of the calls made."""
