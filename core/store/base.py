"""The storage contracts, in the spirit of LightRAG's BaseKVStorage / BaseVectorStorage / DocStatusStorage.

Pipelines and pages talk to these protocols only, so a backend (SQLite, Chroma embedded or server, later a
graph store) can be swapped by writing one file. Nothing here names a backend's own types: filters are
VectorFilter, not Chroma's `where` dialect, and a store that cannot be reached raises StoreUnavailable.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from core.schema.eval import EvalQuestion, QuestionResult, QuestionSet, RunRecord
from core.schema.media import Description
from core.schema.metadata import PaperMetadata
from core.schema.records import Chunk, DocStatus, Document, GraphStatus
from core.schema.references import CitationLink, ParsedReference

# The graph's, the results' and the sign-in sessions' contracts live beside this file, to keep each under 400
# lines; callers import them from here.
from core.store.base_graph import CommunityState as CommunityState
from core.store.base_graph import GraphSources as GraphSources
from core.store.base_graph import GraphStore as GraphStore
from core.store.base_graph import VectorRow as VectorRow
from core.store.base_results import ResultFilter as ResultFilter
from core.store.base_results import ResultStore as ResultStore
from core.store.base_sessions import SessionStore as SessionStore


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


class DocumentRecords(Protocol):
    """The registry of documents and their two status machines (DocStatus, GraphStatus in core.schema.records).
    Status writes are checked against the machines' transitions and raise IllegalTransition otherwise; callers
    name what they change (a status, a title), never a column. The work queue and the live progress are
    the same registry seen by workers (WorkQueue) and by the pages (StageProgress)."""

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

    def set_title(self, doc_id: str, title: str) -> None:
        """The display title, whatever the statuses (the paper's metadata changed: a refresh or a correction)."""

    def delete(self, doc_id: str) -> None: ...


class WorkQueue(Protocol):
    """Where ingest and graph workers take documents from, and who holds each, for crash recovery."""

    def claim_next(self, worker: str) -> Document | None:
        """Atomically move the oldest queued document to parsing for this worker."""

    def claim_graph_next(self, worker: str) -> Document | None:
        """Atomically take the oldest ready document whose graph stage is pending."""

    def in_progress_workers(self) -> dict[str, str]:
        """Worker id of every document being parsed or indexed, for crash recovery."""

    def graph_workers(self) -> dict[str, str]:
        """Worker id of every document whose graph is being extracted, for crash recovery."""


class StageProgress(Protocol):
    """The live detail and fraction done of each document's ingest and graph stage."""

    def progress(self) -> dict[str, tuple[str, float]]:
        """Stage detail and fraction done of every document in progress."""

    def graph_progress(self) -> dict[str, tuple[str, float]]: ...

    def report_stage(self, doc_id: str, detail: str, fraction: float) -> None:
        """Live detail and fraction done of the ingest."""

    def report_stages(self, doc_ids: Sequence[str], detail: str, fraction: float) -> None:
        """The same live detail for several documents, in one write."""

    def report_graph_stage(self, doc_id: str, detail: str, fraction: float) -> None:
        """Live detail and fraction done of the graph stage."""


class WebCache(Protocol):
    """Replies of the online metadata services keyed by request (core.models.scholarly): (status, JSON text)."""

    def get(self, key: str) -> tuple[int, str] | None: ...

    def put(self, key: str, service: str, status: int, body: str) -> None: ...

    def clear(self) -> int: ...


class MetadataStore(Protocol):
    """Each paper's bibliographic fields with their sources (core.schema.metadata). An extractor's write replaces
    only what extractors wrote: fields whose source is manual or an import (KEPT_SOURCES) stay."""

    def get(self, doc_id: str) -> PaperMetadata | None:
        """None when nothing is stored for the paper."""

    def get_many(self, doc_ids: Iterable[str] | None = None) -> dict[str, PaperMetadata]:
        """Every paper's metadata (or these papers'), in one read."""

    def put_extracted(self, meta: PaperMetadata) -> PaperMetadata:
        """Replace the extracted fields of meta.doc_id, keep the kept ones; returns what is stored now."""

    def set_field(self, doc_id: str, name: str, value: object, source: str) -> PaperMetadata:
        """One field from a person or an import (a value already checked by the caller); '' / None / [] clears
        the field's kept value, so the extracted one can return at the next refresh."""

    def put_enriched(self, doc_id: str, values: dict[str, tuple[object, str]]) -> list[str]:
        """Fields filled online, {field: (value, crossref|openalex)}, kept across re-parses; never over a manual or
        imported value. Returns the fields written."""

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
    """Questions asked and their results, newest first, each with its owner (core.query.history; '' for none
    known). Entries are plain dicts with keys id, ts, question, mode, batch, summary, payload (the result as JSON
    text) and owner."""

    def add(self, *, entry_id: str, ts: float, question: str, mode: str, batch: str, summary: str, payload: str,
            keep: int, owner: str = "") -> None:
        """Store one entry and drop all but the owner's `keep` newest, in one transaction."""

    def recent(self, limit: int, owners: Sequence[str] = ("",)) -> list[dict[str, Any]]:
        """The newest entries of these owners only."""

    def clear(self, owner: str = "") -> None:
        """An owner's entries."""


class LLMCacheStore(Protocol):
    """LLM replies by request key, and a log of every call. Only replies are stored, never an error (a failure
    must be retried) and never a key to an endpoint."""

    @property
    def location(self) -> str:
        """Where the replies live (the workspace's file): models are shared per location (core.models.registry)."""

    def get(self, key: str) -> dict[str, Any] | None:
        """{"text", "prompt_tokens", "completion_tokens", "meta"} of the cached reply, or None; meta: JSON of what
        else the reply carried (its token odds) or None."""

    def has(self, key: str) -> bool: ...

    def put(self, key: str, model: str, text: str, prompt_tokens: int = 0, completion_tokens: int = 0,
            meta: str | None = None) -> None: ...

    def forget(self, key: str) -> None:
        """Drop one cached reply, so that exact request reaches the model again."""

    def log_call(self, *, model: str, purpose: str, prompt_tokens: int, completion_tokens: int, latency_s: float,
                 cached: bool, streamed: bool, error: str) -> None: ...

    def usage_by_purpose(self) -> list[dict[str, Any]]:
        """Per purpose (sorted): calls (made, not cached), cache_hits, errors, and the prompt_tokens,
        completion_tokens and latency_s of the calls made."""


class FullTextStore(Protocol):
    """BM25 over chunk text (SQLite FTS5), kept in step with the chunks by the store itself."""

    def search(self, text: str, top_k: int, doc_ids: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """(chunk id, BM25 score, higher is better) of the best chunks, among `doc_ids` when given."""

    def scores(self, text: str, chunk_ids: Sequence[str]) -> dict[str, float]:
        """BM25 scores of the given chunks (with the whole collection's statistics); absent = no term matched."""

    def document_frequencies(self, terms: Sequence[str]) -> tuple[dict[str, int], int] | None:
        """(term → chunks containing it, for the terms in the index; number of chunks, at least 1), or None while
        there is no index yet. Reads the index as it is: never creates it."""

    def stale_rows(self) -> int:
        """Index entries whose chunk is gone."""

    def rebuild(self) -> None: ...


class DescriptionStore(Protocol):
    """Descriptions of a paper's figures, tables and equations, per item and per source (offline, vlm); rows carry
    the item's fingerprint, and callers ignore one whose item changed (core.pipeline.media)."""

    def put(self, descriptions: Iterable[Description]) -> None: ...

    def replace_source(self, doc_id: str, source: str, descriptions: Iterable[Description]) -> None:
        """The paper's descriptions from one source, replaced as a whole (items of an older parse go)."""

    def by_doc(self, doc_id: str) -> dict[int, dict[str, Description]]:
        """item index → source → description (whatever its fingerprint: callers compare)."""

    def get(self, doc_id: str, item_index: int, source: str) -> Description | None: ...

    def delete_doc(self, doc_id: str) -> None: ...

    def doc_counts(self) -> dict[str, int]:
        """doc id → description rows (every source), for every document that has any."""

    def counts(self) -> dict[str, int]:
        """source → descriptions with text."""


class EvalStore(Protocol):
    """Question sets, runs and per-question results. A run's results are written one question at a time, so a run
    cut short keeps what it finished and can be resumed; cancelling works across processes (app and CLI)."""

    def save_set(self, name: str, questions: list[EvalQuestion], source: str = "") -> QuestionSet:
        """The same name with the same questions again is the set already saved."""

    def update_set(self, set_id: str, questions: list[EvalQuestion], name: str | None = None) -> None: ...

    def sets(self) -> list[QuestionSet]: ...

    def get_set(self, set_id: str) -> QuestionSet | None: ...

    def delete_set(self, set_id: str) -> None:
        """The set goes; its runs stay, since their results carry the questions they asked."""

    def create_run(self, qset: QuestionSet, modes: list[str], options: dict[str, Any], total: int,
                   label: str = "") -> RunRecord: ...

    def save_result(self, run_id: str, result: QuestionResult, done: int) -> None:
        """One question's result and the run's progress, together."""

    def set_status(self, run_id: str, status: str, message: str = "") -> None: ...

    def touch(self, run_id: str, message: str = "") -> None: ...

    def request_cancel(self, run_id: str) -> None: ...

    def cancel_requested(self, run_id: str) -> bool: ...

    def rename_run(self, run_id: str, label: str) -> None: ...

    def runs(self, set_id: str | None = None) -> list[RunRecord]: ...

    def get_run(self, run_id: str) -> RunRecord | None: ...

    def delete_run(self, run_id: str) -> None: ...

    def results(self, run_id: str) -> list[QuestionResult]: ...

    def done_pairs(self, run_id: str) -> set[tuple[str, str]]:
        """(question id, mode) of every result the run has."""

    def save_pairwise(self, run_id: str, mode_a: str, mode_b: str, payload: dict[str, Any]) -> None: ...

    def pairwise(self, run_id: str) -> list[dict[str, Any]]: ...


class ScoreCache(Protocol):
    """RAGAS scores already computed, by key (core.eval.ragas_scores.score_key); only real values are kept."""

    def get_many(self, keys: list[str]) -> dict[str, float]: ...

    def put(self, key: str, metric: str, value: float) -> None: ...


class VectorSpaceRecord(Protocol):
    """Which vector space ("<model>|<variant>") the workspace's vectors are in (core.models.embedding_space)."""

    @property
    def location(self) -> str:
        """Where the record lives (the workspace's file): a process remembers one agreeing check per location."""

    def recorded(self) -> str | None:
        """None before anything was recorded."""

    def record(self, space: str) -> None: ...
