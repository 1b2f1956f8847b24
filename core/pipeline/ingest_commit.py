"""The ingest writer's commit (core.pipeline.ingest_writer runs the loop): what a compute backend returned, written
to the registry, the parse folders, SQLite and Chroma.

Documents that finished together are committed together: each moves to `indexing` and gets its parse folder on its
own, then the chunks of all of them go in one SQLite transaction (their full-text rows with them, by trigger), the
windows of all of them in one Chroma write, and only then does each become `ready`. A short text document's commit
was mostly these fixed costs, paid once per document. A crash anywhere leaves each document in parsing/indexing,
never `ready` without its vectors: `recover` queues it again and the redo replaces what was written (chunk and
vector ids are deterministic). A delete between two steps is noticed at the next check: the document is dropped and
what was written for it purged.
"""
from __future__ import annotations

import logging
import os
import shutil
import time
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.content.sources import text_format
from core.library import Library
from core.pipeline.chunking import window_metadata
from core.pipeline.compute.task import ComputeResult
from core.pipeline.graph.build import remove_document
from core.pipeline.metadata.refresh import store_extracted, title_from
from core.pipeline.parsing.budget import CAP_NOTE_PREFIX
from core.pipeline.references.resolve import store_references
from core.pipeline.status import StageReporter
from core.schema.media import OFFLINE
from core.schema.records import ContentItem, DocStatus, Document, GraphStatus

log = logging.getLogger(__name__)

PARSE_PREFIX = "parse-"  # staging/parse-<doc id[:16]>-<random>: one parse of one paper
_NOT_TITLES = {"abstract", "introduction", "contents", "references"}
# A short text document computes in milliseconds: alone in a worker's slot, the writer would commit them one or two
# at a time and its per-commit costs (Chroma calls, transactions) would dominate. So a short text document takes a
# fraction of a worker's slot, and those claimed together go to a worker as one task (one embedding call, one round
# trip) and come back, and are committed, together.
SHORT_TEXT_BYTES = 64 * 1024
SHORT_TEXTS_PER_SLOT = 32
SHORT_TEXTS_PER_TASK = 16  # half a slot: while one task of a worker is committed, its next one is computed


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
    batch: str = ""  # the key of the task it shares with other short documents ("" = a task of its own)
    slot: int = 0  # its place in that task's results

    def __post_init__(self):
        self.short = is_short_text(self.doc)


def say(lib: Library, jobs: list[Job], detail: str, fraction: float, force: bool = True) -> None:
    """A stage of several documents at once: each one's caller hears it, the registry gets one write for all."""
    if len(jobs) == 1:
        jobs[0].report(detail, fraction, force=force)
        return
    for job in jobs:
        job.report.detail, job.report.fraction = detail, fraction
        if job.report.on_progress:
            job.report.on_progress(job.doc.id, detail, fraction)
    if jobs:
        lib.stages.report_stages([job.doc.id for job in jobs], detail, fraction)


def held_ids(lib: Library) -> set[str]:
    """The documents still some writer's to commit: not deleted, not re-queued (one query for a whole batch)."""
    return set(lib.queue.in_progress_workers())


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def fail_document(lib: Library, doc_id: str, message: str) -> None:
    # A failed document keeps its source (for Retry) but nothing searchable, and no part of the graph.
    try:
        lib.windows.delete_doc(doc_id)
        lib.chunks.delete_doc(doc_id)
        lib.results.delete_doc(doc_id)
        remove_document(lib, doc_id)
    finally:
        lib.documents.set_status(doc_id, DocStatus.FAILED, message[:2000], graph=GraphStatus.NONE)


Drop = Callable[[Job], None]


def commit_results(lib: Library, results: list[tuple[Job, ComputeResult]], drop: Drop
                   ) -> list[tuple[Job, ComputeResult]]:
    """Write finished documents; returns those that became ready. The others went to `drop` (deleted meanwhile)
    or failed with the reason (a write that broke)."""
    written = _write_folders(lib, results, drop)
    if not written:
        return []
    say(lib, [job for job, _ in written], "writing the index", 0.96)
    t = time.perf_counter()
    written = _write_chunks(lib, written, drop)
    written = _still_held(lib, written, drop)
    if not written:
        return []
    windows = [w for _, r in written for w in r.windows]
    lib.windows.delete_docs([job.doc.id for job, _ in written])
    if windows:
        lib.windows.upsert([w.id for w in windows], np.vstack([r.vectors for _, r in written if len(r.windows)]),
                           [w.text for w in windows], [window_metadata(w) for w in windows])
    shared_s = (time.perf_counter() - t) / len(written)  # the batch's chunk and vector writes, shared evenly
    ready = []
    for job, result in _still_held(lib, written, drop):
        timings = {**result.timings, "index_s": round(result.timings.get("index_s", 0.0) + shared_s, 4),
                   "compute_cpu_s": result.cpu_seconds, "total_s": round(time.perf_counter() - job.claimed_at, 3),
                   "commit_batch_docs": len(written)}
        # Searchable now; the graph stage (core.pipeline.graph.stage) picks the paper up from here.
        lib.documents.set_status(job.doc.id, DocStatus.READY, _message(result), chunk_count=len(result.chunks),
                                 timings=timings, graph=GraphStatus.PENDING, graph_detail="waiting for the graph stage")
        ready.append((job, result))
    return ready


def _message(result: ComputeResult) -> str:
    parsed = result.parsed
    message = f"{count(parsed.pages, 'page')}, {count(len(parsed.items), 'item')}, {count(len(result.chunks), 'chunk')}"
    if not result.chunks:
        message += "; nothing searchable was found (no text, captions or tables)"
    # Why MinerU was stopped (a memory cap, a deadline, pages too dense for it) is the one warning said in the
    # status line itself: it tells the user the tables and formulas are approximate and a retry may help.
    # So is a retry's memory cap when it is not the one asked for.
    stops = [w for w in parsed.warnings if w.startswith(("MinerU ", CAP_NOTE_PREFIX)) or "vector marks" in w]
    if stops:
        message += "; " + "; ".join(stops)
    if len(parsed.warnings) > len(stops):
        message += f"; {count(len(parsed.warnings) - len(stops), 'warning' if not stops else 'other warning')}"
    return message


def _still_held(lib: Library, pairs: list[tuple[Job, ComputeResult]], drop: Drop) -> list[tuple[Job, ComputeResult]]:
    held = held_ids(lib)
    kept = []
    for job, result in pairs:
        if job.doc.id in held:
            kept.append((job, result))
        else:
            drop(job)
    return kept


def _broke(lib: Library, job: Job, exc: Exception, drop: Drop) -> None:
    log.error("writing %s failed: %s: %s", job.doc.id, type(exc).__name__, exc)
    if job.doc.id in held_ids(lib):
        fail_document(lib, job.doc.id, f"internal error while indexing: {type(exc).__name__}: {exc}")
    else:
        drop(job)


def _write_folders(lib: Library, results: list[tuple[Job, ComputeResult]], drop: Drop
                   ) -> list[tuple[Job, ComputeResult]]:
    """Each document's move to `indexing`, its parse folder and its offline descriptions."""
    held = held_ids(lib)
    written = []
    for job, result in results:
        if job.doc.id not in held:
            drop(job)
            continue
        t = time.perf_counter()
        try:
            _write_folder(lib, job, result)
        except Exception as exc:  # one document must never stop its batch
            _broke(lib, job, exc, drop)
            continue
        result.timings["index_s"] = round(time.perf_counter() - t, 4)
        written.append((job, result))
    return written


def _write_folder(lib: Library, job: Job, result: ComputeResult) -> None:
    doc_id, parsed = job.doc.id, result.parsed
    # The paper's metadata (title, authors, year, ids) from its items and its PDF's first page: the display title is
    # the metadata's (a hand correction included) rather than a file name or a running header.
    meta = store_extracted(lib, doc_id, job.doc.filename, parsed.items)
    lib.documents.set_status(doc_id, DocStatus.INDEXING, title=title_from(meta, pick_title(parsed.items,
                                                                                           job.doc.filename)),
                             pages=parsed.pages, backend=parsed.backend,
                             item_counts=dict(Counter(item.type for item in parsed.items)), warnings=parsed.warnings)
    for name, data in (result.parsed_files or {}).items():  # a worker on another machine sent its files
        path = job.work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    ws = lib.workspace
    final = ws.parsed_dir(doc_id)
    old = None
    if final.exists():  # an older parse: out of the way first, removed once the new one is in place
        old = ws.staging_dir / f"{PARSE_PREFIX}{doc_id[:16]}-old-{uuid.uuid4().hex[:8]}"
        os.replace(final, old)
    # The worker wrote the parse straight into the work folder: one rename, no folder to remove (tens of
    # milliseconds each on these disks).
    os.replace(job.work, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    if ws.pages_dir(doc_id).exists():
        shutil.rmtree(ws.pages_dir(doc_id), ignore_errors=True)  # page images of an older parse are stale
    lib.descriptions.replace_source(doc_id, OFFLINE, result.offline)
    # The results its tables report, computed by the worker: replaced whole (a re-parse's old ones go), in the commit
    # that makes the paper ready — a crash before `ready` redoes it, a failure or a delete removes them.
    lib.results.replace_doc(doc_id, result.results)
    try:  # the reference list as data and the citations it resolves in the library; never fails the paper
        # Rules only: one writer commits every paper, and an LLM call here would hold all the others back (the
        # LLM pass over the entries the rules could not read is `core refs refresh`'s).
        store_references(lib, doc_id, parsed.items, chat_model=None)
    except Exception:
        log.exception("reading the references of %s failed; `python -m core refs refresh` tries again", doc_id[:12])


def _write_chunks(lib: Library, pairs: list[tuple[Job, ComputeResult]], drop: Drop
                  ) -> list[tuple[Job, ComputeResult]]:
    """Every document's chunks in one transaction; if it breaks, each alone, so only the one at fault fails."""
    if len(pairs) > 1:
        try:
            lib.chunks.put_chunks_of_docs({job.doc.id: result.chunks for job, result in pairs})
            return pairs
        except Exception:
            log.exception("writing the chunks of %d documents at once failed; writing each alone", len(pairs))
    kept = []
    for job, result in pairs:
        try:
            lib.chunks.put_doc_chunks(job.doc.id, result.chunks)
            kept.append((job, result))
        except Exception as exc:
            _broke(lib, job, exc, drop)
    return kept
