"""Microsoft GraphRAG's global search, as an extra mode when community reports exist: rank the reports by the
question, map over the best ones (one LLM call each: the points that help, scored), and hand the points — with
passages from the communities' entities, so the answer can still cite pages — to the answer step (the reduce).
Without an LLM the map is extractive: the report's findings closest to the question."""
from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from core.graph.communities.vectors import (
    current_space,
    findings_vectors,
    report_findings,
    report_text,
    report_vectors,
)
from core.graph.vectors import entity_vector_id
from core.library import Library
from core.models.llm.base import ChatModel, LLMError
from core.prompts import PROMPTS
from core.query.records import Keywords, QueryParams, Retrieval, RetrievedChunk, Routed
from core.query.retrieve import closest_chunks, resolve_hits
from core.query.sources import RRF_K, Scope, scope_of
from core.text.json_reply import read_json_object

log = logging.getLogger(__name__)
COMMUNITY_PASSAGES = 40  # candidates handed to the reranker, from the top communities' entities
# Passages scored by their windows at most: those of the entities closest to the question when the top communities
# name more. Scoring 2,000 (3,000 named by five communities of 200 entities at 100k chunks) took ~110 of the mode's
# ~150 ms a question (reading the passages and ~7,000 window vectors); 400 keeps every passage of the shared
# papers' top communities (~230), so a small collection loses none.
COMMUNITY_CANDIDATES = 400
COMMUNITY_ENTITIES = 200  # ranked by the vector store among the top communities' entities (~3 passages each)


_LOCK = threading.Lock()
# workspace -> (communities version, vector space, reports, their text vectors, community -> findings' vectors)
_RANKED: dict[str, tuple[str, str, list[dict], np.ndarray, dict[int, np.ndarray]]] = {}


def _ranked_reports(lib: Library, qvec: np.ndarray) -> list[tuple[dict, float, np.ndarray]]:
    """(report, similarity, its findings' vectors), closest to the question first. The reports' vectors and
    their findings' (which the extractive map scores) are read from the store, where the refresh put them
    (core.graph.communities.vectors), and kept in this process until the reports or the embedding
    space change."""
    version = lib.graph_sources.meta("communities_version", "")
    space = current_space(lib)
    root = str(lib.workspace.root)
    cached = _RANKED.get(root)
    if cached is None or cached[:2] != (version, space):
        with _LOCK:  # concurrent first questions read (and, for an older workspace, embed) once
            cached = _RANKED.get(root)
            if cached is None or cached[:2] != (version, space):
                reports = lib.graph_sources.community_reports()
                vectors = report_vectors(lib, reports)
                matrix = (np.stack([vectors[r["community"]][0] for r in reports]) if reports
                          else np.zeros((0, 1), dtype=np.float32))
                cached = _RANKED[root] = (version, space, reports, matrix,
                                          {r["community"]: findings_vectors(vectors[r["community"]]) for r in reports})
    _, _, reports, matrix, findings = cached
    if not reports:
        return []
    sims = matrix @ np.asarray(qvec, dtype=np.float32)
    order = np.argsort(-sims)
    return [(reports[i], float(sims[i]), findings[reports[i]["community"]]) for i in order]


def _map_llm(llm: ChatModel, question: str, report: dict) -> tuple[list[tuple[str, float]], int]:
    body = report_text(report)
    reply = llm.chat([{"role": "user", "content": PROMPTS["community_map"].format(report=body, question=question)}],
                     purpose="community-map", response_format={"type": "json_object"}, max_tokens=500,
                     temperature=0.0)
    data = read_json_object(reply.text)
    points = []
    try:
        if data is None:
            raise ValueError("not JSON")
        for p in data.get("points", []):
            if isinstance(p, dict) and str(p.get("description", "")).strip():
                points.append((" ".join(str(p["description"]).split()), float(p.get("score", 50))))
    except (ValueError, TypeError, AttributeError):
        log.warning("community map reply could not be read: %r", (reply.text or "")[:120])
    return points, 0 if reply.cached else 1


def _map_extractive(question_vec: np.ndarray, report: dict, vectors: np.ndarray) -> list[tuple[str, float]]:
    findings = report_findings(report)
    sims = vectors @ np.asarray(question_vec, dtype=np.float32)
    return [(f, round(100 * float(s), 1)) for f, s in sorted(zip(findings, sims), key=lambda x: -x[1])[:3]]


def _candidates(lib: Library, keys: list[str], qvec: np.ndarray, scope: Scope) -> list[str]:
    """The passages of these entities, at most COMMUNITY_CANDIDATES: when they name more, those of the
    COMMUNITY_ENTITIES entities whose own vectors lie closest to the question first (then the others, in the
    communities' order), so what is cut is what the question is least about rather than the last communities'
    least connected entities."""
    nodes = lib.graph.get_nodes(keys)
    present = [k for k in keys if k in nodes]
    chunk_ids = list(dict.fromkeys(c for k in present for c in nodes[k].source_chunks if scope.allows_chunk(c)))
    if len(chunk_ids) <= COMMUNITY_CANDIDATES:
        return chunk_ids
    by_id = {entity_vector_id(k): k for k in present}
    closest = [by_id[m.id] for m in lib.entity_vectors.query(qvec, COMMUNITY_ENTITIES, among=list(by_id))
               if m.id in by_id]
    out: dict[str, None] = {}
    for key in dict.fromkeys(closest + present):
        out.update((c, None) for c in nodes[key].source_chunks if scope.allows_chunk(c))
        if len(out) >= COMMUNITY_CANDIDATES:
            break
    return list(out)[:COMMUNITY_CANDIDATES]


def community_retrieve(lib: Library, question: str, params: QueryParams, *, llm: ChatModel | None, embed,
                       reranker=None, keywords: Keywords | None = None) -> Routed:
    """The community mode's route: the reports and passages retrieved, the report points as a section of the
    context, and the map's LLM calls. `keywords` is not used: the reports are ranked by the question itself."""
    result = Retrieval(mode=params.mode, keywords=None)
    routed = Routed(result, llm_free=[] if llm is not None else ["community map"])
    scope = scope_of(lib, params)
    qvec = embed(question)
    ranked = _ranked_reports(lib, qvec)
    if not ranked:
        result.notes.append("no community reports yet: they are built with the graph (or `python -m core graph "
                            "communities`)")
        return routed
    top = ranked[:params.community_top]
    calls = 0
    points: list[tuple[str, float, str]] = []
    if llm is not None:
        with ThreadPoolExecutor(max_workers=min(4, len(top))) as pool:
            futures = [(r, pool.submit(_map_llm, llm, question, r)) for r, _, _ in top]
            for report, future in futures:
                try:
                    found, made = future.result()
                except LLMError as exc:
                    result.notes.append(f"the map over community {report.get('community')} failed: {exc}")
                    continue
                calls += made
                points.extend((text, score, report.get("title", "")) for text, score in found)
    else:
        for report, _, vectors in top:
            points.extend((t, s, report.get("title", "")) for t, s in _map_extractive(qvec, report, vectors))
    points.sort(key=lambda p: -p[1])
    result.reports = [{**r, "similarity": round(s, 3)} for r, s, _ in top]
    section = "\n".join(f"- ({score:.0f}) {text} — from the report “{title}”" for text, score, title in points)
    # Passages: those of the top communities' entities, so every claim can still cite a page; the
    # COMMUNITY_PASSAGES closest to the question go to the reranker. Only the two first passages of each
    # community's six most connected entities, as before, read the Semantic Scholar community's passage on author
    # nodes for "How many unique paper nodes does the … literature graph contain?" and never the one saying 37M.
    keys = list(dict.fromkeys(k for r, _, _ in top for k in (r.get("entities") or [])))
    closest = closest_chunks(lib, _candidates(lib, keys, qvec, scope), qvec, COMMUNITY_PASSAGES)
    hits = resolve_hits(lib, closest, qvec, scope)
    chunks = [RetrievedChunk(hit=hits[c], score=1.0 / (RRF_K + i + 1), via=["community"])
              for i, c in enumerate(closest)]
    if reranker is not None and chunks:
        chunks = reranker.rerank(question, qvec, chunks)
    else:
        chunks.sort(key=lambda c: -c.hit.score)
    result.chunks = chunks[:params.chunk_top_k]
    routed.llm_calls = calls
    if section:
        routed.sections.append(("Community report points", section))
    return routed
