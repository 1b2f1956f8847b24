"""Who is working on a document and how far it got: worker identity (for crash recovery) and the live stage
reporter that both the ingest and the graph stage write through."""
from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager

from core.library import Library

ProgressFn = Callable[[str, str, float], None]  # doc id, stage detail, fraction done
TIME_LEFT_MARK = " (about "  # begins the estimate some stage details end with: "parsing (about 12 s left)"


def worker_id() -> str:
    """host:pid:process-start:thread. The start time tells a live worker from a new process that was given the
    dead worker's pid after a crash."""
    return f"{socket.gethostname()}:{os.getpid()}:{_start_time(os.getpid())}:{threading.get_ident()}"


def _start_time(pid: int) -> int:
    import psutil

    try:
        return int(psutil.Process(pid).create_time())
    except psutil.Error:
        return -1


def worker_alive(worker: str) -> bool:
    """Whether the worker that claimed a row (worker_id) still runs: its process (the same pid and start time: a pid
    reused by a new process after a crash is not it) and, in this very process, its thread. A live process of another
    writer keeps its claims; a killed one, or a thread of ours that died with an error, does not."""
    parts = worker.split(":")
    if len(parts) != 4 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return False
    if not parts[2].lstrip("-").isdigit() or _start_time(int(parts[1])) != int(parts[2]):
        return False
    if int(parts[1]) != os.getpid() or not parts[3].isdigit():
        return True  # another process's threads cannot be seen from here: its being alive is enough
    return any(t.ident == int(parts[3]) for t in threading.enumerate())


class ProgressTicker:
    """A stage's detail and fraction done, sent somewhere by `_emit`; `estimating` moves it while a stage that
    reports nothing of its own runs. The compute workers (core.pipeline.compute) send theirs to the writer."""

    detail: str = ""
    fraction: float = 0.0

    def __call__(self, detail: str, fraction: float, force: bool = False) -> None:
        self.detail, self.fraction = detail, fraction
        self._emit(detail, fraction, force)

    def _emit(self, detail: str, fraction: float, force: bool = False) -> None:
        raise NotImplementedError

    @contextmanager
    def estimating(self, start: float, end: float, expected_s: float):
        """While a stage that reports no fractions of its own runs (MinerU's parse), move the bar from `start`
        towards `end` over the time the stage is expected to take, and say about how long is left."""
        stop = threading.Event()
        began = time.monotonic()

        def tick() -> None:
            while not stop.wait(0.5):
                elapsed = time.monotonic() - began
                share = min(elapsed / expected_s, 0.95) if expected_s > 0 else 0.95
                left = expected_s - elapsed
                suffix = f"{TIME_LEFT_MARK}{left:.0f} s left)" if left >= 1 else ""
                self.fraction = start + (end - start) * share
                self._emit(self.detail + suffix, self.fraction)

        ticker = threading.Thread(target=tick, name="papergraph-progress", daemon=True)
        ticker.start()
        try:
            yield
        finally:
            stop.set()
            ticker.join()


class StageReporter(ProgressTicker):
    """Writes a document's live stage to the registry, at most a few times a second. With `graph` it is the graph
    stage's own detail and fraction: a paper is ready, with its ingest done, meanwhile."""

    def __init__(self, lib: Library, doc_id: str, on_progress: ProgressFn | None, graph: bool = False):
        self.lib, self.doc_id, self.on_progress = lib, doc_id, on_progress
        self._write = lib.stages.report_graph_stage if graph else lib.stages.report_stage
        self._last = 0.0
        self.detail, self.fraction = "", 0.0

    def _emit(self, detail: str, fraction: float, force: bool = False) -> None:
        if self.on_progress:
            self.on_progress(self.doc_id, detail, fraction)
        now = time.monotonic()
        if force or now - self._last > 0.3:
            self._last = now
            self._write(self.doc_id, detail, fraction)
