"""The ingest writer's machinery (core.pipeline.ingest has the entry points): jobs handed to a compute backend,
progress relayed, deletes noticed, dead workers retried, finished documents committed in batches."""
from __future__ import annotations

import logging
import os
import shutil
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, wait
from pathlib import Path

from core.library import Library
from core.pipeline.compute import ComputeBackend
from core.pipeline.compute.task import IMPORT, PDF, ComputeResult, ComputeTask
from core.pipeline.compute.throughput import Throughput
from core.pipeline.documents import IMPORT_DIRNAME, is_import, parse_memory_override, purge_document
from core.pipeline.ingest_commit import (
    PARSE_PREFIX,
    SHORT_TEXTS_PER_SLOT,
    SHORT_TEXTS_PER_TASK,
    Job,
    commit_results,
    count,
    fail_document,
    held_ids,
    say,
)
from core.pipeline.parsing.budget import child_memory_bytes, retry_cap
from core.pipeline.status import ProgressFn, StageReporter, worker_id
from core.schema.media import VLM
from core.schema.records import DocStatus, Document

__all__ = ["PARSE_PREFIX", "SHORT_TEXTS_PER_SLOT", "SHORT_TEXTS_PER_TASK", "Writer", "make_task"]

log = logging.getLogger(__name__)

_TICK_S = 0.2  # how often the writer relays progress and looks for deleted papers while tasks run


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


def make_task(lib: Library, doc: Document, attempt: int, work: Path, ships_files: bool,
              workers: int = 1) -> ComputeTask:
    """workers: how many documents the backend computes at once, who share the parse memory budget."""
    kind = IMPORT if is_import(lib, doc.id) else PDF
    settings = lib.settings
    vlm = {index: rows[VLM] for index, rows in lib.descriptions.by_doc(doc.id).items() if VLM in rows}
    override = parse_memory_override(lib, doc.id)
    task = ComputeTask(doc_id=doc.id, kind=kind, parsing=settings.parsing, chunking=settings.chunking,
                       embedding=settings.embedding, mineru_home=str(lib.workspace.mineru_home), vlm=vlm,
                       attempt=attempt, parse_memory=child_memory_bytes(settings.parsing, workers, override),
                       every_page_to_mineru=override > 0)
    if override > 0:  # a cap other than the one asked for is said in the document's message
        task.parse_memory_note = retry_cap(settings.parsing, workers, override).note
    if ships_files:
        task.files = _source_files(lib, doc.id, kind)
    else:
        task.source = str(lib.workspace.source_pdf(doc.id) if kind == PDF else _import_source(lib, doc.id))
        task.out_dir = str(work)  # the parse is written straight there; the commit renames the folder into place
    return task


class Writer:
    def __init__(self, lib: Library, backend: ComputeBackend, on_progress: ProgressFn | None,
                 stop: threading.Event | None, on_deleted: Callable[[Document], None] | None,
                 throughput: Throughput | None, on_ready: Callable[[list[Document]], None] | None = None):
        self.lib, self.backend, self.on_progress, self.stop, self.on_deleted = lib, backend, on_progress, stop, \
            on_deleted
        self.on_ready = on_ready  # told of each commit's newly ready documents (the graph stage follows them)
        self.throughput = throughput if throughput is not None else Throughput()
        self.throughput.start(backend.name, backend.workers)
        self.me = worker_id()
        self.jobs: dict[str, Job] = {}
        self.retry: list[Job] = []  # suspects waiting to run alone
        self.batches: dict[str, list[Job]] = {}  # short documents sharing one task, by its key
        self.done: list[Document] = []
        self.inbox = backend.progress_inbox()

    # --------------------------------------------------------------------------------------------- loop

    def run(self) -> list[Document]:
        try:
            while True:
                self._fill()
                if not self.jobs:
                    return self.done
                futures = {job.future for job in self.jobs.values()}
                finished, _ = wait(futures, timeout=_TICK_S, return_when=FIRST_COMPLETED)
                self._relay()
                self._release_deleted()
                if finished:
                    # Whatever else finished meanwhile is committed in the same batch.
                    self._finish([job for job in self.jobs.values() if job.future.done()])
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
        short: list[Job] = []
        while not stopping and self._slots() < self.backend.workers:
            doc = self.lib.queue.claim_next(self.me)
            if doc is None:
                break
            job = Job(doc, StageReporter(self.lib, doc.id, self.on_progress), self._work_dir(doc.id))
            if not job.short:
                self._submit(job)
                continue
            self.jobs[doc.id] = job  # counts in the slots from now on
            short.append(job)
            if len(short) == SHORT_TEXTS_PER_TASK:
                self._submit_batch(short)
                short = []
        if short:
            self._submit_batch(short)

    def _slots(self) -> float:
        """Workers' worth of documents in flight."""
        return sum(1 / SHORT_TEXTS_PER_SLOT if job.short else 1.0 for job in self.jobs.values())

    def _work_dir(self, doc_id: str) -> Path:
        return self.lib.workspace.staging_dir / f"{PARSE_PREFIX}{doc_id[:16]}-{uuid.uuid4().hex[:8]}"

    def _submit(self, job: Job) -> None:
        self.jobs[job.doc.id] = job
        try:
            job.work.mkdir(parents=True)
            task = make_task(self.lib, job.doc, job.attempt, job.work, self.backend.ships_files,
                             self.backend.workers)
            job.report(f"waiting for a worker ({self.backend.name} backend)", 0.0, force=True)
            job.future = self.backend.submit(task, self.inbox.address if self.inbox is not None else None)
        except Exception as exc:  # the source went missing under a delete, a disk error, a pool that broke
            job.future = Future()
            job.future.set_exception(exc)

    def _submit_batch(self, jobs: list[Job]) -> None:
        """Short documents as one task: one process round trip and one embedding call for all of them."""
        if len(jobs) == 1:
            return self._submit(jobs[0])
        key, tasks, members = f"batch-{uuid.uuid4().hex[:12]}", [], []
        for job in jobs:
            self.jobs[job.doc.id] = job
            try:
                job.work.mkdir(parents=True)
                tasks.append(make_task(self.lib, job.doc, job.attempt, job.work, self.backend.ships_files,
                                       self.backend.workers))
                members.append(job)
            except Exception as exc:  # this document's source went missing under a delete: it alone fails
                job.future = Future()
                job.future.set_exception(exc)
        if not members:
            return
        for slot, job in enumerate(members):
            job.batch, job.slot = key, slot
        self.batches[key] = members
        say(self.lib, members, f"waiting for a worker ({self.backend.name} backend)", 0.0)
        try:
            future = self.backend.submit_batch(tasks, self.inbox.address if self.inbox is not None else None, key)
        except Exception as exc:  # a pool that broke
            future = Future()
            future.set_exception(exc)
        for job in members:
            job.future = future

    def _relay(self) -> None:
        for key, attempt, detail, fraction, force, worker in (self.inbox.drain() if self.inbox else []):
            batch = [job for job in self.batches.get(key, []) if job.attempt == attempt and not job.released
                     and self.jobs.get(job.doc.id) is job]
            if batch:
                self.throughput.working(worker, batch[0].doc.id)
                say(self.lib, batch, f"{detail} — worker {worker}", fraction, force=force)
                continue
            doc_id = key
            job = self.jobs.get(doc_id)
            if job is not None and job.attempt == attempt and not job.released:
                self.throughput.working(worker, doc_id)
                job.report(f"{detail} — worker {worker}", fraction, force=force)

    def _release_deleted(self) -> None:
        # One query for every job in flight (dozens of short documents), each time a result comes back.
        held = self.lib.queue.in_progress_workers() if self.jobs else {}
        for job in self.jobs.values():
            if not job.released and job.doc.id not in held:
                job.released = True
                # A task shared with other short documents is cancelled only once none of them needs it.
                if all(other.released for other in self.batches.get(job.batch, [job])):
                    self.backend.cancel(job.future)

    # ------------------------------------------------------------------------------------------- finish

    def _finish(self, jobs: list[Job]) -> None:
        results: list[tuple[Job, ComputeResult]] = []
        lost = []
        for job in jobs:
            del self.jobs[job.doc.id]
            self.batches.pop(job.batch, None)  # its siblings finished with it: they are in `jobs` too
            if job.released:
                self._drop(job)
                continue
            try:
                result = job.future.result()
                if job.batch:
                    result = result[job.slot]
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
        self.batches.clear()
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
                self._failed(job, f"its worker process died {count(job.attempt, 'time')} while computing it "
                                  f"({exc or 'the worker pool broke'}); it may be too large for this machine's "
                                  "memory")
                continue
            job.suspect, job.future, job.work, job.batch = True, None, self._work_dir(job.doc.id), ""
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
        if job.doc.id not in held_ids(self.lib):
            return self._drop(job)
        fail_document(self.lib, job.doc.id, message)
        self.done.append(self.lib.documents.get(job.doc.id))

    def _commit(self, results: list[tuple[Job, ComputeResult]]) -> None:
        committed = commit_results(self.lib, results, self._drop)
        ready = []
        for job, result in committed:
            doc = self.lib.documents.get(job.doc.id)
            if doc is None or doc.status != DocStatus.READY:
                self._drop(job)
                continue
            self.throughput.finished(result.worker, result.parsed.pages, result.cpu_seconds)
            ready.append(doc)
        self.done += ready
        if ready and self.on_ready is not None:
            try:
                self.on_ready(ready)
            except Exception:  # a listener's fault must not stop the ingest: the papers are ready regardless
                log.exception("the ingest's on_ready hook failed")

