"""The ingest pipeline: queued → parsing → indexing → ready | failed, one document at a time.

Crash safety: parsing writes into staging/ and is renamed into the document's folder only when complete;
chunks replace the document's old chunks in one SQLite transaction; vectors are written last, and a document
becomes searchable only when its status turns `ready`. A process killed half-way leaves a document in
parsing/indexing with a dead worker; `recover` queues it again and the next run redoes it from its source.

A delete may land at any step (core.pipeline.documents.delete_document removes the row first): the worker checks
after every step that wrote something and, finding the paper gone, purges what it wrote and goes on.
"""
from __future__ import annotations

import logging
import os
import shutil
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable

from core.library import Library
from core.pipeline.chunking import chunk_document, window_metadata
from core.pipeline.documents import IMPORT_DIRNAME, is_import, purge_document
from core.pipeline.graph.build import remove_document
from core.pipeline.media.describe import media_chunk_texts
from core.pipeline.parsing import ParseError, ParseOutput, import_mineru_output, parse_pdf
from core.pipeline.status import ProgressFn, StageReporter, worker_alive, worker_id
from core.schema.records import ContentItem, DocStatus, Document, GraphStatus

log = logging.getLogger(__name__)

# Leftovers younger than this may belong to an upload another process is writing right now.
ORPHAN_AGE_S = 60.0
_PARSE_PREFIX = "parse-"  # staging/parse-<doc id[:16]>-<random>: one parse of one paper
_NOT_TITLES = {"abstract", "introduction", "contents", "references"}


def pick_title(items: list[ContentItem], filename: str) -> str:
    for item in items:
        if item.page_idx > 1:
            break
        text = " ".join(item.text.split())
        if item.type == "text" and item.text_level == 1 and len(text) >= 3 and text.lower() not in _NOT_TITLES:
            return text[:300]
    return filename.rsplit(".", 1)[0] if "." in filename else filename


def expected_parse_seconds(pdf_path) -> float:
    """Measured here: MinerU's flash tier parses about 2.5 pages per CPU-second after ~2 s of start-up."""
    try:
        import pymupdf

        with pymupdf.open(pdf_path) as pdf:
            pages = pdf.page_count
    except Exception:  # a file MuPDF cannot open fails fast in parse_pdf with a specific message
        pages = 0
    return 3.0 + pages / 2.0


def _parse(lib: Library, doc: Document, report: StageReporter) -> ParseOutput:
    ws = lib.workspace
    work = ws.staging_dir / f"{_PARSE_PREFIX}{doc.id[:16]}-{uuid.uuid4().hex[:8]}"
    out = work / "parsed"
    out.mkdir(parents=True)
    try:
        if is_import(lib, doc.id):
            report("importing MinerU output", 0.05, force=True)
            result = import_mineru_output(_import_source(lib, doc.id), out, max_pages=lib.settings.parsing.max_pages)
        else:
            source = ws.source_pdf(doc.id)
            report("parsing", 0.02, force=True)
            with report.estimating(0.02, 0.5, expected_parse_seconds(source)):
                result = parse_pdf(source, out, lib.settings.parsing, mineru_home=ws.mineru_home,
                                   progress=lambda msg: report(f"parsing: {msg}", report.fraction))
        final = ws.parsed_dir(doc.id)
        if final.exists():
            os.replace(final, work / "old")
        os.replace(out, final)
        shutil.rmtree(ws.pages_dir(doc.id), ignore_errors=True)  # page images of an older parse are stale
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _import_source(lib: Library, doc_id: str):
    folder = lib.workspace.doc_dir(doc_id) / IMPORT_DIRNAME
    archive = folder / "output.zip"
    return archive if archive.exists() else folder


class _Deleted(Exception):
    """The document was deleted (or taken from this worker) while it was being parsed or indexed."""


def _check_held(lib: Library, doc_id: str) -> None:
    """Called after each step that wrote something: a delete that ran before it missed what the step wrote, so
    the worker stops here and purges it. One that runs after it finds everything in place and purges it itself."""
    current = lib.documents.get(doc_id)
    if current is None or current.status not in (DocStatus.PARSING, DocStatus.INDEXING):
        raise _Deleted()


def _index(lib: Library, doc: Document, items: list[ContentItem], report: StageReporter) -> tuple[int, int, dict]:
    timings = {}
    t = time.perf_counter()
    report("describing tables, figures and equations", 0.5, force=True)
    # Offline descriptions (or VLM ones already made for these very items): cheap enough to keep a paper
    # searchable quickly. A configured VLM describes the items later, in the graph stage (core/multimodal).
    media_texts = media_chunk_texts(lib, doc.id, items)
    timings["describe_s"] = time.perf_counter() - t
    _check_held(lib, doc.id)
    t = time.perf_counter()
    report("chunking", 0.51, force=True)
    chunked = chunk_document(doc.id, items, lib.settings.chunking, lib.tokenizer(), media_texts)
    timings["chunk_s"] = time.perf_counter() - t

    t = time.perf_counter()
    report("loading the embedding model", 0.52, force=True)
    embedder = lib.embedder()
    total = len(chunked.windows)
    vectors = embedder.embed(
        [w.text for w in chunked.windows], batch_size=lib.settings.embedding.batch_size,
        progress=lambda done, n: report(f"embedding {done}/{n} windows", 0.55 + 0.4 * done / max(n, 1)))
    timings["embed_s"] = time.perf_counter() - t
    _check_held(lib, doc.id)

    t = time.perf_counter()
    report("writing the index", 0.96, force=True)
    lib.chunks.put_doc_chunks(doc.id, chunked.chunks)
    lib.windows.delete_doc(doc.id)
    lib.windows.upsert(
        [w.id for w in chunked.windows], vectors, [w.text for w in chunked.windows],
        [window_metadata(w) for w in chunked.windows])
    timings["index_s"] = time.perf_counter() - t
    _check_held(lib, doc.id)
    return len(chunked.chunks), total, timings


def process_document(lib: Library, doc: Document, on_progress: ProgressFn | None = None) -> Document | None:
    """Parse and index one claimed document; any failure ends in `failed` with a specific message. None when
    the document was deleted meanwhile: what this worker wrote is gone too."""
    report = StageReporter(lib, doc.id, on_progress)
    started = time.perf_counter()
    stage = "parsing"
    try:
        t = time.perf_counter()
        parsed = _parse(lib, doc, report)
        _check_held(lib, doc.id)
        timings = {"parse_s": time.perf_counter() - t, "parse_cpu_s": parsed.cpu_seconds}
        counts = dict(Counter(item.type for item in parsed.items))
        title = pick_title(parsed.items, doc.filename)
        stage = "indexing"
        lib.documents.set_status(doc.id, DocStatus.INDEXING, title=title, pages=parsed.pages,
                                 backend=parsed.backend, item_counts=counts, warnings=parsed.warnings)
        n_chunks, n_windows, index_timings = _index(lib, doc, parsed.items, report)
        timings.update(index_timings, total_s=time.perf_counter() - started)
        message = f"{_count(parsed.pages, 'page')}, {_count(len(parsed.items), 'item')}, {_count(n_chunks, 'chunk')}"
        if n_chunks == 0:
            message += "; nothing searchable was found (no text, captions or tables)"
        if parsed.warnings:
            message += f"; {_count(len(parsed.warnings), 'warning')}"
        # Searchable now; the graph stage (core.pipeline.graph.stage) picks the paper up from here.
        lib.documents.set_status(doc.id, DocStatus.READY, message, chunk_count=n_chunks, timings=timings,
                                 graph=GraphStatus.PENDING, graph_detail="waiting for the graph stage")
    except _Deleted:
        pass
    except ParseError as exc:
        _fail(lib, doc.id, str(exc))
    except Exception as exc:  # one bad document must never stop the queue
        if lib.documents.get(doc.id) is not None:  # else deleted: its folder went from under the parse
            log.exception("ingest of %s failed while %s", doc.id, stage)
            _fail(lib, doc.id, f"internal error while {stage}: {type(exc).__name__}: {exc}")
    current = lib.documents.get(doc.id)
    if current is None:
        purge_document(lib, doc.id)
        log.info("%s was deleted while %s; removed what was written for it", doc.id, stage)
    return current


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


def process_queue(lib: Library, on_progress: ProgressFn | None = None, stop: threading.Event | None = None,
                  on_deleted: Callable[[Document], None] | None = None) -> list[Document]:
    """Process queued documents until none is left (or `stop` is set); returns them in their final state. One
    deleted while it was processed is not returned: `on_deleted` gets it as it was claimed."""
    done = []
    me = worker_id()
    while not (stop and stop.is_set()):
        doc = lib.documents.claim_next(me)
        if doc is None:
            break
        result = process_document(lib, doc, on_progress)
        if result is not None:
            done.append(result)
        elif on_deleted is not None:
            on_deleted(doc)
    return done


def recover(lib: Library) -> list[str]:
    """Queue again the documents whose worker died mid-ingest and clear staging leftovers they owned."""
    requeued = []
    live_workers = False
    for doc_id, worker in lib.documents.in_progress_workers().items():
        if worker and worker_alive(worker):
            live_workers = True
            continue
        # Its parse folders are the dead worker's alone, whatever their age: removed before the paper is queued
        # again (and another worker could start a new one).
        for leftover in lib.workspace.staging_dir.glob(f"{_PARSE_PREFIX}{doc_id[:16]}-*"):
            shutil.rmtree(leftover, ignore_errors=True)
        lib.documents.set_status(doc_id, DocStatus.QUEUED, "resumed after an interrupted ingest")
        requeued.append(doc_id)
    if live_workers:
        return requeued  # another process is mid-ingest: its staging files and new folders are not leftovers
    cutoff = time.time() - ORPHAN_AGE_S
    for leftover in lib.workspace.staging_dir.glob("*"):
        if leftover.stat().st_mtime < cutoff:
            shutil.rmtree(leftover, ignore_errors=True) if leftover.is_dir() else leftover.unlink(missing_ok=True)
    known = {d.id for d in lib.documents.list()}
    for folder in lib.workspace.docs_dir.glob("*"):
        if folder.is_dir() and folder.name not in known and folder.stat().st_mtime < cutoff:
            shutil.rmtree(folder, ignore_errors=True)  # a file saved just before a crash, never registered
    return requeued
