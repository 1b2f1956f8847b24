"""The ingest writer: queued → parsing → indexing → ready | failed, many documents computed at once.

The heavy, pure work of a document (parse, offline media descriptions, chunks, window vectors) runs on a compute
backend (core.pipeline.compute: a local process pool, or Ray); this module is the one writer that claims
documents, hands them out and commits what comes back to SQLite, Chroma and the registry. Results that finish
together are committed together: one Chroma write for all their windows.

Crash safety: a worker writes its parse into staging/, renamed into the document's folder only at commit; chunks
replace the document's old chunks in one SQLite transaction; vectors are written next, and a document becomes
searchable only when its status turns `ready`, after its vectors. A process killed half-way (between a batch's
vector write and its status writes, say) leaves its documents in parsing/indexing with a dead worker; `recover`
queues them again and the next run redoes them from their sources (vector ids are deterministic).

A worker process that dies mid-task (killed, out of memory) breaks the local pool: the documents it held are
computed again, one at a time (so the one that kills its worker is found), at most `compute.retries` times,
then `failed` with what the pool said. Ray retries its own tasks.

A delete may land at any step (core.pipeline.documents.delete_document removes the row first): the writer checks
before every write and, finding the paper gone, drops its result, purges what was written and goes on. A paper
deleted while queued is never claimed; one deleted while its task waits is cancelled.
"""
from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future

from core.library import Library
from core.pipeline.chunking import window_metadata
from core.pipeline.compute import ComputeBackend, compute_backend
from core.pipeline.compute.task import ComputeTask, compute_document, index_items
from core.pipeline.compute.throughput import Throughput
from core.pipeline.ingest_writer import PARSE_PREFIX, Writer, make_task
from core.pipeline.result_records import compute_results
from core.pipeline.status import ProgressFn, StageReporter, worker_alive
from core.schema.media import OFFLINE
from core.schema.records import ContentItem, DocStatus, Document

# Leftovers younger than this may belong to an upload another process is writing right now.
ORPHAN_AGE_S = 60.0


# ------------------------------------------------------------------------------------------------ entry points

def process_queue(lib: Library, on_progress: ProgressFn | None = None, stop: threading.Event | None = None,
                  on_deleted: Callable[[Document], None] | None = None, backend: ComputeBackend | None = None,
                  throughput: Throughput | None = None,
                  on_ready: Callable[[list[Document]], None] | None = None) -> list[Document]:
    """Process queued documents until none is left (or `stop` is set: no new claims, tasks under way finish);
    returns them in their final state, in the order they finished. One deleted while it was processed is not
    returned: `on_deleted` gets it as it was claimed. `on_ready` gets each commit's newly ready documents, in the
    writer's thread, as soon as they are searchable. `backend` defaults to Settings (compute.*)."""
    backend = backend or compute_backend(lib.settings.compute)
    return Writer(lib, backend, on_progress, stop, on_deleted, throughput, on_ready).run()


class _Inline:
    """A backend of one: the task runs in the writer's own process and thread (process_document)."""

    name, workers, ships_files = "inline", 1, False

    def __init__(self, on_progress: Callable[[tuple], None]):
        self._sink = on_progress

    def progress_inbox(self) -> None:
        return None  # the task reports straight to the writer's reporter

    def submit(self, task: ComputeTask, progress_to: None = None) -> Future:
        future: Future = Future()
        future.set_result(compute_document(task, self._sink))
        return future

    def cancel(self, future: Future) -> None:
        pass

    def worker_lost(self, exc: BaseException) -> bool:
        return False

    def reset(self) -> None:
        pass


def process_document(lib: Library, doc: Document, on_progress: ProgressFn | None = None) -> Document | None:
    """Compute and commit one document already claimed, in this process and thread. None when it was deleted
    meanwhile: what was written for it is gone too."""
    report = StageReporter(lib, doc.id, on_progress)
    backend = _Inline(lambda m: report(m[2], m[3], force=m[4]))
    writer = Writer(lib, backend, on_progress, None, None, None)
    writer.run_one(doc, report)
    return lib.documents.get(doc.id)


def reindex_items(lib: Library, doc: Document, items: list[ContentItem], report: StageReporter) -> int:
    """Describe, chunk, embed and write a document's given items again, in this process (bench/multimodal.py
    re-indexes with new descriptions this way); returns the number of chunks."""
    task = make_task(lib, doc, 0, lib.workspace.staging_dir, ships_files=False)
    pdf = lib.workspace.source_pdf(doc.id)
    offline, chunked, vectors, _ = index_items(task, items, pdf, report)
    lib.descriptions.replace_source(doc.id, OFFLINE, offline)
    lib.results.replace_doc(doc.id, compute_results(doc.id, items))
    lib.chunks.put_doc_chunks(doc.id, chunked.chunks)
    lib.windows.delete_doc(doc.id)
    lib.windows.upsert([w.id for w in chunked.windows], vectors, [w.text for w in chunked.windows],
                       [window_metadata(w) for w in chunked.windows])
    return len(chunked.chunks)


def recover(lib: Library) -> list[str]:
    """Queue again the documents whose worker died mid-ingest and clear staging leftovers they owned.

    It reads the rows in progress only (ids and workers), never the whole registry, and lists staging (work in
    progress), never docs/: it runs before every ingest, whose cost must not grow with the collection. A folder
    saved just before a crash and never registered is garbage collection's (core.pipeline.gc: `core gc`, the
    app's start, and `core ingest` after an interrupted run)."""
    requeued = []
    live_workers = False
    for doc_id, worker in lib.queue.in_progress_workers().items():
        if worker and worker_alive(worker):
            live_workers = True
            continue
        # Its parse folders are the dead worker's alone, whatever their age: removed before the paper is queued
        # again (and another worker could start a new one).
        for leftover in lib.workspace.staging_dir.glob(f"{PARSE_PREFIX}{doc_id[:16]}-*"):
            shutil.rmtree(leftover, ignore_errors=True)
        lib.documents.set_status(doc_id, DocStatus.QUEUED, "resumed after an interrupted ingest")
        requeued.append(doc_id)
    if live_workers:
        return requeued  # another process is mid-ingest: its staging files are not leftovers
    cutoff = time.time() - ORPHAN_AGE_S
    for leftover in lib.workspace.staging_dir.glob("*"):
        if leftover.stat().st_mtime < cutoff:
            shutil.rmtree(leftover, ignore_errors=True) if leftover.is_dir() else leftover.unlink(missing_ok=True)
    return requeued
