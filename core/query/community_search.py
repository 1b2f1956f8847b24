"""Microsoft GraphRAG's global search, as an extra mode when community reports exist: rank the reports by the
question, map over the best ones (one LLM call each: the points that help, scored), and hand the points — with
passages from the communities' entities, so the answer can still cite pages — to the answer step (the reduce).
Without an LLM the map is extractive: the report's findings closest to the question."""
from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from core.library import Library
from core.models.llm.base import ChatModel, LLMError
from core.prompts import PROMPTS
from core.query.records import Keywords, QueryParams, Retrieval, RetrievedChunk, Routed
from core.query.retrieve import closest_chunks, resolve_hits
from core.query.sources import RRF_K, scope_of
from core.text.json_reply import read_json_object

log = logging.getLogger(__name__)
COMMUNITY_PASSAGES = 40  # candidates handed to the reranker, from the top communities' entities
MAX_COMMUNITY_CHUNKS = 2000  # read at most (a community of a large collection names many passages)


def report_text(report: dict) -> str:
    findings = " ".join(report.get("findings") or [])
    return f"{report.get('title', '')}: {report.get('summary', '')} {findings}".strip()


_VECTORS_LOCK = threading.Lock()
_TEXT_VECTORS: dict[tuple, dict[str, np.ndarray]] = {}  # (workspace, model, variant) -> text -> vector
_RANKED: dict[str, tuple[str, list[dict], np.ndarray]] = {}  # workspace -> (communities version, reports, vectors)
MAX_CACHED_TEXTS = 50_000


def _text_vectors(lib: Library, texts: list[str]) -> np.ndarray:
    """Vectors of report texts and findings, embedding only those this process has not embedded before: a
    communities refresh after one more paper rewrites a few reports, and keying the vectors by the communities
    version re-embedded all of them (250 reports at 100k chunks: minutes on a busy machine, at the first question
    after every add)."""
    config = lib.settings.embedding
    key = (str(lib.workspace.root), config.model, config.variant)
    with _VECTORS_LOCK:
        cache = _TEXT_VECTORS.setdefault(key, {})
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
    if missing:
        vectors = lib.embedder().embed(missing)
        with _VECTORS_LOCK:
            if len(cache) + len(missing) > MAX_CACHED_TEXTS:  # texts of old versions go; current ones come back
                cache.clear()
            cache.update(zip(missing, vectors))
    with _VECTORS_LOCK:
        found = [cache.get(t) for t in texts]
    if any(v is None for v in found):  # cleared by another thread meanwhile
        return lib.embedder().embed(texts)
    return np.stack(found) if found else np.zeros((0, 1), dtype=np.float32)


def _ranked_reports(lib: Library, qvec: np.ndarray) -> list[tuple[dict, float]]:
    version = lib.graph_sources.meta("communities_version", "")
    root = str(lib.workspace.root)
    cached = _RANKED.get(root)
    if cached is None or cached[0] != version:
        reports = lib.graph_sources.community_reports()
        texts = [report_text(r)[:2000] for r in reports]
        # The findings too, in the same batch: the extractive map reads the top reports' findings at every
        # question, and embedding them there took about half of each question's time at 100k chunks (250
        # reports) until every report had been among the top ones once. The first question pays for them.
        findings = [f for r in reports for f in _findings(r)]
        vectors = _text_vectors(lib, texts + findings)[:len(texts)] if reports else np.zeros((0, 1))
        cached = _RANKED[root] = (version, reports, vectors)
    _, reports, vectors = cached
    if not reports:
        return []
    sims = vectors @ np.asarray(qvec, dtype=np.float32)
    order = np.argsort(-sims)
    return [(reports[i], float(sims[i])) for i in order]


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


def _findings(report: dict) -> list[str]:
    """What the extractive map scores against the question: the findings, else the summary."""
    return [f for f in (report.get("findings") or []) if f.strip()] or [report.get("summary", "")]


def _map_extractive(lib: Library, question_vec: np.ndarray, report: dict, sim: float) -> list[tuple[str, float]]:
    findings = _findings(report)
    # Embedded once per text and process, as the reports are: embedding a report's findings at every question
    # cost about 1 s of the mode's 1.4 s p95 on the ten shared papers.
    vectors = _text_vectors(lib, findings)
    sims = vectors @ np.asarray(question_vec, dtype=np.float32)
    return [(f, round(100 * float(s), 1)) for f, s in sorted(zip(findings, sims), key=lambda x: -x[1])[:3]]


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
            futures = [(r, pool.submit(_map_llm, llm, question, r)) for r, _ in top]
            for report, future in futures:
                try:
                    found, made = future.result()
                except LLMError as exc:
                    result.notes.append(f"the map over community {report.get('community')} failed: {exc}")
                    continue
                calls += made
                points.extend((text, score, report.get("title", "")) for text, score in found)
    else:
        for report, sim in top:
            points.extend((t, s, report.get("title", "")) for t, s in _map_extractive(lib, qvec, report, sim))
    points.sort(key=lambda p: -p[1])
    result.reports = [{**r, "similarity": round(s, 3)} for r, s in top]
    section = "\n".join(f"- ({score:.0f}) {text} — from the report “{title}”" for text, score, title in points)
    # Passages: those of the top communities' entities, so every claim can still cite a page; the
    # COMMUNITY_PASSAGES closest to the question go to the reranker. Only the two first passages of each
    # community's six most connected entities, as before, read the Semantic Scholar community's passage on author
    # nodes for "How many unique paper nodes does the … literature graph contain?" and never the one saying 37M.
    keys = list(dict.fromkeys(k for r, _ in top for k in (r.get("entities") or [])))
    chunk_ids = list(dict.fromkeys(c for node in lib.graph.get_nodes(keys).values() for c in node.source_chunks
                                   if scope.allows_chunk(c)))
    closest = closest_chunks(lib, chunk_ids[:MAX_COMMUNITY_CHUNKS], qvec, COMMUNITY_PASSAGES)
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
