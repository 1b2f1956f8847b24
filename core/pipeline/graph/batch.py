"""The graph stage of many papers at once, for an extractor that reads many papers in one call (the LLM-free one).

One paper at a time, a short document's graph stage was mostly fixed cost: its own rebuild of every dirty node and
edge (a hub entity merged again from all its sources for every paper that mentions it), its own embedding call for
a dozen entity and relation texts, its own spaCy batch. A batch of papers is extracted in one extractor call, each
paper's contributions committed in its own transaction (a crash mid-batch leaves every paper either committed
whole or not at all, and the dirty marks of those committed: the next run's rebuild repairs them), then one rebuild
merges, writes and embeds what the whole batch touched (each distinct text once, core.graph.vectors), and
only then does each paper become `done`. The merged graph is a pure function of the contributions, so it is the
one the one-at-a-time path builds (tests/pipeline/test_graph_batch.py).

An LLM extractor keeps the one-at-a-time path (core.pipeline.graph.stage.process_graph): a paper's extraction can
take many minutes, pauses for uploads and reports per chunk.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

from core.content.content_list import load_content_list
from core.graph.lock import graph_lock
from core.library import Library
from core.pipeline.graph.build import (
    ExtractOutcome,
    Interrupted,
    chunks_to_extract,
    commit_document,
    outcome_status,
    rebuild_dirty,
)
from core.pipeline.graph.media_entities import with_media_entity
from core.pipeline.status import StageReporter
from core.schema.graph import Extractor, PaperRecord, text_sha
from core.schema.records import DocStatus, Document, GraphStatus

log = logging.getLogger(__name__)

# A batch ends at this many papers or chunks, whichever comes first: ~64 chunks fill the embedder's batches with
# entity and relation texts and keep spaCy's batches full, yet a paper waits at most seconds for the rest of its
# batch; a long paper (more chunks than this) is a batch of its own.
BATCH_DOCS = 64
BATCH_CHUNKS = 64


def reads_many_papers(extractor: Extractor) -> bool:
    """The extractor reads many papers in one call and returns at once (no LLM): its papers go in batches."""
    return bool(getattr(extractor, "reads_many_papers", False))


def claim_batch(lib: Library, worker: str, limit: int | None = None) -> list[Document]:
    """Claim ready papers whose graph is pending, oldest first, until the batch is full."""
    docs: list[Document] = []
    chunks = 0
    while len(docs) < min(limit or BATCH_DOCS, BATCH_DOCS) and chunks < BATCH_CHUNKS:
        doc = lib.queue.claim_graph_next(worker)
        if doc is None:
            break
        docs.append(doc)
        chunks += doc.chunk_count
    return docs


@dataclass
class _Paper:
    doc: Document
    report: StageReporter
    outcome: ExtractOutcome | None = None
    error: str = ""
    record: PaperRecord | None = None
    finished: int = 0  # chunks extracted (now or before)

    def say(self, detail: str, fraction: float) -> None:
        """Progress for the caller only: the registry gets a batch's stages (a write per paper per step would
        be most of a short document's cost), and spaCy returns a paper's chunks all at once anyway."""
        self.report.detail, self.report.fraction = detail, fraction
        if self.report.on_progress:
            self.report.on_progress(self.doc.id, detail, fraction)

    def say_count(self) -> None:
        total = self.outcome.chunks
        self.say(f"extracting entities: {self.finished}/{total} chunks", 0.9 * self.finished / max(total, 1))


def held(lib: Library, doc_id: str) -> bool:
    """Still this paper's graph stage to do: not deleted, re-queued for parsing, or its graph cleared."""
    current = lib.documents.get(doc_id)
    return current is not None and current.status == DocStatus.READY and current.graph_status == GraphStatus.EXTRACTING


def process_graph_batch(lib: Library, docs: list[Document], extractor: Extractor, on_progress=None,
                        stop: threading.Event | None = None) -> list[str]:
    """Extract, commit and merge claimed papers together; each ends done or failed (or, when `stop` is set
    during extraction, pending again, its stored extractions kept). Returns the ids of the papers that were
    deleted or taken back meanwhile: the caller removes what this batch wrote for the deleted ones."""
    papers = [_Paper(d, StageReporter(lib, d.id, on_progress, graph=True)) for d in docs]
    started = time.perf_counter()
    try:
        _extract(lib, papers, extractor, stop)
    except Interrupted:
        for p in papers:
            lib.documents.set_graph_status(p.doc.id, GraphStatus.PENDING, detail="paused; resumes on the next run",
                                           expect=GraphStatus.EXTRACTING)
        return []
    except Exception as exc:  # the extractor itself broke: the batch fails, the queue goes on
        log.exception("extracting a batch of %d papers failed", len(papers))
        for p in papers:
            p.error = p.error or f"internal error while building the graph: {type(exc).__name__}: {exc}"
    extract_s = time.perf_counter() - started
    released: list[str] = []
    stats = None
    commit_s = 0.0
    # Checked and committed under the graph lock, as one paper's (core.pipeline.graph.stage): a delete waits.
    with graph_lock(lib):
        for p in papers:
            if p.error:
                continue
            if not held(lib, p.doc.id):
                released.append(p.doc.id)
                continue
            p.report("merging into the graph", 0.9, force=True)
            t = time.perf_counter()
            try:
                items = load_content_list(lib.workspace.parsed_dir(p.doc.id) / "content_list.json")
                p.record = commit_document(lib, p.doc.id, p.doc.display_title, items, p.outcome)
            except Exception as exc:  # one paper must never stop its batch
                log.exception("committing the graph of %s failed", p.doc.id)
                p.error = f"internal error while building the graph: {type(exc).__name__}: {exc}"
            commit_s += time.perf_counter() - t
        committed = [p for p in papers if p.record is not None]
        try:
            stats = rebuild_dirty(lib, lambda d, f: [p.say(d, 0.9 + 0.1 * f) for p in committed])
        except Exception as exc:  # the marks stay: the next run's rebuild repairs them
            log.exception("rebuilding the graph failed")
            for p in papers:
                if p.record is not None:
                    p.record, p.error = None, (f"internal error while building the graph: {type(exc).__name__}: "
                                               f"{exc}")
    total_s = time.perf_counter() - started
    n = max(sum(p.record is not None for p in papers), 1)
    for p in papers:
        if p.doc.id in released:
            continue
        if p.record is None:
            lib.documents.set_graph_status(p.doc.id, GraphStatus.FAILED, (p.error or "not extracted")[:2000],
                                           expect=GraphStatus.EXTRACTING)
            continue
        # The batch's figures, shared evenly: a paper's own share of one rebuild cannot be told apart.
        timings = {**p.doc.timings, "graph_extract_s": round(p.outcome.seconds, 3),
                   "graph_commit_s": round(commit_s / n, 4), "graph_merge_s": round(stats.merge_s / n, 4),
                   "graph_store_s": round(stats.store_s / n, 4), "graph_vectors_s": round(stats.vectors_s / n, 3),
                   "graph_embed_s": round(stats.embed_s / n, 3),
                   "graph_total_s": round(extract_s / len(papers) + (total_s - extract_s) / n, 3),
                   "graph_batch_docs": len(papers)}
        status, message = outcome_status(p.record, p.outcome, "extractor error")
        lib.documents.set_graph_status(p.doc.id, status, message, fraction=1.0, expect=GraphStatus.EXTRACTING,
                                       timings=timings)
    return released


def _extract(lib: Library, papers: list[_Paper], extractor: Extractor, stop: threading.Event | None) -> None:
    """Every paper's chunks not extracted yet, in one extractor call; each result stored as it comes."""
    todo, owner = [], {}
    for p in papers:
        p.report(f"extracting entities with {extractor.name}", 0.0, force=True)
        try:
            chunks, missing = chunks_to_extract(lib, p.doc.id, extractor, stop=stop)
        except Interrupted:
            raise
        except Exception as exc:  # a paper whose chunks cannot be read fails alone
            log.exception("preparing the graph of %s failed", p.doc.id)
            p.error = f"internal error while building the graph: {type(exc).__name__}: {exc}"
            continue
        p.outcome = ExtractOutcome(extractor=extractor.name, chunks=len(chunks))
        p.finished = len(chunks) - len(missing)
        p.say_count()
        todo += missing
        owner.update({c.id: (p, c) for c in missing})
    started = time.perf_counter()
    for extraction in extractor.extract(todo):
        p, chunk = owner[extraction.chunk_id]
        extraction = with_media_entity(lib, chunk, extraction)
        if extraction.failed:
            p.outcome.failed += 1
            p.outcome.errors.extend(extraction.errors[:1])
        else:
            lib.graph_sources.put_extraction(p.doc.id, chunk.index, text_sha(chunk.text), extraction)
            p.outcome.extracted_now += 1
        p.finished += 1
        p.say_count()
        if stop is not None and stop.is_set():
            raise Interrupted()
    seconds = time.perf_counter() - started
    for p in papers:
        if p.outcome is not None:
            share = (p.outcome.extracted_now + p.outcome.failed) / max(len(todo), 1)
            p.outcome.seconds = seconds * share
