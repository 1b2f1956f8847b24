"""The chunk sources of the retrieval modes, with LightRAG's meaning, and their fusion (`retrieve`).

- naive: chunk vectors (best embedding window per chunk), fused with BM25 over chunk text by reciprocal rank.
- local: entity vectors searched with the low-level keywords → those entities → their one-hop relations → the
  entities' source chunks, ranked by how many of the retrieved relations point to them.
- global: relation vectors searched with the high-level keywords → those relations → their endpoint entities →
  the relations' source chunks.

Which sources each mode runs (hybrid: local + global; mix: naive + local + global) is its route in
core.query.routes. Every chunk that comes back is resolved to its best-matching embedding window against the
question, so a citation can show the page and the box of the passage that matters, whatever source found it.
"""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.library import Library
from core.query.records import Keywords, QueryParams, Retrieval, RetrievedChunk, RetrievedEntity, RetrievedRelation
from core.query.search import OVERFETCH, _parse_bbox
from core.schema.graph import RELATED
from core.schema.ids import chunk_id_of, doc_id_of, window_ids
from core.schema.records import SearchHit
from core.store.base import VectorFilter

RRF_K = 60  # reciprocal-rank fusion constant (Cormack et al.): robust across very different score scales
# Chunks a graph walk may propose before rerank: enough for recall, few enough to resolve windows quickly.
GRAPH_CHUNK_CANDIDATES = 3


@dataclass
class Scope:
    """Which papers a query may see: the ready ones, narrowed by the paper filter."""

    doc_ids: list[str]
    titles: dict[str, str]

    def allows_chunk(self, chunk_id: str) -> bool:
        return doc_id_of(chunk_id) in self._set

    def __post_init__(self) -> None:
        self._set = set(self.doc_ids)


def scope_of(lib: Library, params: QueryParams) -> Scope:
    docs = lib.documents.ready_papers()
    ids = [d.id for d in docs]
    if params.doc_ids:
        ids = [i for i in ids if i in set(params.doc_ids)]
    return Scope(doc_ids=ids, titles={d.id: d.display_title for d in docs})


def rrf(rankings: list[list[str]], k: int = RRF_K) -> list[tuple[str, float]]:
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank + 1)
    return sorted(scores.items(), key=lambda kv: -kv[1])


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


def _window_ids(chunk_id: str, tokens: int, lib: Library) -> list[str]:
    c = lib.settings.chunking
    stride = max(c.window_tokens - c.window_overlap, 1)
    # Windows of a chunk are numbered 0..n-1; asking for a few more than its size allows is harmless.
    n = max(tokens - c.window_overlap, 1) // stride + 3
    return window_ids(chunk_id, n)


def resolve_hits(lib: Library, chunk_ids: list[str], qvec: np.ndarray, scope: Scope) -> dict[str, SearchHit]:
    """Each chunk with its best embedding window against the question: score, passage, page and box."""
    chunks = lib.chunks.get_many(chunk_ids)
    ids = [wid for cid in chunk_ids if cid in chunks for wid in _window_ids(cid, chunks[cid].tokens, lib)]
    best: dict[str, tuple[float, object]] = {}
    records = lib.windows.fetch(ids)
    if records:
        matrix = np.stack([vec for _, vec in records])
        sims = matrix @ np.asarray(qvec, dtype=np.float32)
        for (match, _), sim in zip(records, sims):
            cid = match.metadata.get("chunk_id", chunk_id_of(match.id))
            if cid not in best or sim > best[cid][0]:
                best[cid] = (float(sim), match)
    hits = {}
    for cid in chunk_ids:
        chunk = chunks.get(cid)
        if chunk is None:
            continue
        if cid in best:
            sim, match = best[cid]
            meta = match.metadata
            hit = SearchHit(chunk=chunk, score=sim, window_text=match.document,
                            page=int(meta.get("page", chunk.pages[0] if chunk.pages else 0)),
                            bbox=_parse_bbox(meta.get("bbox")), doc_title=scope.titles.get(chunk.doc_id, ""))
        else:  # a chunk without windows (should not happen): still citable, by its first page
            hit = SearchHit(chunk=chunk, score=0.0, window_text=chunk.text[:600],
                            page=chunk.pages[0] if chunk.pages else 0, bbox=None,
                            doc_title=scope.titles.get(chunk.doc_id, ""))
        hits[cid] = hit
    return hits


# ---------------------------------------------------------------------------------------------- graph walks
def _keyword_text(words: list[str]) -> str:
    return ", ".join(words)


def local_graph(lib: Library, keywords: Keywords, embed, params: QueryParams, scope: Scope
                ) -> tuple[list[RetrievedEntity], list[RetrievedRelation], list[str]]:
    if not keywords.low:
        return [], [], []
    qvec = embed(_keyword_text(keywords.low))
    overfetch = 1 if not params.doc_ids else 4
    matches = lib.entity_vectors.query(qvec, params.top_k * overfetch)
    keys = [m.metadata.get("key") for m in matches if m.metadata.get("key")]
    nodes = lib.graph.get_nodes(keys)
    scores = {m.metadata.get("key"): m.score for m in matches}
    entities: list[RetrievedEntity] = []
    for key in keys:
        node = nodes.get(key)
        if node is None or node.is_paper:
            continue
        chunks = [c for c in node.source_chunks if scope.allows_chunk(c)]
        if not chunks:
            continue
        entities.append(RetrievedEntity(key=key, name=node.name, type=node.type, description=node.description,
                                        score=scores.get(key, 0.0), source_chunks=chunks))
        if len(entities) == params.top_k:
            break
    degrees = lib.graph.degrees([e.key for e in entities])
    for e in entities:
        e.degree = degrees.get(e.key, 0)
    # One-hop relations of the retrieved entities, strongest (by endpoint degree, then weight) first.
    edges = [edge for edge in lib.graph.edges_of([e.key for e in entities]) if edge.relation == RELATED]
    names = _names(lib, {k for edge in edges for k in edge.pair} - {e.key for e in entities}, entities)
    edge_degrees = lib.graph.degrees({k for edge in edges for k in edge.pair})
    edges.sort(key=lambda ed: (-(edge_degrees.get(ed.source, 0) + edge_degrees.get(ed.target, 0)), -ed.weight))
    relations = [_relation(ed, names, 0.0, scope) for ed in edges]
    relations = [r for r in relations if r.source_chunks][:params.top_k]
    # Chunks: each entity's source chunks in entity order, those more retrieved relations point to first.
    pointed = Counter(c for r in relations for c in r.source_chunks)
    chunk_ids: list[str] = []
    for e in entities:
        ranked = sorted(e.source_chunks, key=lambda c: -pointed.get(c, 0))[:GRAPH_CHUNK_CANDIDATES]
        chunk_ids.extend(c for c in ranked if c not in chunk_ids)
    return entities, relations, chunk_ids


def global_graph(lib: Library, keywords: Keywords, embed, params: QueryParams, scope: Scope
                 ) -> tuple[list[RetrievedEntity], list[RetrievedRelation], list[str]]:
    if not keywords.high:
        return [], [], []
    qvec = embed(_keyword_text(keywords.high))
    overfetch = 1 if not params.doc_ids else 4
    matches = lib.relation_vectors.query(qvec, params.top_k * overfetch)
    pairs = [(m.metadata.get("source"), m.metadata.get("target")) for m in matches
             if m.metadata.get("source") and m.metadata.get("target")]
    scores = {(m.metadata.get("source"), m.metadata.get("target")): m.score for m in matches}
    edges = lib.graph.get_edges(pairs)
    endpoint_keys = list(dict.fromkeys(k for p in pairs if p in edges for k in p))
    nodes = lib.graph.get_nodes(endpoint_keys)
    names = {k: n.name for k, n in nodes.items()}
    relations = []
    for pair in pairs:
        edge = edges.get(pair)
        if edge is None:
            continue
        relation = _relation(edge, names, scores.get(pair, 0.0), scope)
        if relation.source_chunks:
            relations.append(relation)
        if len(relations) == params.top_k:
            break
    degrees = lib.graph.degrees(endpoint_keys)
    entities = []
    for key in dict.fromkeys(k for r in relations for k in r.pair):
        node = nodes.get(key)
        if node is not None and not node.is_paper:
            entities.append(RetrievedEntity(key=key, name=node.name, type=node.type, description=node.description,
                                            score=0.0, degree=degrees.get(key, 0),
                                            source_chunks=[c for c in node.source_chunks if scope.allows_chunk(c)]))
    chunk_ids: list[str] = []
    for r in relations:
        chunk_ids.extend(c for c in r.source_chunks[:GRAPH_CHUNK_CANDIDATES] if c not in chunk_ids)
    return entities, relations, chunk_ids


def _names(lib: Library, keys: set[str], entities: list[RetrievedEntity]) -> dict[str, str]:
    names = {e.key: e.name for e in entities}
    names.update({k: n.name for k, n in lib.graph.get_nodes(keys).items()})
    return names


def _relation(edge, names: dict[str, str], score: float, scope: Scope) -> RetrievedRelation:
    return RetrievedRelation(source=edge.source, target=edge.target, source_name=names.get(edge.source, edge.source),
                             target_name=names.get(edge.target, edge.target), keywords=edge.keywords,
                             description=edge.description, weight=edge.weight, score=score,
                             source_chunks=[c for c in edge.source_chunks if scope.allows_chunk(c)])


def merge_round_robin(lists: list[list], key) -> list:
    """Round-robin over the sources' lists, first occurrence kept: LightRAG's way of joining local and global."""
    seen, out = set(), []
    for i in range(max((len(x) for x in lists), default=0)):
        for items in lists:
            if i < len(items) and key(items[i]) not in seen:
                seen.add(key(items[i]))
                out.append(items[i])
    return out


# ---------------------------------------------------------------------------------------------- chunk sources
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


def naive_chunks(probe: Probe) -> Proposal:
    lib, params, scope = probe.lib, probe.params, probe.scope
    vector_ids = vector_chunk_ids(lib, probe.qvec, params.chunk_top_k * 2, scope)
    bm25_ids = bm25_chunk_ids(lib, probe.question, params.chunk_top_k * 2, scope) if params.bm25 else []
    via: dict[str, list[str]] = {}
    for name, ids in (("vector", vector_ids), ("bm25", bm25_ids)):
        for cid in ids:
            via.setdefault(cid, []).append(name)
    return Proposal([cid for cid, _ in rrf([vector_ids, bm25_ids])] if bm25_ids else vector_ids, via)


def _graph_source(walk, via: str) -> Callable[[Probe], Proposal]:
    def propose(probe: Probe) -> Proposal:
        entities, relations, ids = walk(probe.lib, probe.keywords, probe.embed, probe.params, probe.scope)
        return Proposal(ids, {cid: [via] for cid in ids}, entities, relations)
    return propose


NAIVE = ChunkSource("naive", naive_chunks, graph=False)
LOCAL = ChunkSource("local", _graph_source(local_graph, "entity"), graph=True)
GLOBAL = ChunkSource("global", _graph_source(global_graph, "relation"), graph=True)


def retrieve(lib: Library, question: str, keywords: Keywords | None, params: QueryParams,
             sources: Sequence[ChunkSource], reranker=None, embed=None) -> Retrieval:
    """Run the sources of one mode and fuse what they propose. `embed` embeds one query text (cached by the
    caller across modes); `reranker` reorders the candidate chunks (None: keep the fused order)."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    scope = scope_of(lib, params)
    result = Retrieval(mode=params.mode, keywords=keywords)
    if not scope.doc_ids:
        result.notes.append("no ready paper matches the filter: nothing to search")
        return result
    embed = embed or lib.embedder().embed_query
    if keywords is not None and hasattr(embed, "prefetch"):  # one batch for the question and both keyword texts
        embed.prefetch([question, _keyword_text(keywords.low), _keyword_text(keywords.high)])
    probe = Probe(lib, question, embed(question), keywords, embed, params, scope)
    rankings: list[list[str]] = []
    via: dict[str, list[str]] = {}
    for source in sources:
        if source.graph and keywords is None:
            continue
        t = time.perf_counter()
        proposal = source.propose(probe)
        rankings.append(proposal.chunk_ids)
        for cid, reasons in proposal.via.items():
            via.setdefault(cid, []).extend(reasons)
        result.entities = merge_round_robin([result.entities, proposal.entities], lambda e: e.key)
        result.relations = merge_round_robin([result.relations, proposal.relations], lambda r: r.pair)
        timings[f"{source.name}_s"] = time.perf_counter() - t
    if any(s.graph for s in sources) and not result.entities and not result.relations:
        result.notes.append("the graph gave nothing for this question (is the graph built?)")

    # Naive ranks come first in mix because they are ranked against the question itself; graph sources add
    # the chunks vector search cannot reach (the second hop).
    candidates = merge_round_robin(rankings, lambda cid: cid)
    limit = params.chunk_top_k * (3 if reranker is not None else 1)
    candidates = candidates[:max(limit, params.chunk_top_k)]
    t = time.perf_counter()
    hits = resolve_hits(lib, candidates, probe.qvec, scope)
    timings["resolve_s"] = time.perf_counter() - t
    chunks = [RetrievedChunk(hit=hits[cid], score=1.0 / (RRF_K + rank + 1), via=via.get(cid, []))
              for rank, cid in enumerate(candidates) if cid in hits]
    if reranker is not None and chunks:
        t = time.perf_counter()
        chunks = reranker.rerank(question, probe.qvec, chunks)
        timings["rerank_s"] = time.perf_counter() - t
    result.chunks = chunks[:params.chunk_top_k]
    timings["retrieve_s"] = time.perf_counter() - started
    result.timings = timings
    return result
