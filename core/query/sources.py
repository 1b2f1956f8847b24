"""What every chunk source of a mode shares: the scope of a query, the question as the sources see it (`Probe`),
what a source proposes (`Proposal`), and the naive source (chunk vectors fused with BM25), whose ranking the
graph sources also start from.

The sources themselves: naive here, local and global in core.query.walks, ppr in core.query.ppr; their fusion
in core.query.retrieve.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from core.library import Library
from core.query.records import Keywords, QueryParams, RetrievedEntity, RetrievedRelation
from core.query.search import OVERFETCH
from core.schema.ids import doc_id_of
from core.store.base import VectorFilter, VectorMatch

RRF_K = 60  # reciprocal-rank fusion constant (Cormack et al.): robust across very different score scales


@dataclass
class Scope:
    """Which papers a query may see: the ready ones, narrowed by the paper filter."""

    doc_ids: list[str]
    titles: dict[str, str]

    def allows_chunk(self, chunk_id: str) -> bool:
        return doc_id_of(chunk_id) in self._set

    def allows_doc(self, doc_id: str) -> bool:
        return doc_id in self._set

    def __post_init__(self) -> None:
        self._set = set(self.doc_ids)


def scope_of(lib: Library, params: QueryParams) -> Scope:
    titles = lib.documents.ready_titles()
    ids = list(titles)
    if params.doc_ids:
        wanted = set(params.doc_ids)
        ids = [i for i in ids if i in wanted]
    return Scope(doc_ids=ids, titles=titles)


def rrf(rankings: list[list[str]], k: int = RRF_K) -> list[tuple[str, float]]:
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank + 1)
    return sorted(scores.items(), key=lambda kv: -kv[1])


def keyword_text(words: list[str]) -> str:
    return ", ".join(words)


# ---------------------------------------------------------------------------------------------- chunks
def vector_chunk_ids(lib: Library, qvec: np.ndarray, k: int, scope: Scope) -> list[str]:
    """Best chunks by their best window. The search runs unfiltered and drops what is out of scope afterwards:
    Chroma's metadata filter over a thousand papers costs ~0.5 s at 100k windows, the plain search ~15 ms. Only
    when too little survives (a narrow paper filter) is the filtered search run."""
    def best(matches) -> list[str]:
        out: list[str] = []
        for match in matches:
            chunk_id = match.metadata.get("chunk_id")
            if chunk_id and chunk_id not in out and scope.allows_chunk(chunk_id):
                out.append(chunk_id)
            if len(out) == k:
                break
        return out

    found = best(lib.windows.query(qvec, k * OVERFETCH))
    if len(found) < k and len(found) < lib.windows.count():
        found = best(lib.windows.query(qvec, k * OVERFETCH, filters=VectorFilter(doc_ids=scope.doc_ids)))
    return found


def bm25_chunk_ids(lib: Library, text: str, k: int, scope: Scope) -> list[str]:
    return [cid for cid, _ in lib.fulltext.search(text, k, scope.doc_ids)]


# ---------------------------------------------------------------------------------------------- sources
@dataclass
class Probe:
    """The question as every chunk source sees it."""

    lib: Library
    question: str
    qvec: np.ndarray
    keywords: Keywords | None
    embed: Callable[[str], np.ndarray]
    params: QueryParams
    scope: Scope
    _dense: Proposal | None = None
    _entity_matches: dict[tuple, list[list[VectorMatch]]] = field(default_factory=dict)

    def dense(self) -> Proposal:
        """naive's proposal for the question, computed once: mix fuses it, local and ppr seed from it."""
        if self._dense is None:
            self._dense = naive_chunks(self)
        return self._dense

    def entity_matches(self, words: list[str], per_keyword: int) -> list[list[VectorMatch]]:
        """Each keyword's closest entity vectors, searched once per question: local, global and ppr all seed from
        the low-level keywords, and hybrid (local + global) and mix (local + ppr) searched them twice."""
        key = (tuple(words), per_keyword)
        if key not in self._entity_matches:
            vectors = np.stack([self.embed(w) for w in words])
            # Every keyword in one store call (one HTTP round trip on a Chroma server, not one each).
            self._entity_matches[key] = self.lib.entity_vectors.query_many(vectors, per_keyword)
        return self._entity_matches[key]


@dataclass
class Proposal:
    """What one source proposes: chunk ids best first, why each was proposed, and the graph items it met."""

    chunk_ids: list[str]
    via: dict[str, list[str]]  # chunk id -> vector / bm25 / entity / relation
    entities: list[RetrievedEntity] = field(default_factory=list)
    relations: list[RetrievedRelation] = field(default_factory=list)


@dataclass(frozen=True)
class ChunkSource:
    """One way to propose chunks for a question; a mode's route (core.query.routes) fuses one or more."""

    name: str  # its time is reported as `<name>_s`
    propose: Callable[[Probe], Proposal]
    graph: bool  # walks the graph from the question's keywords: skipped when the caller gave none
    # The keyword texts it embeds besides the question: retrieve embeds them all before any source runs, in as
    # few encoder calls as pay (core.query.engine.Embeddings.prefetch), and none a mode never reads.
    queries: Callable[[Keywords], list[str]] = lambda keywords: list(keywords.low)


def naive_chunks(probe: Probe) -> Proposal:
    lib, params, scope = probe.lib, probe.params, probe.scope
    vector_ids = vector_chunk_ids(lib, probe.qvec, params.chunk_top_k * 2, scope)
    bm25_ids = bm25_chunk_ids(lib, probe.question, params.chunk_top_k * 2, scope) if params.bm25 else []
    via: dict[str, list[str]] = {}
    for name, ids in (("vector", vector_ids), ("bm25", bm25_ids)):
        for cid in ids:
            via.setdefault(cid, []).append(name)
    return Proposal([cid for cid, _ in rrf([vector_ids, bm25_ids])] if bm25_ids else vector_ids, via)


NAIVE = ChunkSource("naive", lambda probe: probe.dense(), graph=False, queries=lambda keywords: [])
