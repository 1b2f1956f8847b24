"""The `local` compute backend: a pool of worker processes on this machine, one per core by default.

Workers are spawned (not forked: the writer's process holds SQLite connections, Chroma and threads that must not
be copied) and live as long as the process that made the pool, so each loads the embedding model once and keeps
it. A worker watches its parent and exits when it dies, so a killed app or CLI leaves no worker parsing on (and
MinerU's child, tied to its worker by PR_SET_PDEATHSIG, goes with it).

Progress travels on a Unix datagram socket the writer owns (`ProgressInbox`): a worker killed mid-send can
corrupt nothing and block no one, which a multiprocessing queue (a shared lock) cannot promise.
"""
from __future__ import annotations

import multiprocessing
import os
import pickle
import socket
import tempfile
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from core.pipeline.compute.task import ComputeResult, ComputeTask, compute_batch, compute_document

_MAX_DATAGRAM = 8192
# Workers run below the writer's process: there the graph stage follows the ingest (core.pipeline.run) and
# searches are answered, serial work a user waits for, while the workers' documents are many and parallel. They
# still take every idle cycle. 994 short documents, graph following: end to end 45.9 → 41.2 s at nice 0 → 5
# (to searchable 28.9 → 33.1 s; mean of two runs each).
WORKER_NICE = 5
# One worker, one core, as a Ray task gets by default: `--workers N` is how many cores an ingest may take, so one
# worker on two cores leaves a core for the questions asked meanwhile. Threads inside a worker also buy less than
# workers do: the 10 shared papers took one 2-thread worker 71 s and 92 CPU-s (1.3 cores busy: MinerU is
# single-threaded, only OCR and the embedder used both), two 1-thread workers 53 s and 95 CPU-s.
WORKER_THREADS = 1
_senders: dict[str, socket.socket] = {}


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)  # the writer died: stop now (MinerU's child dies with this process)


def _init_worker(parent: int, threads: int) -> None:
    # Before torch, onnxruntime or MinerU start a thread: one worker uses one core (WORKER_THREADS).
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if hasattr(os, "nice"):
        os.nice(WORKER_NICE)  # MinerU's child inherits it
    threading.Thread(target=_watch_parent, args=(parent,), name="papergraph-watch-parent", daemon=True).start()


def _send(address: str, message: tuple) -> None:
    sock = _senders.get(address)
    if sock is None:
        sock = _senders[address] = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.setblocking(False)
    try:
        sock.sendto(pickle.dumps(message)[:_MAX_DATAGRAM], address)
    except OSError:  # the writer is gone or behind: progress is advisory, the result is what counts
        pass


def run_task(task: ComputeTask, progress_to: str | None = None) -> ComputeResult:
    """What a pool worker runs (a module-level function: it is pickled by name)."""
    sink = (lambda message: _send(progress_to, message)) if progress_to else None
    return compute_document(task, sink)


def run_batch(tasks: list[ComputeTask], progress_to: str | None = None, key: str = "") -> list[ComputeResult]:
    """What a pool worker runs for a batch of short documents (core.pipeline.compute.task.compute_batch)."""
    sink = (lambda message: _send(progress_to, message)) if progress_to else None
    return compute_batch(tasks, sink, key)


class ProgressInbox:
    """The writer's end of the workers' progress: a datagram socket read without blocking."""

    def __init__(self):
        self._dir = tempfile.mkdtemp(prefix="papergraph-progress-")
        self.address = str(Path(self._dir) / "inbox")
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sock.bind(self.address)
        self._sock.setblocking(False)

    def drain(self) -> list[tuple]:
        out = []
        while True:
            try:
                data = self._sock.recv(_MAX_DATAGRAM)
            except (BlockingIOError, OSError):
                return out
            try:
                out.append(pickle.loads(data))
            except Exception:  # a message cut at the size limit: skip it
                continue

    def close(self) -> None:
        self._sock.close()
        Path(self.address).unlink(missing_ok=True)
        os.rmdir(self._dir)


class LocalBackend:
    name = "local"
    ships_files = False  # workers read the source and write the parse on this machine's disk

    def __init__(self, workers: int):
        self.workers = max(1, workers)
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_init_worker, initargs=(os.getpid(), WORKER_THREADS))
            return self._pool

    def progress_inbox(self) -> ProgressInbox:
        return ProgressInbox()  # workers report their progress on the writer's datagram socket

    def submit(self, task: ComputeTask, progress_to: str | None = None) -> Future:
        return self._executor().submit(run_task, task, progress_to)

    def submit_batch(self, tasks: list[ComputeTask], progress_to: str | None = None, key: str = "") -> Future:
        """One future for several documents: its result is their ComputeResults, in order."""
        return self._executor().submit(run_batch, tasks, progress_to, key)

    def cancel(self, future: Future) -> None:
        future.cancel()  # a task already running finishes; the writer drops its result

    def worker_lost(self, exc: BaseException) -> bool:
        return isinstance(exc, BrokenProcessPool)

    def reset(self) -> None:
        """After a worker died the pool is broken for good: the next submit starts a new one."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        self.reset()


_backends: dict[int, LocalBackend] = {}
_backends_lock = threading.Lock()


def local_backend(workers: int) -> LocalBackend:
    """The process's pool of this size, made once: its workers keep their models between queue runs."""
    workers = workers or os.cpu_count() or 1
    with _backends_lock:
        if workers not in _backends:
            _backends[workers] = LocalBackend(workers)
        return _backends[workers]
