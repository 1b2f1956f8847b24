"""Child process that runs mineru: `python -m core.pipeline.parsing.mineru_worker --serve` parses one PDF per
line of stdin ({"pdf": ..., "out": ..., "tier": ...}) for as long as its parent keeps it;
`python -m core.pipeline.parsing.mineru_worker PDF OUT_DIR TIER` parses one and exits.

mineru starts `spawn` multiprocessing pools, which re-import the main module, so it must run under a
`__main__` guard in its own process rather than in Streamlit's script thread. A child that serves many PDFs pays
mineru's imports once: they are ~1.6 of the ~2.5 CPU-s a one-page paper costs in a fresh process.
Protocol with the parent (mineru_runner): lines "progress: ..." on stdout, "page: N/M stage" as MinerU's
layout analysis starts each page (N counts the pages of the PDF, from 1); on failure one line "error: ...";
then, when serving, "done: <CPU-s of this PDF>"; a one-shot run exits 2 on failure. On success OUT_DIR holds
mineru's own files plus content_list.json. A job may name a page range ("pages": "1-5,8-14"; page_idx stays that
of the whole PDF).

The child caps its own address space (RLIMIT_AS, from MEMORY_ENV), which its spawned helpers inherit: an
allocation past the cap raises MemoryError in MinerU's Python code (measured on the stress PDF: it surfaces in
MinerU's vector-formula grouping) instead of growing until the kernel's OOM killer picks a victim. The parent
also watches the resident memory of the whole process group (mineru_runner).
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

PROGRESS, ERROR, DONE, PAGE = "progress: ", "error: ", "done: ", "page: "
PARENT_PID_ENV = "PAPERGRAPH_MINERU_PARENT"  # the pid that started this process (set by mineru_runner)
MEMORY_ENV = "PAPERGRAPH_MINERU_MEMORY"  # bytes: this process's address-space cap (set by mineru_runner)
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent() -> None:
    """On Linux, have the kernel SIGKILL this process when its parent dies, so a killed app or CLI leaves no
    mineru parsing on for minutes. Runs at import: children started with multiprocessing's `spawn` re-import this
    module as __mp_main__, so mineru's own workers get it too (each bound to the process that started it)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        return  # no prctl: mineru_runner still kills the whole process group when it gives up
    expected = os.environ.get(PARENT_PID_ENV, "")
    if expected.isdigit() and os.getppid() != int(expected):
        os._exit(3)  # the parent died before the signal was armed: nobody is waiting for this parse
    os.environ[PARENT_PID_ENV] = str(os.getpid())  # what this process's own children check


def limit_memory() -> None:
    """RLIMIT_AS at the cap the parent chose. An address-space limit, not a resident one (Linux enforces no
    RLIMIT_RSS): it also counts reserved, untouched memory, which the flash tier keeps small (~0.25 GB above its
    resident size here; MALLOC_ARENA_MAX, set by the parent, keeps glibc's per-thread arenas from adding more)."""
    cap = os.environ.get(MEMORY_ENV, "")
    if not cap.isdigit() or int(cap) <= 0:
        return
    import resource

    try:
        resource.setrlimit(resource.RLIMIT_AS, (int(cap), int(cap)))
    except (ValueError, OSError):
        pass  # a hard limit already lower: that one holds; the parent's watchdog holds either way


if __name__ in ("__main__", "__mp_main__"):  # the worker and spawned children, never a process importing this
    die_with_parent()
    limit_memory()


def _say(prefix: str, message: str) -> None:
    print(prefix + " ".join(message.split()), flush=True)


_pages: list[int] = []  # the PDF's page numbers (from 1) of the pages MinerU is given, in order


def _report_page(stage: str, index: int) -> None:
    number = _pages[index] if 0 <= index < len(_pages) else index + 1
    last = _pages[-1] if _pages else 0
    print(f"{PAGE}{number}/{last} {stage}", flush=True)


def watch_pages() -> None:
    """Say which page MinerU's layout analysis is on, so the parent can tell a slow document from a stuck page.
    MinerU reports no pages itself: this wraps the two per-page steps of the flash tier's analyser (docvortex),
    and does nothing if a MinerU release renames them (the parent then keeps the deadline and the memory cap)."""
    try:
        from docvortex.analyzers.native.pdf import pipeline
        from docvortex.document.pdf._document import PDFDocument
    except ImportError:
        return
    read, prepare = getattr(PDFDocument, "_extract_native_page", None), getattr(pipeline, "_prepare_page_source", None)
    if read is None or prepare is None or getattr(read, "_papergraph", False):
        return

    def reading(self, page_idx, *args, **kwargs):
        _report_page("reading", page_idx)
        return read(self, page_idx, *args, **kwargs)

    def laying_out(*args, **kwargs):
        index = kwargs.get("page_index", 0)
        _report_page("layout", index)
        prepared = prepare(*args, **kwargs)
        if index == len(_pages) - 1:  # the whole-document steps follow: no page to report any more
            _say(PROGRESS, "mineru: assembling the document")
        return prepared

    reading._papergraph = True
    PDFDocument._extract_native_page = reading
    pipeline._prepare_page_source = laying_out


def _page_numbers(pdf: Path, page_range: str) -> list[int]:
    import pypdfium2

    count = len(pypdfium2.PdfDocument(str(pdf)))
    if page_range in ("", "all"):
        return list(range(1, count + 1))
    numbers: list[int] = []
    for part in page_range.split(","):
        first, _, last = part.partition("-")
        numbers.extend(range(int(first), int(last or first) + 1))
    return [n for n in numbers if 1 <= n <= count]


def run(pdf: Path, out_dir: Path, tier: str, page_range: str = "all") -> int:
    start = time.monotonic()
    _say(PROGRESS, f"mineru ({tier}): loading")
    from mineru.parser import parse
    from mineru.parser.writer import FileBasedDataWriter
    from mineru.render.api import render
    from mineru.render.contracts import RenderFormat
    from mineru.types import MiddleJson

    watch_pages()
    _pages[:] = _page_numbers(pdf, page_range)
    _say(PROGRESS, f"mineru ({tier}): analysing layout")
    result = parse(str(pdf), tier=tier, ocr_mode="txt", page_range=page_range or "all")
    _say(PROGRESS, f"mineru ({tier}): writing results")
    out_dir.mkdir(parents=True, exist_ok=True)
    result.save(FileBasedDataWriter(str(out_dir)))
    middle = json.loads((out_dir / "middle_json.json").read_text(encoding="utf-8"))
    content_list = render(MiddleJson.from_dict(middle), RenderFormat.CONTENT_LIST)
    (out_dir / "content_list.json").write_text(json.dumps(content_list, ensure_ascii=False), encoding="utf-8")
    _say(PROGRESS, f"mineru ({tier}): {len(content_list)} items in {time.monotonic() - start:.1f} s")
    return 0


def _cpu() -> float:
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def serve() -> int:
    """Parse the PDF of each line of stdin until stdin closes. A failed PDF is reported and ends the child: after
    an exception deep in a parser, its state is not worth trusting with the next paper (the parent starts a new
    one)."""
    for line in sys.stdin:
        cpu0 = _cpu()
        try:
            job = json.loads(line)
            run(Path(job["pdf"]), Path(job["out"]), job["tier"], job.get("pages", "all"))
        except Exception as exc:
            _report_failure(exc)
            print(DONE + f"{_cpu() - cpu0:.3f}", flush=True)
            return 2
        print(DONE + f"{_cpu() - cpu0:.3f}", flush=True)
    return 0


def _report_failure(exc: BaseException) -> None:
    message = " ".join(str(exc).split())  # every failure in one line the parent can show
    _say(ERROR, f"{type(exc).__name__}: {message[:400]}" if message else type(exc).__name__)


def main(argv: list[str]) -> int:
    if argv == ["--serve"]:
        return serve()
    if len(argv) != 3:
        _say(ERROR, "usage: python -m core.pipeline.parsing.mineru_worker PDF OUT_DIR TIER")
        return 2
    try:
        return run(Path(argv[0]), Path(argv[1]), argv[2])
    except BaseException as exc:
        _report_failure(exc)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
