"""The ingest writer's machinery (core.pipeline.ingest has the entry points): jobs handed to a compute backend,
progress relayed, deletes noticed, dead workers retried, finished documents committed in batches."""
from __future__ import annotations

import logging
import os
import shutil
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, wait
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.library import Library
from core.pipeline.chunking import window_metadata
from core.pipeline.compute import ComputeBackend
from core.pipeline.compute.task import IMPORT, PDF, ComputeResult, ComputeTask
from core.pipeline.compute.throughput import Throughput
from core.pipeline.documents import IMPORT_DIRNAME, is_import, purge_document
from core.pipeline.graph.build import remove_document
from core.pipeline.parsing.text_documents import text_format
from core.pipeline.status import ProgressFn, StageReporter, worker_id
from core.schema.media import OFFLINE, VLM
from core.schema.records import ContentItem, DocStatus, Document, GraphStatus
from core.store.sqlite_media import DescriptionStore

log = logging.getLogger(__name__)

PARSE_PREFIX = "parse-"  # staging/parse-<doc id[:16]>-<random>: one parse of one paper
_NOT_TITLES = {"abstract", "introduction", "contents", "references"}
_TICK_S = 0.2  # how often the writer relays progress and looks for deleted papers while tasks run
# A short text document computes in tens of milliseconds: one per worker in flight, the writer would commit them one
# or two at a time and its per-commit costs (Chroma calls, status writes) would dominate. So a short text document
# takes a fraction of a worker's slot: several wait in the pool, finish together and are committed in one batch.
SHORT_TEXT_BYTES = 64 * 1024
SHORT_TEXTS_PER_SLOT = 16


def pick_title(items: list[ContentItem], filename: str) -> str:
    for item in items:
        if item.page_idx > 1:
            break
        text = " ".join(item.text.split())
        if item.type == "text" and item.text_level == 1 and len(text) >= 3 and text.lower() not in _NOT_TITLES:
            return text[:300]
    return filename.rsplit(".", 1)[0] if "." in filename else filename


def is_short_text(doc: Document) -> bool:
    return text_format(doc.filename) is not None and doc.size_bytes <= SHORT_TEXT_BYTES


@dataclass
class Job:
    """A claimed document on its way through a backend."""

    doc: Document
    report: StageReporter
    work: Path  # staging/parse-…: this attempt's parse, renamed into place at commit
    attempt: int = 0
    future: Future | None = None
    suspect: bool = False  # its worker died with others in flight: it runs alone until it is cleared
    released: bool = False  # deleted or taken back while in flight: its result is dropped
    claimed_at: float = field(default_factory=time.perf_counter)
    short: bool = False  # a short text document: a fraction of a worker's slot

    def __post_init__(self):
        self.short = is_short_text(self.doc)


def _held(lib: Library, doc_id: str) -> bool:
    """Still this writer's to commit: not deleted, not re-queued, not taken by another writer after a recover."""
    current = lib.documents.get(doc_id)
    return current is not None and current.status in (DocStatus.PARSING, DocStatus.INDEXING)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _fail(lib: Library, doc_id: str, message: str) -> None:
    # A failed document keeps its source (for Retry) but nothing searchable, and no part of the graph.
    try:
        lib.windows.delete_doc(doc_id)
        lib.chunks.delete_doc(doc_id)
        remove_document(lib, doc_id)
    finally:
        lib.documents.set_status(doc_id, DocStatus.FAILED, message[:2000], graph=GraphStatus.NONE)


def _import_source(lib: Library, doc_id: str) -> Path:
    folder = lib.workspace.doc_dir(doc_id) / IMPORT_DIRNAME
    archive = folder / "output.zip"
    return archive if archive.exists() else folder


def _source_files(lib: Library, doc_id: str, kind: str) -> dict[str, bytes]:
    """The source as bytes, for a worker on another machine: the PDF or text document (source.*), or the MinerU
    output as one zip."""
    if kind == PDF:
        return {p.name: p.read_bytes() for p in lib.workspace.doc_dir(doc_id).glob("source.*") if p.is_file()}
    source = _import_source(lib, doc_id)
    if source.is_file():
        return {"output.zip": source.read_bytes()}
    archive = shutil.make_archive(str(lib.workspace.staging_dir / f"import-{uuid.uuid4().hex}"), "zip", source)
    try:
        return {"output.zip": Path(archive).read_bytes()}
    finally:
        os.unlink(archive)


def make_task(lib: Library, doc: Document, attempt: int, work: Path, ships_files: bool) -> ComputeTask:
    kind = IMPORT if is_import(lib, doc.id) else PDF
    settings = lib.settings
    vlm = {index: rows[VLM] for index, rows in DescriptionStore(lib.db).by_doc(doc.id).items() if VLM in rows}
    task = ComputeTask(doc_id=doc.id, kind=kind, parsing=settings.parsing, chunking=settings.chunking,
                       embedding=settings.embedding, mineru_home=str(lib.workspace.mineru_home), vlm=vlm,
                       attempt=attempt)
    if ships_files:
        task.files = _source_files(lib, doc.id, kind)
    else:
        task.source = str(lib.workspace.source_pdf(doc.id) if kind == PDF else _import_source(lib, doc.id))
        task.out_dir = str(work / "parsed")
    return task


class Writer:
    def __init__(self, lib: Library, backend: ComputeBackend, on_progress: ProgressFn | None,
                 stop: threading.Event | None, on_deleted: Callable[[Document], None] | None,
                 throughput: Throughput | None):
        self.lib, self.backend, self.on_progress, self.stop, self.on_deleted = lib, backend, on_progress, stop, \
            on_deleted
        self.throughput = throughput if throughput is not None else Throughput()
        self.throughput.start(backend.name, backend.workers)
        self.me = worker_id()
        self.jobs: dict[str, Job] = {}
        self.retry: list[Job] = []  # suspects waiting to run alone
        self.done: list[Document] = []
        self.inbox = backend.progress_inbox()

    # --------------------------------------------------------------------------------------------- loop

    def run(self) -> list[Document]:
        try:
            while True:
                self._fill()
                if not self.jobs:
                    return self.done
                futures = {job.future: job for job in self.jobs.values()}
                finished, _ = wait(list(futures), timeout=_TICK_S, return_when=FIRST_COMPLETED)
                self._relay()
                self._release_deleted()
                if finished:
                    # Whatever else finished meanwhile is committed in the same batch.
                    finished = {f for f in futures if f.done()}
                    self._finish([futures[f] for f in finished])
        finally:
            self.throughput.stop()
            for job in list(self.jobs.values()) + self.retry:  # an exception escaped: drop what was under way
                shutil.rmtree(job.work, ignore_errors=True)
            if self.inbox is not None:
                self.inbox.close()

    def run_one(self, doc: Document, report: StageReporter) -> None:
        """One document already claimed, computed and committed now (process_document: the inline backend has
        finished the task by the time it is submitted)."""
        self._submit(Job(doc, report, self._work_dir(doc.id)))
        self._finish(list(self.jobs.values()))

    def _fill(self) -> None:
        stopping = self.stop is not None and self.stop.is_set()
        if any(job.suspect for job in self.jobs.values()):
            return  # a suspect runs alone
        if self.retry:
            if not self.jobs:
                self._submit(self.retry.pop(0))
            return
        while not stopping and self._slots() < self.backend.workers:
            doc = self.lib.documents.claim_next(self.me)
            if doc is None:
                return
            self._submit(Job(doc, StageReporter(self.lib, doc.id, self.on_progress), self._work_dir(doc.id)))

    def _slots(self) -> float:
        """Workers' worth of documents in flight."""
        return sum(1 / SHORT_TEXTS_PER_SLOT if job.short else 1.0 for job in self.jobs.values())

    def _work_dir(self, doc_id: str) -> Path:
        return self.lib.workspace.staging_dir / f"{PARSE_PREFIX}{doc_id[:16]}-{uuid.uuid4().hex[:8]}"

    def _submit(self, job: Job) -> None:
        self.jobs[job.doc.id] = job
        try:
            job.work.mkdir(parents=True)
            task = make_task(self.lib, job.doc, job.attempt, job.work, self.backend.ships_files)
            job.report(f"waiting for a worker ({self.backend.name} backend)", 0.0, force=True)
            job.future = self.backend.submit(task, self.inbox.address if self.inbox is not None else None)
        except Exception as exc:  # the source went missing under a delete, a disk error, a pool that broke
            job.future = Future()
            job.future.set_exception(exc)

    def _relay(self) -> None:
        for doc_id, attempt, detail, fraction, force, worker in (self.inbox.drain() if self.inbox else []):
            job = self.jobs.get(doc_id)
            if job is not None and job.attempt == attempt and not job.released:
                self.throughput.working(worker, doc_id)
                job.report(f"{detail} — worker {worker}", fraction, force=force)

    def _release_deleted(self) -> None:
        # One query for every job in flight (dozens of short documents), each time a result comes back.
        held = self.lib.documents.in_progress_workers() if self.jobs else {}
        for job in self.jobs.values():
            if not job.released and job.doc.id not in held:
                job.released = True
                self.backend.cancel(job.future)

    # ------------------------------------------------------------------------------------------- finish

    def _finish(self, jobs: list[Job]) -> None:
        results: list[tuple[Job, ComputeResult]] = []
        lost = []
        for job in jobs:
            del self.jobs[job.doc.id]
            if job.released:
                self._drop(job)
                continue
            try:
                result = job.future.result()
            except CancelledError:
                self._drop(job)
                continue
            except Exception as exc:
                if self.backend.worker_lost(exc):
                    lost.append((job, exc))
                    continue
                self._failed(job, f"the {self.backend.name} worker computing it failed: {type(exc).__name__}: "
                                  f"{exc}")
                continue
            if result.error:
                self._failed(job, result.error)
            else:
                results.append((job, result))
        if lost:
            self._worker_lost(lost)
        if results:
            try:
                # The workers embedded with the configured model; its vectors must be comparable with the stored
                # ones (core.models.embedding_space) before any is written.
                self.lib.check_vector_space()
            except Exception as exc:
                for job, _ in results:
                    self._failed(job, str(exc))
                return
            self._commit(results)

    def _worker_lost(self, lost: list[tuple[Job, BaseException]]) -> None:
        self.backend.reset()
        # The pool is gone: everything still in flight failed with it, and is retried with the rest.
        for job in list(self.jobs.values()):
            del self.jobs[job.doc.id]
            lost.append((job, None))
        for job, exc in lost:
            shutil.rmtree(job.work, ignore_errors=True)
            if job.released:
                self._drop(job)
                continue
            if len(lost) == 1:
                job.attempt += 1  # it ran alone: it is the one that killed its worker
            if job.attempt > self.lib.settings.compute.retries:
                self._failed(job, f"its worker process died {_count(job.attempt, 'time')} while computing it "
                                  f"({exc or 'the worker pool broke'}); it may be too large for this machine's "
                                  "memory")
                continue
            job.suspect, job.future, job.work = True, None, self._work_dir(job.doc.id)
            job.report(f"retrying: a worker died (attempt {job.attempt + 1})", job.report.fraction, force=True)
            self.retry.append(job)

    def _drop(self, job: Job) -> None:
        shutil.rmtree(job.work, ignore_errors=True)
        if self.lib.documents.get(job.doc.id) is None:
            purge_document(self.lib, job.doc.id)
            log.info("%s was deleted while being ingested; removed what was written for it", job.doc.id)
            if self.on_deleted is not None:
                self.on_deleted(job.doc)

    def _failed(self, job: Job, message: str) -> None:
        shutil.rmtree(job.work, ignore_errors=True)
        if not _held(self.lib, job.doc.id):
            return self._drop(job)
        _fail(self.lib, job.doc.id, message)
        self.done.append(self.lib.documents.get(job.doc.id))

    def _commit(self, results: list[tuple[Job, ComputeResult]]) -> None:
        committed = commit_results(self.lib, results, self._drop)
        for job, result in committed:
            doc = self.lib.documents.get(job.doc.id)
            if doc is None or doc.status != DocStatus.READY:
                self._drop(job)
                continue
            self.throughput.finished(result.worker, result.parsed.pages, result.cpu_seconds)
            self.done.append(doc)


def commit_results(lib: Library, results: list[tuple[Job, ComputeResult]],
                   drop: Callable[[Job], None]) -> list[tuple[Job, ComputeResult]]:
    """Write finished documents: parse folders and chunks one by one, every window in one Chroma write, then each
    document's `ready`. Returns those that became ready; the others (deleted meanwhile) went to `drop`."""
    kept = []
    for job, result in results:
        try:
            if _write_document(lib, job, result):
                kept.append((job, result))
            else:
                drop(job)
        except Exception as exc:
            log.exception("writing %s failed", job.doc.id)
            if _held(lib, job.doc.id):
                _fail(lib, job.doc.id, f"internal error while indexing: {type(exc).__name__}: {exc}")
            else:
                drop(job)
    if not kept:
        return []
    t = time.perf_counter()
    windows = [w for _, r in kept for w in r.windows]
    lib.windows.delete_docs([job.doc.id for job, _ in kept])
    if windows:
        lib.windows.upsert([w.id for w in windows], np.vstack([r.vectors for _, r in kept if len(r.windows)]),
                           [w.text for w in windows], [window_metadata(w) for w in windows])
    vectors_s = (time.perf_counter() - t) / len(kept)
    ready = []
    for job, result in kept:
        if not _held(lib, job.doc.id):
            drop(job)
            continue
        parsed = result.parsed
        message = f"{_count(parsed.pages, 'page')}, {_count(len(parsed.items), 'item')}, " \
                  f"{_count(len(result.chunks), 'chunk')}"
        if not result.chunks:
            message += "; nothing searchable was found (no text, captions or tables)"
        if parsed.warnings:
            message += f"; {_count(len(parsed.warnings), 'warning')}"
        timings = {**result.timings, "index_s": round(result.timings.get("index_s", 0.0) + vectors_s, 4),
                   "compute_cpu_s": result.cpu_seconds, "total_s": round(time.perf_counter() - job.claimed_at, 3),
                   "commit_batch_docs": len(kept)}
        # Searchable now; the graph stage (core.pipeline.graph.stage) picks the paper up from here.
        lib.documents.set_status(job.doc.id, DocStatus.READY, message, chunk_count=len(result.chunks),
                                 timings=timings, graph=GraphStatus.PENDING, graph_detail="waiting for the graph stage")
        ready.append((job, result))
    return ready


def _write_document(lib: Library, job: Job, result: ComputeResult) -> bool:
    """One document's parse folder, descriptions and chunks; False when it was deleted meanwhile."""
    doc_id, parsed = job.doc.id, result.parsed
    if not _held(lib, doc_id):
        return False
    t = time.perf_counter()
    lib.documents.set_status(doc_id, DocStatus.INDEXING, title=pick_title(parsed.items, job.doc.filename),
                             pages=parsed.pages, backend=parsed.backend,
                             item_counts=dict(Counter(item.type for item in parsed.items)), warnings=parsed.warnings)
    job.report("writing the index", 0.96, force=True)
    if not _held(lib, doc_id):
        return False
    out = job.work / "parsed"
    for name, data in (result.parsed_files or {}).items():  # a worker on another machine sent its files
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    ws = lib.workspace
    final = ws.parsed_dir(doc_id)
    if final.exists():
        os.replace(final, job.work / "old")
    os.replace(out, final)
    shutil.rmtree(job.work, ignore_errors=True)
    shutil.rmtree(ws.pages_dir(doc_id), ignore_errors=True)  # page images of an older parse are stale
    DescriptionStore(lib.db).replace_source(doc_id, OFFLINE, result.offline)
    lib.chunks.put_doc_chunks(doc_id, result.chunks)
    result.timings["index_s"] = round(time.perf_counter() - t, 4)
    return _held(lib, doc_id)
