"""One document's heavy, pure work: parse → offline media descriptions → results → chunks → embedding windows.

`compute_document` reads nothing of the workspace but what its task names (a source path on a shared disk, or
the source's bytes) and writes nothing but its own output folder, so any process can run it: the writer's own,
a local worker process, a Ray worker on another machine. Its result is a value the single writer commits
(core.pipeline.ingest); running a task twice gives the same result, so a retried or duplicated task is harmless.
A document that cannot be computed comes back with `error` set, never as an exception: only a worker that dies
raises (BrokenProcessPool, Ray's worker errors), and the writer retries that.
"""
from __future__ import annotations

import logging
import os
import resource
import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.content.media_doc import MediaDoc
from core.content.media_items import media_labels
from core.models.embedding import get_embedder, get_tokenizer
from core.pipeline.chunking import ChunkedDocument, Window, chunk_document
from core.pipeline.media.describe import chunk_texts, describe_offline
from core.pipeline.parsing import ParseError, ParseOutput, import_mineru_output, parse_pdf
from core.pipeline.parsing.mineru_runner import children_cpu_seconds
from core.pipeline.result_records import compute_results
from core.pipeline.status import ProgressTicker
from core.schema.media import OFFLINE, VLM, Description
from core.schema.records import Chunk, ContentItem
from core.schema.results import ResultRecord
from core.settings.config import ChunkingConfig, EmbeddingConfig, ParsingConfig

log = logging.getLogger(__name__)

PDF, IMPORT = "pdf", "import"  # what a task's source is: a PDF or text document, or a MinerU output to import
SOURCE_PDF = "source.pdf"  # the name parse_pdf is given; a text document sits beside it as source.<md|txt|html>

# (doc id or batch key, attempt, detail, fraction, force, worker): what a worker says about a task while it runs
ProgressSink = Callable[[tuple], None]


@dataclass
class ComputeTask:
    doc_id: str
    kind: str  # PDF | IMPORT
    parsing: ParsingConfig
    chunking: ChunkingConfig
    embedding: EmbeddingConfig
    mineru_home: str
    # Where the source is: a path this process can read (the local pool shares the disk) ...
    source: str = ""
    # ... or its files by name, for a worker on another machine (Ray): {"source.pdf": b"..."}.
    files: dict[str, bytes] = field(default_factory=dict)
    out_dir: str = ""  # where the parse is written; "" = a temporary folder, returned as `parsed_files`
    vlm: dict[int, Description] = field(default_factory=dict)  # VLM descriptions made earlier, by item index
    attempt: int = 0
    parse_memory: int = 0  # bytes the MinerU child may hold (core.pipeline.parsing.budget); 0: the whole budget
    every_page_to_mineru: bool = False  # a retry with a larger budget: no page is kept from MinerU
    parse_memory_note: str = ""  # why parse_memory is not what the retry asked for (budget.retry_cap)


@dataclass
class ComputeResult:
    doc_id: str
    attempt: int
    worker: str  # host:pid of the process that ran it
    error: str = ""  # user-facing: why the document could not be computed
    parsed: ParseOutput | None = None
    parsed_files: dict[str, bytes] | None = None  # relative path → bytes, when the task had no out_dir
    offline: list[Description] = field(default_factory=list)
    results: list[ResultRecord] = field(default_factory=list)  # read from its tables; stored by the writer
    chunks: list[Chunk] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)
    vectors: np.ndarray | None = None
    timings: dict[str, float] = field(default_factory=dict)
    cpu_seconds: float = 0.0  # the worker's CPU for this task, MinerU's child included


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def expected_parse_seconds(pdf_path) -> float:
    """Measured here: MinerU's flash tier parses about 2.5 pages per CPU-second after ~2 s of start-up."""
    try:
        import pymupdf

        with pymupdf.open(pdf_path) as pdf:
            pages = pdf.page_count
    except Exception:  # a file MuPDF cannot open (or a text document) fails fast or needs no estimate
        pages = 0
    return 3.0 + pages / 2.0


class _Report(ProgressTicker):
    """Progress of a task, sent to the writer (local pool) or dropped (Ray): at most a few times a second, and
    every change of stage."""

    def __init__(self, task: ComputeTask, sink: ProgressSink | None, key: str = ""):
        self.task, self.sink, self.worker = task, sink, worker_name()
        self.key = key or task.doc_id  # what the writer knows the task (or the batch) by
        self._last = 0.0

    def _emit(self, detail: str, fraction: float, force: bool = False) -> None:
        now = time.monotonic()
        if self.sink is not None and (force or now - self._last > 0.25):
            self._last = now
            self.sink((self.key, self.task.attempt, detail, fraction, force, self.worker))


def compute_document(task: ComputeTask, sink: ProgressSink | None = None) -> ComputeResult:
    return compute_batch([task], sink)[0]


def compute_batch(tasks: list[ComputeTask], sink: ProgressSink | None = None, key: str = "") -> list[ComputeResult]:
    """Several documents in one call (the writer sends short text documents this way): each is parsed, described
    and chunked on its own, and fails on its own; the windows of all of them are embedded in one call, so a
    paragraph-sized document pays no call, process round trip or model batch of its own. Progress is the whole
    batch's, sent under `key` (default: the first task's document id), which the writer shows on each of them."""
    report = _Report(tasks[0], sink, key)
    results: list[ComputeResult] = []
    prepared: list[tuple[ComputeResult, ChunkedDocument]] = []
    for n, task in enumerate(tasks):
        if len(tasks) > 1:
            report(f"parsing and chunking {n + 1}/{len(tasks)} documents", 0.5 * n / len(tasks), force=n == 0)
        cpu0 = _cpu_seconds()
        result, chunked = _prepare(task, report if len(tasks) == 1 else _Report(task, None))
        results.append(result)
        result.cpu_seconds = _cpu_seconds() - cpu0
        if chunked is not None:
            prepared.append((result, chunked))
    if prepared:
        cpu0, t = _cpu_seconds(), time.perf_counter()
        try:
            vectors = embed_windows(tasks[0].embedding, [w for _, c in prepared for w in c.windows], report)
        except Exception as exc:  # the model itself broke: every document of the batch fails with the reason
            log.exception("embedding a batch of %d documents failed", len(prepared))
            for result, _ in prepared:
                result.error = f"internal error while indexing: {type(exc).__name__}: {exc}"
        else:
            embed_s, embed_cpu = time.perf_counter() - t, _cpu_seconds() - cpu0
            total, start = max(len(vectors), 1), 0
            for result, chunked in prepared:
                n = len(chunked.windows)
                result.vectors, start = vectors[start:start + n], start + n
                # The batch's one embedding call, shared by window count.
                result.timings["embed_s"] = embed_s * n / total
                result.cpu_seconds += embed_cpu * n / total
    for result in results:
        result.timings = {k: round(v, 4) for k, v in result.timings.items()}
        if len(tasks) > 1:
            result.timings["compute_batch_docs"] = len(tasks)  # documents that shared its task
        result.cpu_seconds = round(result.cpu_seconds, 3)
    return results


def _prepare(task: ComputeTask, report: _Report) -> tuple[ComputeResult, ChunkedDocument | None]:
    """Parse, offline descriptions and chunks of one document; None with `error` set when it cannot be done."""
    started = time.perf_counter()
    result = ComputeResult(task.doc_id, task.attempt, worker_name())
    stage = "parsing"
    # A scratch folder only for what needs one (a Ray task's files, an import, a parse returned as files): on
    # these disks creating and removing a folder costs tens of milliseconds, more than a paragraph's whole parse.
    scratch = Path(tempfile.mkdtemp(prefix="papergraph-compute-")) \
        if task.files or not task.out_dir or task.kind == IMPORT else None
    try:
        source = _source(task, scratch)
        out = Path(task.out_dir) if task.out_dir else scratch / "parsed"
        out.mkdir(parents=True, exist_ok=True)
        parsed = _parse(task, source, out, report)
        if task.parse_memory_note:
            parsed.warnings.insert(0, task.parse_memory_note)
        timings = {"parse_s": time.perf_counter() - started, "parse_cpu_s": parsed.cpu_seconds}
        stage = "indexing"
        pdf = source if task.kind == PDF else scratch / SOURCE_PDF  # an import has no PDF: no text in boxes
        result.offline, chunked, describe_timings = describe_and_chunk(task, parsed.items, pdf, report)
        timings.update(describe_timings)
        t = time.perf_counter()
        result.results = compute_results(task.doc_id, parsed.items)
        timings["results_s"] = time.perf_counter() - t
        result.parsed, result.chunks, result.windows = parsed, chunked.chunks, chunked.windows
        if not task.out_dir:
            result.parsed_files = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
                                   if p.is_file()}
        result.timings = timings
        return result, chunked
    except ParseError as exc:
        result.error = str(exc)
    except Exception as exc:  # one bad document must never take its worker (or the queue) down
        log.exception("computing %s failed while %s", task.doc_id, stage)
        result.error = f"internal error while {stage}: {type(exc).__name__}: {exc}"
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return result, None


def _cpu_seconds() -> float:
    """This process (all threads) and its MinerU children, so far. RUSAGE_CHILDREN would miss a MinerU child that
    stays alive between papers (and count it whole when it is reaped): the runner counts what each one used."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime + children_cpu_seconds()


def index_items(task: ComputeTask, items: list[ContentItem], pdf: Path, report: ProgressTicker
                ) -> tuple[list[Description], ChunkedDocument, np.ndarray, dict[str, float]]:
    """A parsed document's offline media descriptions, chunks and window vectors."""
    offline, chunked, timings = describe_and_chunk(task, items, pdf, report)
    t = time.perf_counter()
    vectors = embed_windows(task.embedding, chunked.windows, report)
    timings["embed_s"] = time.perf_counter() - t
    return offline, chunked, vectors, timings


def describe_and_chunk(task: ComputeTask, items: list[ContentItem], pdf: Path, report: ProgressTicker
                       ) -> tuple[list[Description], ChunkedDocument, dict[str, float]]:
    """A parsed document's offline media descriptions and chunks (with their embedding windows, not embedded)."""
    timings = {}
    t = time.perf_counter()
    report("describing tables, figures and equations", 0.5, force=True)
    offline = describe_offline(pdf, task.doc_id, items, task.parsing.ocr)
    stored = {d.item_index: {OFFLINE: d} for d in offline}
    for index, description in task.vlm.items():
        stored.setdefault(index, {})[VLM] = description
    media_texts = chunk_texts(MediaDoc(task.doc_id, items, media_labels(items), stored))
    timings["describe_s"] = time.perf_counter() - t
    t = time.perf_counter()
    report("chunking", 0.51, force=True)
    chunked = chunk_document(task.doc_id, items, task.chunking, get_tokenizer(task.embedding.model), media_texts)
    timings["chunk_s"] = time.perf_counter() - t
    return offline, chunked, timings


def embed_windows(config: EmbeddingConfig, windows: list[Window], report: ProgressTicker) -> np.ndarray:
    report("loading the embedding model", 0.52, force=True)
    embedder = get_embedder(config.model, config.variant)
    total = len(windows)
    # The first and last report are forced: a paper embedded within one throttle interval still shows the stage.
    report(f"embedding 0/{total} windows", 0.55, force=True)
    return embedder.embed([w.text for w in windows], batch_size=config.batch_size,
                          progress=lambda done, n: report(f"embedding {done}/{n} windows",
                                                          0.55 + 0.4 * done / max(n, 1), force=done >= n))


def _source(task: ComputeTask, scratch: Path | None) -> Path:
    if not task.files:
        return Path(task.source)
    folder = scratch / "source"
    folder.mkdir()
    for name, data in task.files.items():
        (folder / Path(name).name).write_bytes(data)  # names are the writer's own (source.*, output.zip)
    return folder / (SOURCE_PDF if task.kind == PDF else next(iter(task.files)))


def _parse(task: ComputeTask, source: Path, out: Path, report: _Report) -> ParseOutput:
    if task.kind == IMPORT:
        report("importing MinerU output", 0.05, force=True)
        return import_mineru_output(source, out, max_pages=task.parsing.max_pages)
    report("parsing", 0.02, force=True)
    if not source.exists():  # a text document (source.<md|txt|html> beside it): parsed at once, no estimate
        return parse_pdf(source, out, task.parsing, mineru_home=Path(task.mineru_home))
    with report.estimating(0.02, 0.5, expected_parse_seconds(source)):
        return parse_pdf(source, out, task.parsing, mineru_home=Path(task.mineru_home),
                         progress=lambda msg: report(f"parsing: {msg}", report.fraction),
                         memory_bytes=task.parse_memory or None, every_page_to_mineru=task.every_page_to_mineru)
