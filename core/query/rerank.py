"""Rerankers: reorder a mode's candidate chunks against the question.

No cross-encoder ships its weights in a PyPI wheel, so the default is a fusion of signals we already have:
the chunk's best embedding window, BM25 with the whole collection's statistics, and the mode's own order, joined
by reciprocal rank. A cross-encoder from a local folder, or the LLM, can replace it.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from core.library import Library
from core.models.llm.base import ChatModel, LLMError
from core.prompts import PROMPTS
from core.query.records import RetrievedChunk
from core.query.sources import RRF_K, rrf
from core.text.json_reply import excerpt, read_json_object

log = logging.getLogger(__name__)


class Reranker(Protocol):
    name: str

    def rerank(self, question: str, qvec: np.ndarray, chunks: Sequence[RetrievedChunk]) -> list[RetrievedChunk]:
        """The same chunks, best first, with `score` set to the reranker's score."""


def _reordered(chunks: Sequence[RetrievedChunk], scores: dict[str, float]) -> list[RetrievedChunk]:
    out = sorted(chunks, key=lambda c: -scores.get(c.id, float("-inf")))
    for c in out:
        c.score = scores.get(c.id, 0.0)
    return out


def with_mode_order(reranked: Sequence[RetrievedChunk], mode_order: Sequence[str],
                    weight: float) -> list[RetrievedChunk]:
    """The reranker's order fused by reciprocal rank with the mode's own, which counts `weight` times as much.

    A reranker scores each passage alone against the question, so it pushes down the second hop of a multi-hop
    question (the passage that shares no word with it), which a graph route placed high because a passage of the
    first hop names its entity. Ties keep the reranker's order."""
    scores = dict(rrf([[c.id for c in reranked]]))
    for rank, cid in enumerate(mode_order):
        if cid in scores:
            scores[cid] += weight / (RRF_K + rank + 1)
    return _reordered(reranked, scores)


class FusionReranker:
    """Reciprocal-rank fusion of best-window cosine, BM25 and the mode's order."""

    name = "fusion (embedding window + BM25)"

    def __init__(self, lib: Library, keep_mode_order: bool = True):
        self.lib = lib
        self.keep_mode_order = keep_mode_order

    def rerank(self, question, qvec, chunks):
        by_window = [c.id for c in sorted(chunks, key=lambda c: -c.hit.score)]
        bm25 = self.lib.fulltext.scores(question, [c.id for c in chunks])
        by_bm25 = [cid for cid, _ in sorted(bm25.items(), key=lambda kv: -kv[1])]
        rankings = [by_window, by_bm25] + ([[c.id for c in chunks]] if self.keep_mode_order else [])
        return _reordered(chunks, dict(rrf(rankings)))


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder from a local folder the user points to (never downloaded)."""

    def __init__(self, path: str):
        folder = Path(path).expanduser()
        if not (folder / "config.json").exists():
            raise ValueError(f"{folder} is not a cross-encoder model folder (no config.json)")
        from sentence_transformers import CrossEncoder  # 5-15 s to import: only when a cross-encoder is set

        self.model = CrossEncoder(str(folder), device="cpu", local_files_only=True)
        self.name = f"cross-encoder ({folder.name})"

    def rerank(self, question, qvec, chunks):
        if not chunks:
            return []
        scores = self.model.predict([(question, c.hit.chunk.text[:2000]) for c in chunks], show_progress_bar=False)
        return _reordered(chunks, {c.id: float(s) for c, s in zip(chunks, scores)})


class LLMReranker:
    """One LLM call scoring every candidate 0-10; a reply that cannot be read keeps the previous order."""

    def __init__(self, llm: ChatModel, fallback: Reranker):
        self.llm, self.fallback = llm, fallback
        self.name = f"LLM ({llm.name})"
        self.calls = 0

    def rerank(self, question, qvec, chunks):
        chunks = self.fallback.rerank(question, qvec, chunks)
        passages = "\n\n".join(f"[{i}] {c.hit.chunk.text[:700]}" for i, c in enumerate(chunks, 1))
        try:
            reply = self.llm.chat([{"role": "user", "content": PROMPTS["llm_rerank"].format(
                question=question, passages=passages)}], purpose="rerank", response_format={"type": "json_object"},
                max_tokens=40 + 12 * len(chunks), temperature=0.0)
            self.calls += 0 if reply.cached else 1
            data = read_json_object(reply.text)
            if data is None and "{" in reply.text:
                raise ValueError(f"the rerank reply is not JSON: {excerpt(reply.text)}")
            # A reply without any JSON scores no passage: all keep their fusion order, below any scored one.
            entries = data["scores"] if data is not None else []
            llm_scores = {int(e["id"]): float(e["score"]) for e in entries if isinstance(e, dict)}
        except (LLMError, ValueError, KeyError, TypeError) as exc:
            log.warning("LLM rerank failed, keeping the fusion order: %s", exc)
            return chunks
        # Ties (and passages the LLM skipped) keep the fusion order.
        scores = {c.id: llm_scores.get(i, -1.0) - i * 1e-6 for i, c in enumerate(chunks, 1)}
        return _reordered(chunks, scores)


def make_reranker(lib: Library, use_llm: bool = True) -> Reranker:
    q = lib.settings.query
    fusion = FusionReranker(lib)
    if q.reranker in ("auto", "cross-encoder") and q.cross_encoder_path:
        try:
            path = q.cross_encoder_path
            return lib.resources.get(("cross-encoder", path), lambda: CrossEncoderReranker(path))
        except (ValueError, OSError) as exc:
            if q.reranker == "cross-encoder":
                raise
            log.warning("cross-encoder unavailable, using the fusion reranker: %s", exc)
    llm = lib.chat_model() if use_llm else None
    if q.reranker == "llm" and llm is not None:
        return LLMReranker(llm, fusion)
    return fusion

