"""One document's heavy, pure work: parse → offline media descriptions → chunks → embedding windows.

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

from core.models.embedding import get_embedder, get_tokenizer
from core.pipeline.chunking import ChunkedDocument, Window, chunk_document
from core.pipeline.media.describe import MediaDoc, chunk_texts, describe_offline
from core.pipeline.media.items import media_labels
from core.pipeline.parsing import ParseError, ParseOutput, import_mineru_output, parse_pdf
from core.pipeline.status import ProgressTicker
from core.schema.media import OFFLINE, VLM, Description
from core.schema.records import Chunk, ContentItem
from core.settings.config import ChunkingConfig, EmbeddingConfig, ParsingConfig

log = logging.getLogger(__name__)

PDF, IMPORT = "pdf", "import"  # what a task's source is: a PDF or text document, or a MinerU output to import
SOURCE_PDF = "source.pdf"  # the name parse_pdf is given; a text document sits beside it as source.<md|txt|html>

# (doc id, attempt, detail, fraction, force, worker): what a worker says about a task while it runs
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


@dataclass
class ComputeResult:
    doc_id: str
    attempt: int
    worker: str  # host:pid of the process that ran it
    error: str = ""  # user-facing: why the document could not be computed
    parsed: ParseOutput | None = None
    parsed_files: dict[str, bytes] | None = None  # relative path → bytes, when the task had no out_dir
    offline: list[Description] = field(default_factory=list)
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

    def __init__(self, task: ComputeTask, sink: ProgressSink | None):
        self.task, self.sink, self.worker = task, sink, worker_name()
        self._last = 0.0

    def _emit(self, detail: str, fraction: float, force: bool = False) -> None:
        now = time.monotonic()
        if self.sink is not None and (force or now - self._last > 0.25):
            self._last = now
            self.sink((self.task.doc_id, self.task.attempt, detail, fraction, force, self.worker))


def compute_document(task: ComputeTask, sink: ProgressSink | None = None) -> ComputeResult:
    cpu0, started = _cpu_seconds(), time.perf_counter()
    result = ComputeResult(task.doc_id, task.attempt, worker_name())
    report = _Report(task, sink)
    stage = "parsing"
    scratch = Path(tempfile.mkdtemp(prefix="papergraph-compute-"))
    try:
        source = _source(task, scratch)
        out = Path(task.out_dir) if task.out_dir else scratch / "parsed"
        out.mkdir(parents=True, exist_ok=True)
        parsed = _parse(task, source, out, report)
        timings = {"parse_s": time.perf_counter() - started, "parse_cpu_s": parsed.cpu_seconds}
        stage = "indexing"
        pdf = source if task.kind == PDF else scratch / SOURCE_PDF  # an import has no PDF: no text in boxes
        result.offline, chunked, result.vectors, index_timings = index_items(task, parsed.items, pdf, report)
        timings.update(index_timings)
        result.parsed, result.chunks, result.windows = parsed, chunked.chunks, chunked.windows
        if not task.out_dir:
            result.parsed_files = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
                                   if p.is_file()}
        result.timings = {k: round(v, 4) for k, v in timings.items()}
    except ParseError as exc:
        result.error = str(exc)
    except Exception as exc:  # one bad document must never take its worker (or the queue) down
        log.exception("computing %s failed while %s", task.doc_id, stage)
        result.error = f"internal error while {stage}: {type(exc).__name__}: {exc}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    result.cpu_seconds = round(_cpu_seconds() - cpu0, 3)
    return result


def _cpu_seconds() -> float:
    """This process (all threads) and the children it waited for (MinerU's), so far."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def index_items(task: ComputeTask, items: list[ContentItem], pdf: Path, report: ProgressTicker
                ) -> tuple[list[Description], ChunkedDocument, np.ndarray, dict[str, float]]:
    """A parsed document's offline media descriptions, chunks and window vectors."""
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
    t = time.perf_counter()
    report("loading the embedding model", 0.52, force=True)
    embedder = get_embedder(task.embedding.model, task.embedding.variant)
    total = len(chunked.windows)
    # The first and last report are forced: a paper embedded within one throttle interval still shows the stage.
    report(f"embedding 0/{total} windows", 0.55, force=True)
    vectors = embedder.embed(
        [w.text for w in chunked.windows], batch_size=task.embedding.batch_size,
        progress=lambda done, n: report(f"embedding {done}/{n} windows", 0.55 + 0.4 * done / max(n, 1),
                                        force=done >= n))
    timings["embed_s"] = time.perf_counter() - t
    return offline, chunked, vectors, timings


def _source(task: ComputeTask, scratch: Path) -> Path:
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
    with report.estimating(0.02, 0.5, expected_parse_seconds(source)):
        return parse_pdf(source, out, task.parsing, mineru_home=Path(task.mineru_home),
                         progress=lambda msg: report(f"parsing: {msg}", report.fraction))
