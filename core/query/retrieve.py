"""The fusion of a mode's chunk sources (`retrieve`): each source proposes chunks, their rankings are joined
round-robin, every chunk is resolved to its best-matching embedding window against the question (so a citation
can show the page and the box of the passage that matters, whatever source found it), and the reranker orders
the candidates.

The sources: naive in core.query.sources, local and global in core.query.walks, ppr in core.query.ppr; which
sources each mode runs (hybrid: local + global; mix: ppr + naive) is its route in core.query.routes.
"""
from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from core.library import Library
from core.query.records import Keywords, QueryParams, Retrieval, RetrievedChunk
from core.query.rerank import with_mode_order
from core.query.search import _parse_bbox
from core.query.sources import RRF_K, ChunkSource, Probe, Scope, scope_of
from core.schema.ids import chunk_id_of, window_ids
from core.schema.records import SearchHit


def chunk_window_ids(chunk_id: str, tokens: int, lib: Library) -> list[str]:
    c = lib.settings.chunking
    stride = max(c.window_tokens - c.window_overlap, 1)
    # Windows of a chunk are numbered 0..n-1; asking for a few more than its size allows is harmless.
    n = max(tokens - c.window_overlap, 1) // stride + 3
    return window_ids(chunk_id, n)


def resolve_hits(lib: Library, chunk_ids: list[str], qvec: np.ndarray, scope: Scope) -> dict[str, SearchHit]:
    """Each chunk with its best embedding window against the question: score, passage, page and box."""
    chunks = lib.chunks.get_many(chunk_ids)
    ids = [wid for cid in chunk_ids if cid in chunks for wid in chunk_window_ids(cid, chunks[cid].tokens, lib)]
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


def closest_chunks(lib: Library, chunk_ids: list[str], qvec: np.ndarray, k: int) -> list[str]:
    """The k of these chunks whose best window lies closest to the question, closest first (ties in the given
    order); a chunk without windows scores 0, as in resolve_hits. Scored on the window vectors alone: the
    community mode ranks hundreds of candidates, and reading every window whole (text and metadata) to keep 40
    cost about twice what the vectors alone do."""
    chunks = lib.chunks.get_many(chunk_ids)
    present = [cid for cid in chunk_ids if cid in chunks]
    vectors = lib.windows.get_embeddings([wid for cid in present
                                          for wid in chunk_window_ids(cid, chunks[cid].tokens, lib)])
    best: dict[str, float] = {}
    if vectors:
        sims = np.stack(list(vectors.values())) @ np.asarray(qvec, dtype=np.float32)
        for wid, sim in zip(vectors, sims):
            cid = chunk_id_of(wid)
            best[cid] = max(best.get(cid, float("-inf")), float(sim))
    return sorted(present, key=lambda cid: -best.get(cid, 0.0))[:k]


def merge_round_robin(lists: list[list], key) -> list:
    """Round-robin over the sources' lists, first occurrence kept: LightRAG's way of joining local and global."""
    seen, out = set(), []
    for i in range(max((len(x) for x in lists), default=0)):
        for items in lists:
            if i < len(items) and key(items[i]) not in seen:
                seen.add(key(items[i]))
                out.append(items[i])
    return out


def retrieve(lib: Library, question: str, keywords: Keywords | None, params: QueryParams,
             sources: Sequence[ChunkSource], reranker=None, embed=None, order_weight: float = 0.0) -> Retrieval:
    """Run the sources of one mode and fuse what they propose. `embed` embeds one query text (cached by the
    caller across modes); `reranker` reorders the candidate chunks (None: keep the fused order); `order_weight`
    > 0: the fused order still counts that much against the reranker's (rerank.with_mode_order)."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    scope = scope_of(lib, params)
    result = Retrieval(mode=params.mode, keywords=keywords)
    if not scope.doc_ids:
        result.notes.append("no ready paper matches the filter: nothing to search")
        return result
    embed = embed or lib.embedder().embed_query
    if keywords is not None and hasattr(embed, "prefetch"):  # the question and what the sources embed, together
        embed.prefetch([question, *(text for source in sources for text in source.queries(keywords))])
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
        reranked = reranker.rerank(question, probe.qvec, chunks)
        chunks = with_mode_order(reranked, candidates, order_weight) if order_weight else reranked
        timings["rerank_s"] = time.perf_counter() - t
    result.chunks = chunks[:params.chunk_top_k]
    timings["retrieve_s"] = time.perf_counter() - started
    result.timings = timings
    return result
