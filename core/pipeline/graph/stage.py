"""The graph stage in the pipeline: ready → graph pending → extracting → done | failed; in batches of papers
with the LLM-free extractor (core.pipeline.graph.batch), one paper at a time with an LLM.

A paper is searchable as soon as it is ready; its graph is built afterwards, because extraction with an LLM
(35–50 s per chunk with the embedded model) can take far longer than parsing and indexing together.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from core.content.content_list import load_content_list
from core.graph.communities.index import refresh_communities
from core.graph.lock import graph_lock
from core.library import Library
from core.pipeline.documents import purge_document
from core.pipeline.graph.batch import claim_batch, held, process_graph_batch, reads_many_papers
from core.pipeline.graph.build import (
    GraphError,
    Interrupted,
    commit_document,
    current_extractor,
    extract_document,
    outcome_status,
    rebuild_dirty,
)
from core.pipeline.status import StageReporter, worker_alive, worker_id
from core.schema.records import DocStatus, Document, GraphStatus

log = logging.getLogger(__name__)

GraphStageProgress = Callable[[str, str, float], None]  # doc id, detail, fraction


class _Interrupt:
    """Reads as set, between chunks, when the worker must stop; when the paper was deleted (or re-queued) under
    it; or, with `yield_to_uploads`, when a new upload waits to be parsed: a paper's LLM extraction can take many
    minutes, and a new paper should become searchable without waiting for it. The chunks extracted so far are
    kept; the graph stage resumes after the upload."""

    def __init__(self, lib: Library, doc_id: str, stop: threading.Event | None, yield_to_uploads: bool):
        self.lib, self.doc_id, self.stop, self.yield_to_uploads = lib, doc_id, stop, yield_to_uploads
        self.uploads = self.released = False

    def is_set(self) -> bool:
        if self.stop is not None and self.stop.is_set():
            return True
        self.released = not held(self.lib, self.doc_id)
        if self.released:
            return True
        self.uploads = self.yield_to_uploads and bool(self.lib.documents.ids_with_status(DocStatus.QUEUED))
        return self.uploads


def process_graph(lib: Library, doc: Document, on_progress: GraphStageProgress | None = None,
                  stop: threading.Event | None = None, yield_to_uploads: bool = False) -> Document | None:
    """Extract, commit and merge one claimed paper. None when it was deleted meanwhile: what this worker wrote
    is gone too."""
    report = StageReporter(lib, doc.id, on_progress, graph=True)
    interrupt = _Interrupt(lib, doc.id, stop, yield_to_uploads)
    try:
        extractor = current_extractor(lib)
        report(f"extracting entities with {extractor.name}", 0.0, force=True)
        started = time.perf_counter()
        outcome = extract_document(lib, doc.id, extractor, lambda d, f: report(d, 0.9 * f), interrupt)
        report("merging into the graph", 0.9, force=True)
        # Checked and committed under the graph lock: a delete removes the paper's contributions under it too, so
        # it runs after this commit and rebuild, or this worker sees the paper gone and commits nothing.
        with graph_lock(lib):
            if not held(lib, doc.id):
                return _finish_released(lib, doc.id)
            items = load_content_list(lib.workspace.parsed_dir(doc.id) / "content_list.json")
            t = time.perf_counter()
            paper = commit_document(lib, doc.id, doc.display_title, items, outcome)
            commit_s = time.perf_counter() - t
            stats = rebuild_dirty(lib, lambda d, f: report(d, 0.9 + 0.1 * f))
        timings = {**doc.timings, "graph_extract_s": round(outcome.seconds, 3), "graph_commit_s": round(commit_s, 4),
                   "graph_merge_s": round(stats.merge_s, 4), "graph_store_s": round(stats.store_s, 4),
                   "graph_vectors_s": round(stats.vectors_s, 3), "graph_embed_s": round(stats.embed_s, 3),
                   "graph_total_s": round(time.perf_counter() - started, 3)}
        status, message = outcome_status(paper, outcome, "LLM error")
        # Only if still extracting: a paper re-queued meanwhile (retried, re-parsed, graph cleared) stays queued.
        lib.documents.set_graph_status(doc.id, status, message, fraction=1.0, expect=GraphStatus.EXTRACTING,
                                       timings=timings)
    except Interrupted:
        if interrupt.released:
            return _finish_released(lib, doc.id)
        why = "paused while a new upload is parsed" if interrupt.uploads else "paused; resumes on the next run"
        lib.documents.set_graph_status(doc.id, GraphStatus.PENDING, detail=why, expect=GraphStatus.EXTRACTING)
    except GraphError as exc:
        lib.documents.set_graph_status(doc.id, GraphStatus.FAILED, str(exc), expect=GraphStatus.EXTRACTING)
    except Exception as exc:  # one paper must never stop the queue
        if held(lib, doc.id):  # else deleted or re-queued under it: what failed was reading what went
            log.exception("graph stage of %s failed", doc.id)
        lib.documents.set_graph_status(doc.id, GraphStatus.FAILED, f"internal error while building the graph: "
                                       f"{type(exc).__name__}: {exc}"[:2000], expect=GraphStatus.EXTRACTING)
    return _finish_released(lib, doc.id)


def _finish_released(lib: Library, doc_id: str) -> Document | None:
    """The paper as it is now; None if it was deleted meanwhile, after removing what this worker wrote since the
    delete's own purge (extractions, a VLM's descriptions and windows, contributions)."""
    current = lib.documents.get(doc_id)
    if current is None:
        purge_document(lib, doc_id)
    return current


def process_graph_queue(lib: Library, on_progress: GraphStageProgress | None = None,
                        stop: threading.Event | None = None, max_docs: int | None = None,
                        communities: bool = True, yield_to_uploads: bool = False) -> list[Document]:
    """Build the graph of every ready paper whose graph is pending; refresh communities when the queue is empty.
    With `yield_to_uploads` (the app's worker) a paper's extraction pauses as soon as an upload is queued."""
    rebuild_dirty(lib)  # finish what a crash interrupted before anything new is merged
    done: list[Document] = []
    me = worker_id()
    extractor = None
    while not (stop and stop.is_set()) and (max_docs is None or len(done) < max_docs):
        if extractor is None or not reads_many_papers(extractor):
            try:
                extractor = current_extractor(lib)
            except GraphError:
                extractor = None  # each paper fails with the reason, one at a time below
        if extractor is not None and reads_many_papers(extractor):
            if yield_to_uploads and lib.documents.ids_with_status(DocStatus.QUEUED):
                break  # an upload waits: the caller parses it first
            docs = claim_batch(lib, me, None if max_docs is None else max_docs - len(done))
            if not docs:
                break
            process_graph_batch(lib, docs, extractor, on_progress, stop)
            results = [_finish_released(lib, d.id) for d in docs]
            done += [r for r in results if r is not None]  # None: deleted under the batch
            if any(r is not None and r.graph_status == GraphStatus.PENDING for r in results):
                break  # stopped mid-extraction
            continue
        doc = lib.queue.claim_graph_next(me)
        if doc is None:
            break
        result = process_graph(lib, doc, on_progress, stop, yield_to_uploads)
        if result is None:  # deleted while its chunks were extracted
            continue
        done.append(result)
        if result.graph_status == GraphStatus.PENDING:
            break  # paused: the caller goes back to its parse queue
    if communities and lib.settings.graph.communities and not (stop and stop.is_set()) \
            and not lib.stages.graph_progress():
        try:
            refresh_communities(lib)
        except Exception:  # communities are derived and refreshed again on the next change; papers are done
            log.exception("refreshing communities failed")
    return done


def recover_graph(lib: Library) -> list[str]:
    """Papers whose graph worker died go back to pending; their extracted chunks are kept."""
    requeued = []
    for doc_id, worker in lib.queue.graph_workers().items():
        if worker and worker_alive(worker):
            continue
        if lib.documents.set_graph_status(doc_id, GraphStatus.PENDING, detail="resumed after an interruption",
                                          expect=GraphStatus.EXTRACTING):
            requeued.append(doc_id)
    return requeued


def retry_graph(lib: Library, doc_id: str | None = None, reextract: bool = False) -> list[str]:
    """Queue the graph stage again (one paper, or every ready paper): chunks already extracted by the current
    extractor are reused; the others (failed ones, or all of them after a change of extractor) are redone.
    `reextract`: every chunk is read again, so a workspace built by an older version of the same extractor gets
    its current entities and its retrieval phrases (an LLM extractor's replies come from the prompt cache)."""
    ids = [doc_id] if doc_id else [d.id for d in lib.documents.ready_papers()]
    queued = []
    for i in ids:
        doc = lib.documents.get(i)
        if doc and doc.status == DocStatus.READY and doc.graph_status != GraphStatus.EXTRACTING:
            if reextract:
                lib.graph_sources.forget_extractions(i)
            lib.documents.set_graph_status(i, GraphStatus.PENDING, detail="queued")
            queued.append(i)
    return queued
