"""A Library is one workspace opened: its settings and its stores. Everything else takes one as an argument.

This is the only module that builds a store: callers ask the Library for one, typed by its protocol in
core.store.base, and never name a backend (the import-linter contract `store-backends-behind-the-library`)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from core.models.embedding import get_embedder, get_tokenizer, vector_space
from core.models.embedding_space import check_space
from core.models.llm.factory import shared_chat_model, shared_reader_model
from core.models.registry import Registry, resources
from core.models.vlm import vision_model
from core.settings.config import Settings
from core.settings.workspace import Workspace, default_workspace
from core.store.base import (
    ChunkStore,
    CommunityState,
    DescriptionStore,
    DocumentRecords,
    EvalStore,
    FullTextStore,
    GraphSources,
    GraphStore,
    HistoryStore,
    LLMCacheStore,
    MetadataStore,
    ReferenceStore,
    ResultStore,
    ScoreCache,
    SessionStore,
    StageProgress,
    VectorSpaceRecord,
    VectorStore,
    WebCache,
    WorkQueue,
)
from core.store.chroma_vectors import ChromaVectorStore, chroma_client
from core.store.sqlite_chunks import SQLiteChunkStore
from core.store.sqlite_communities import SQLiteCommunityState
from core.store.sqlite_db import Database
from core.store.sqlite_documents import SQLiteDocumentRecords, SQLiteStageProgress, SQLiteWorkQueue
from core.store.sqlite_eval import SQLiteEvalStore
from core.store.sqlite_fulltext import SQLiteFullText
from core.store.sqlite_graph import SQLiteGraphStore
from core.store.sqlite_graph_sources import SQLiteGraphSources
from core.store.sqlite_history import QueryHistoryStore
from core.store.sqlite_llm_cache import SQLiteLLMCache
from core.store.sqlite_media import SQLiteDescriptionStore
from core.store.sqlite_metadata import SQLiteMetadataStore
from core.store.sqlite_ragas_cache import SQLiteScoreCache
from core.store.sqlite_references import SQLiteReferenceStore
from core.store.sqlite_results import SQLiteResultStore
from core.store.sqlite_sessions import SQLiteSessionStore
from core.store.sqlite_vector_space import SQLiteVectorSpace
from core.store.sqlite_web_cache import SQLiteWebCache
from core.store.sqlite_zotero import ZoteroUnreadable, read_zotero_database  # noqa: F401

# A Zotero database is no store of the workspace, but its reader is SQL and so lives in core/store; the pipeline's
# Zotero import reaches it here (ZoteroUnreadable, read_zotero_database), as every caller reaches a backend.

WINDOW_COLLECTION = "chunk_windows"
ENTITY_COLLECTION = "entities"
RELATION_COLLECTION = "relations"


@dataclass
class Library:
    workspace: Workspace
    settings: Settings
    db: Database
    documents: DocumentRecords  # the registry and its status machines
    chunks: ChunkStore
    graph_sources: GraphSources  # provenance the graph is rebuilt from; SQLite whatever the graph store

    @cached_property
    def queue(self) -> WorkQueue:
        """The registry as ingest and graph workers see it: what to claim next, and who holds what."""
        return SQLiteWorkQueue(self.db)

    @cached_property
    def stages(self) -> StageProgress:
        """The registry as the pages see it while work runs: each stage's live detail and fraction done."""
        return SQLiteStageProgress(self.db)

    @cached_property
    def windows(self) -> VectorStore:
        """Embedding windows of every chunk; opened on first use because importing Chroma takes a second."""
        return self._collection(WINDOW_COLLECTION)

    @cached_property
    def entity_vectors(self) -> VectorStore:
        return self._collection(ENTITY_COLLECTION)

    @cached_property
    def relation_vectors(self) -> VectorStore:
        return self._collection(RELATION_COLLECTION)

    def _collection(self, name: str) -> VectorStore:
        return ChromaVectorStore(chroma_client(self.settings.store, self.workspace.chroma_dir), name)

    @cached_property
    def fulltext(self) -> FullTextStore:
        """BM25 over chunk text (FTS5), created and filled on first use."""
        return SQLiteFullText(self.db)

    @cached_property
    def descriptions(self) -> DescriptionStore:
        """Descriptions of figures, tables and equations, per item and source (core.pipeline.media)."""
        return SQLiteDescriptionStore(self.db)

    @cached_property
    def community_state(self) -> CommunityState:
        """What the community refresh keeps between runs (core.graph.communities.index), in SQLite
        whatever the graph store."""
        return SQLiteCommunityState(self.db)

    @cached_property
    def eval_store(self) -> EvalStore:
        """Question sets, evaluation runs and their results (core.eval)."""
        return SQLiteEvalStore(self.db)

    @cached_property
    def score_cache(self) -> ScoreCache:
        """RAGAS scores already computed (core.eval.ragas_scores)."""
        return SQLiteScoreCache(self.db)

    @cached_property
    def vector_space_record(self) -> VectorSpaceRecord:
        """Which vector space the stored vectors are in (core.models.embedding_space)."""
        return SQLiteVectorSpace(self.db)

    @cached_property
    def history(self) -> HistoryStore:
        """Questions asked and their results (core.query.history)."""
        return QueryHistoryStore(self.db)

    @cached_property
    def llm_cache(self) -> LLMCacheStore:
        """The replies the LLM and VLM wrappers cached (core.models.llm.cache), for callers that must drop one."""
        return SQLiteLLMCache(self.db)

    @cached_property
    def metadata(self) -> MetadataStore:
        """Each paper's title, authors, year, venue, DOI, arXiv id and abstract, with their sources."""
        return SQLiteMetadataStore(self.db)

    @cached_property
    def references(self) -> ReferenceStore:
        """Each paper's parsed reference list, its citation links, and the library papers its entries resolve to."""
        return SQLiteReferenceStore(self.db)

    @cached_property
    def results(self) -> ResultStore:
        """Each paper's results read from its tables (method × dataset × metric, cited to the cell)."""
        return SQLiteResultStore(self.db)

    @cached_property
    def web_cache(self) -> WebCache:
        """Replies of Crossref and OpenAlex by request (core.models.scholarly): a repeated request makes no call."""
        return SQLiteWebCache(self.db)

    @cached_property
    def graph(self) -> GraphStore:
        if self.settings.graph.backend == "neo4j":
            from core.store.neo4j_graph import neo4j_store_from_config

            return neo4j_store_from_config(self.settings.graph)
        return SQLiteGraphStore(self.db)

    @property
    def resources(self) -> Registry:
        """The process's models, engines and clients (core.models.registry), each loaded once whatever the
        workspace; the accessors below take theirs from it."""
        return resources

    def chat_model(self):
        """The configured LLM behind its prompt-hash cache, or None: every caller has an LLM-free path."""
        return shared_chat_model(self.settings, self.llm_cache)

    def reader_model(self):
        """The model that reads answers: the configured LLM, else the embedded one when installed, else None
        (core.models.llm.factory.shared_reader_model)."""
        return shared_reader_model(self.settings, self.llm_cache)

    def vision_model(self):
        """The configured VLM behind the prompt-hash cache, or None: every caller has an offline path."""
        return vision_model(self.settings.vlm, self.llm_cache)

    def embedder(self):
        """The configured embedder, once its vectors are known to be comparable with the workspace's (raises
        VectorSpaceMismatch otherwise: core.models.embedding_space)."""
        self.check_vector_space()
        return get_embedder(self.settings.embedding.model, self.settings.embedding.variant)

    def check_vector_space(self) -> None:
        """Refuse (VectorSpaceMismatch) when the configured embedder's vectors cannot be compared with the stored
        ones; no model is loaded. Adding or retrying a document checks it too: ingest workers embed in their own
        processes."""
        config = self.settings.embedding
        check_space(self.vector_space_record, vector_space(config.model, config.variant), self._has_vectors,
                    vector_space(config.model))

    def _has_vectors(self) -> bool:
        return self.windows.count() > 0 or self.entity_vectors.count() > 0

    def tokenizer(self):
        return get_tokenizer(self.settings.embedding.model)


def session_store(path: Path) -> SessionStore:
    """The server's sign-in sessions (core/service/sessions.py): not a workspace's store, one file beside the
    accounts that every workspace the server opens shares, so it is built here by path."""
    return SQLiteSessionStore(path)


def open_library(workspace: Workspace | None = None) -> Library:
    ws = (workspace or default_workspace()).ensure()
    db = Database(ws.db_path)
    return Library(workspace=ws, settings=ws.settings(), db=db, documents=SQLiteDocumentRecords(db),
                   chunks=SQLiteChunkStore(db), graph_sources=SQLiteGraphSources(db))
