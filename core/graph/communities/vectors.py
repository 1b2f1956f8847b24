"""The vectors of the community reports: each report's text (what the community mode ranks reports by) and its
findings (what its extractive map scores against the question), embedded when a refresh writes the reports and
kept beside them (core.store.sqlite_communities), so no question embeds a report.

Why stored: embedded in the query process at its first community question they cost ~90 CPU-s at 100k chunks
(250 reports, 1,500 texts), paid again by every new process (each Streamlit session's worker, each CLI call).

Each vector is stored with the hash of its text and the vector space it is in (core.models.embedding.vector_space);
only those whose hash matches the report's current text and whose space is the configured embedder's are used.
So a refresh embeds only the texts it changed (an unchanged text is found by its hash, whatever community it is
now numbered), a model or variant switch never compares a question with vectors of the old space, and a report
without usable vectors (a workspace made before they were kept, one re-embedded since, reports written by
another path) has them embedded and stored once, at the first question that reads it.
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from core.library import Library
from core.models.embedding import vector_space
from core.store.base import CommunityState, VectorRow

MAX_REPORT_CHARS = 2000  # of the report's text embedded: the model reads no further anyway


def report_text(report: dict) -> str:
    findings = " ".join(report.get("findings") or [])
    return f"{report.get('title', '')}: {report.get('summary', '')} {findings}".strip()


def report_findings(report: dict) -> list[str]:
    """What the extractive map scores against the question: the findings, else the summary."""
    return [f for f in (report.get("findings") or []) if f.strip()] or [report.get("summary", "")]


def embedded_texts(report: dict) -> list[str]:
    """The texts of a report that have vectors, in their stored order: its text, then its findings. A report
    without findings (every LLM-free one) has its text alone: the summary the map falls back to is that text
    but for the title, and embedding it again doubled the refresh's cost (13 s of a 994-document ingest)."""
    findings = [f for f in (report.get("findings") or []) if f.strip()]
    return [report_text(report)[:MAX_REPORT_CHARS], *findings]


def findings_vectors(vectors: np.ndarray) -> np.ndarray:
    """The rows of a report's vectors (those of embedded_texts) that score report_findings: the findings', or
    for a report without findings the report text's, standing for its summary."""
    return vectors[1:] if len(vectors) > 1 else vectors[:1]


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def current_space(lib: Library) -> str:
    """The configured embedder's vector space, without loading the model."""
    return vector_space(lib.settings.embedding.model, lib.settings.embedding.variant)


def vector_rows(lib: Library, store: CommunityState, reports: Sequence[dict]) -> list[VectorRow]:
    """The vector rows of these reports: a text already stored in the current space (by its hash, under any
    community) is reused, the others are embedded, in one batch."""
    space = current_space(lib)
    wanted = [(r["community"], i, text_sha(t), t) for r in reports for i, t in enumerate(embedded_texts(r))]
    known = store.vectors_by_sha(space, {sha for _, _, sha, _ in wanted})
    missing = list(dict.fromkeys(t for _, _, sha, t in wanted if sha not in known))
    if missing:
        embedder = lib.embedder()
        known.update(zip((text_sha(t) for t in missing),
                         embedder.embed(missing, batch_size=lib.settings.embedding.batch_size)))
    return [VectorRow(community, ord_, sha, np.asarray(known[sha], dtype=np.float32))
            for community, ord_, sha, _ in wanted]


def report_vectors(lib: Library, reports: Sequence[dict]) -> dict[int, np.ndarray]:
    """community → the vectors of its embedded_texts (one row each), read from the store; reports without
    usable stored vectors get them embedded and stored now (once: the next process reads them)."""
    store = lib.community_state
    space = current_space(lib)
    stored = store.vectors(space, [r["community"] for r in reports])
    out: dict[int, np.ndarray] = {}
    stale: list[dict] = []
    for report in reports:
        rows = stored.get(report["community"], {})
        texts = embedded_texts(report)
        if all(i in rows and rows[i][0] == text_sha(t) for i, t in enumerate(texts)):
            out[report["community"]] = np.stack([rows[i][1] for i in range(len(texts))])
        else:
            stale.append(report)
    if stale:
        rows = vector_rows(lib, store, stale)
        store.put_vectors(rows, space)
        by_community: dict[int, list[np.ndarray]] = {}
        for row in rows:
            by_community.setdefault(row.community, []).append(row.vector)
        out.update({c: np.stack(v) for c, v in by_community.items()})
    return out
