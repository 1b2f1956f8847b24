"""Vectors in Chroma: embedded PersistentClient in the workspace, or HttpClient to a Chroma server.

Collections are created without an embedding function: PaperGraph embeds with its own offline model and passes
vectors in, so Chroma never tries to download its default model and any process can reopen the collection.
This is the only module that knows Chroma's `where` dialect and its exception types: callers filter with
VectorFilter and catch StoreUnavailable.
"""
from __future__ import annotations

import functools
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.settings.config import StoreConfig
from core.store.base import StoreUnavailable, VectorFilter, VectorMatch

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

_clients: dict[tuple, Any] = {}
_clients_lock = threading.Lock()


def chroma_client(config: StoreConfig, persist_dir: Path):
    """One client per location per process: Chroma's embedded client must not be opened twice on one folder."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    key = (config.chroma_host, config.chroma_port) if config.chroma_host else _folder_key(persist_dir)
    with _clients_lock:
        if key not in _clients:
            settings = ChromaSettings(anonymized_telemetry=False)
            if config.chroma_host:
                try:
                    _clients[key] = chromadb.HttpClient(host=config.chroma_host, port=config.chroma_port,
                                                        settings=settings)
                except Exception as exc:
                    raise StoreUnavailable(
                        f"cannot reach the Chroma server at {config.chroma_host}:{config.chroma_port}: {exc}") from exc
            else:
                persist_dir.mkdir(parents=True, exist_ok=True)
                _clients[key] = _embedded_client(persist_dir)
        return _clients[key]


def _folder_key(persist_dir: Path) -> tuple:
    return (str(persist_dir),)


def _embedded_client(persist_dir: Path):
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    return chromadb.PersistentClient(path=str(persist_dir), settings=ChromaSettings(anonymized_telemetry=False))


def reopened_client(persist_dir: Path, stale):
    """A client that reads `persist_dir` afresh, in place of `stale` (once, however many stores ask).

    Embedded Chroma keeps each folder's index in this process's memory and never reads what another process (the
    CLI's ingest, the API server, the app) wrote there since: its queries then fail with "Error finding id" until
    a restart. Only a new System reads the folder again, so the folder's System is dropped from Chroma's
    per-process cache (the one private name used here; tests/store/test_chroma_other_process.py pins it) and a
    client built anew. The old System is not stopped: a call still running on it finishes."""
    from chromadb.api.shared_system_client import SharedSystemClient

    key = _folder_key(persist_dir)
    with _clients_lock:
        if _clients.get(key) is stale:
            SharedSystemClient._identifier_to_system.pop(stale._identifier, None)
            _clients[key] = _embedded_client(persist_dir)
        return _clients[key]


def _stale_read(exc: Exception) -> bool:
    """Chroma's errors for an index this process loaded before another process wrote the folder: "Error finding
    id" (records it has not loaded), "Error creating hnsw segment reader: Nothing found on disk" (a collection
    that was still empty when this process opened it)."""
    return type(exc).__name__ == "InternalError" and any(
        sign in str(exc) for sign in ("Error finding id", "hnsw segment reader"))


def _clean_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    # Chroma accepts str/int/float/bool only; lists are stored as comma-joined strings.
    out = {}
    for k, v in meta.items():
        if v is None:
            continue
        out[k] = ",".join(str(x) for x in v) if isinstance(v, (list, tuple)) else v
    return out


def chroma_where(filters: VectorFilter | None) -> dict[str, Any] | None:
    """A VectorFilter in Chroma's dialect: one `$in` per constrained field, joined by `$and` when there are
    several (Chroma rejects an `$and` of one clause). None when nothing is constrained. A filter that matches
    nothing has no translation (Chroma rejects an empty `$in`): the store answers it without asking Chroma."""
    if filters is None:
        return None
    clauses = [{field: {"$in": list(values)}}
               for field, values in (("doc_id", filters.doc_ids), ("kind", filters.kinds),
                                     ("section", filters.sections)) if values is not None]
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def _server_call(method):
    """A Chroma server that stopped answering surfaces as StoreUnavailable, like one that never answered; so does
    any other error of Chroma's own (the pages say the index failed instead of showing a traceback)."""
    @functools.wraps(method)
    def call(self, *args, **kwargs):
        for first in (True, False):
            try:
                return method(self, *args, **kwargs)
            except Exception as exc:
                if first and self.persist_dir is not None and _stale_read(exc):
                    self.reopen()  # another process wrote the folder: read it again, once
                    continue
                said = self.unavailable(exc)
                if said is None:
                    raise
                raise said from exc
    return call


class ChromaVectorStore:
    def __init__(self, client, name: str):
        self.name = name
        self.client = client
        settings = client.get_settings()
        self.server = (f"{settings.chroma_server_host}:{settings.chroma_server_http_port}"
                       if settings.chroma_server_host else "")
        # An embedded client's folder, read again when another process wrote it (reopen).
        self.persist_dir = None if self.server else Path(settings.persist_directory)
        self.collection = self._open(client, name)

    def reopen(self) -> None:
        self.client = reopened_client(self.persist_dir, self.client)
        self.collection = self._open(self.client, self.name)

    def unavailable(self, exc: Exception) -> StoreUnavailable | None:
        """`exc` as the pages' StoreUnavailable when it is Chroma's (a server out of reach, an index that failed)."""
        import httpx  # Chroma's HTTP client is built on httpx, already imported by then
        from chromadb.errors import ChromaError

        if isinstance(exc, httpx.TransportError):
            return StoreUnavailable(f"cannot reach the Chroma server at {self.server}: {exc}")
        if isinstance(exc, ChromaError):
            return StoreUnavailable(f"the vector index {self.name!r} failed: {exc}")
        return None

    @_server_call
    def _open(self, client, name: str):
        return client.get_or_create_collection(name, embedding_function=None, metadata={"hnsw:space": "cosine"})

    @_server_call
    def upsert(self, ids: Sequence[str], embeddings: np.ndarray, documents: Sequence[str],
               metadatas: Sequence[dict[str, Any]], batch_size: int = 2000) -> None:
        for start in range(0, len(ids), batch_size):
            end = start + batch_size
            self.collection.upsert(ids=list(ids[start:end]), embeddings=np.asarray(embeddings[start:end]),
                                   documents=list(documents[start:end]),
                                   metadatas=[_clean_metadata(m) for m in metadatas[start:end]])

    @_server_call
    def query(self, embedding: np.ndarray, top_k: int, filters: VectorFilter | None = None,
              among: Sequence[str] | None = None) -> list[VectorMatch]:
        if top_k <= 0 or (filters is not None and filters.matches_nothing()) or (among is not None and not among):
            return []
        # `among` ranks a known set in the store: reading 1,000 vectors to rank them here cost ~55 ms on a Chroma
        # server (JSON), this ~20 ms.
        ids = list(among) if among is not None else None
        query = functools.partial(self.collection.query, query_embeddings=[np.asarray(embedding, dtype=np.float32)],
                                  n_results=top_k, where=chroma_where(filters),
                                  include=["documents", "metadatas", "distances"])
        try:
            result = query(ids=ids)
        except Exception:
            if ids is None:
                raise
            known = self.collection.get(ids=ids, include=[])["ids"]  # Chroma refuses ids it does not hold
            if len(known) == len(set(ids)):
                raise
            if not known:
                return []
            result = query(ids=known)
        return [VectorMatch(id=i, score=1.0 - float(d), document=doc or "", metadata=meta or {})
                for i, d, doc, meta in zip(result["ids"][0], result["distances"][0], result["documents"][0],
                                           result["metadatas"][0])]

    @_server_call
    def query_many(self, embeddings: np.ndarray, top_k: int, filters: VectorFilter | None = None,
                   batch_size: int = 64) -> list[list[VectorMatch]]:
        """`query` for each row of `embeddings`, in one Chroma call per batch: the graph walks look up every
        keyword of a question, and on a Chroma server each call is an HTTP round trip."""
        embeddings = np.asarray(embeddings, dtype=np.float32)
        if top_k <= 0 or not len(embeddings) or (filters is not None and filters.matches_nothing()):
            return [[] for _ in range(len(embeddings))]
        out: list[list[VectorMatch]] = []
        for start in range(0, len(embeddings), batch_size):
            result = self.collection.query(query_embeddings=list(embeddings[start:start + batch_size]),
                                           n_results=top_k, where=chroma_where(filters),
                                           include=["documents", "metadatas", "distances"])
            for ids_, dists, docs, metas in zip(result["ids"], result["distances"], result["documents"],
                                                result["metadatas"]):
                out.append([VectorMatch(id=i, score=1.0 - float(d), document=doc or "", metadata=meta or {})
                            for i, d, doc, meta in zip(ids_, dists, docs, metas)])
        return out

    @_server_call
    def delete_doc(self, doc_id: str) -> None:
        self.collection.delete(where={"doc_id": doc_id})

    @_server_call
    def delete_docs(self, doc_ids: Sequence[str], batch_size: int = 500) -> None:
        """Every record of these documents, in one call per batch: the ingest writer clears a whole batch of
        finished papers before writing their windows together."""
        doc_ids = list(dict.fromkeys(doc_ids))
        for start in range(0, len(doc_ids), batch_size):
            batch = doc_ids[start:start + batch_size]
            self.collection.delete(where={"doc_id": batch[0]} if len(batch) == 1 else {"doc_id": {"$in": batch}})

    @_server_call
    def delete(self, ids: Sequence[str], batch_size: int = 2000) -> None:
        ids = list(ids)
        for start in range(0, len(ids), batch_size):
            self.collection.delete(ids=ids[start:start + batch_size])

    @_server_call
    def all_ids(self) -> list[str]:
        return list(self.collection.get(include=[])["ids"])

    @_server_call
    def get_documents(self, ids: Sequence[str], batch_size: int = 2000) -> dict[str, str]:
        out: dict[str, str] = {}
        ids = list(ids)
        for start in range(0, len(ids), batch_size):
            result = self.collection.get(ids=ids[start:start + batch_size], include=["documents"])
            out.update(zip(result["ids"], result["documents"]))
        return out

    @_server_call
    def update_metadata(self, ids: Sequence[str], metadatas: Sequence[dict[str, Any]], batch_size: int = 2000) -> None:
        for start in range(0, len(ids), batch_size):
            self.collection.update(ids=list(ids[start:start + batch_size]),
                                   metadatas=[_clean_metadata(m) for m in metadatas[start:start + batch_size]])

    @_server_call
    def get_embeddings(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        result = self.collection.get(ids=list(ids), include=["embeddings"])
        return {i: np.asarray(e, dtype=np.float32) for i, e in zip(result["ids"], result["embeddings"])}

    @_server_call
    def fetch(self, ids: Sequence[str], batch_size: int = 2000) -> list[tuple[VectorMatch, np.ndarray]]:
        """Stored records by id (missing ids are skipped), with their vectors; `score` is 0."""
        out = []
        ids = list(ids)
        for start in range(0, len(ids), batch_size):
            result = self.collection.get(ids=ids[start:start + batch_size],
                                         include=["documents", "metadatas", "embeddings"])
            for i, doc, meta, emb in zip(result["ids"], result["documents"], result["metadatas"],
                                         result["embeddings"]):
                out.append((VectorMatch(id=i, score=0.0, document=doc or "", metadata=meta or {}),
                            np.asarray(emb, dtype=np.float32)))
        return out

    @_server_call
    def doc_ids(self) -> set[str]:
        result = self.collection.get(include=["metadatas"])
        return {m.get("doc_id") for m in result["metadatas"] if m}

    @_server_call
    def doc_counts(self) -> dict[str, int]:
        """doc id → records naming it: a window names its paper (doc_id), an entity or relation vector every
        paper it was merged from (doc_ids)."""
        counts: dict[str, int] = {}
        for meta in self.collection.get(include=["metadatas"])["metadatas"]:
            named = str((meta or {}).get("doc_id") or (meta or {}).get("doc_ids") or "")
            for doc_id in filter(None, named.split(",")):
                counts[doc_id] = counts.get(doc_id, 0) + 1
        return counts

    @_server_call
    def count(self) -> int:
        return self.collection.count()
