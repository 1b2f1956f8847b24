"""What the ingest writer's workers have done: documents, pages and CPU-seconds per worker, and pages per second
since the run began. The CLI prints it at the end; the Library page shows the app's (core.pipeline.worker)."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass


@dataclass
class WorkerLoad:
    docs: int = 0
    pages: int = 0
    cpu_s: float = 0.0
    current: str = ""  # the document it is computing now ('' when idle)


class Throughput:
    def __init__(self):
        self._lock = threading.Lock()
        self.backend, self.workers = "", 0
        self.started = self.ended = 0.0
        self.per_worker: dict[str, WorkerLoad] = {}

    def start(self, backend: str, workers: int) -> None:
        """A writer's run begins: the figures are this run's (the app's last batch of uploads, a CLI command)."""
        with self._lock:
            self.backend, self.workers = backend, workers
            self.started, self.ended = time.monotonic(), 0.0
            self.per_worker = {}

    def stop(self) -> None:
        with self._lock:
            self.ended = time.monotonic()

    def working(self, worker: str, doc_id: str) -> None:
        with self._lock:
            self.per_worker.setdefault(worker, WorkerLoad()).current = doc_id

    def finished(self, worker: str, pages: int, cpu_s: float) -> None:
        with self._lock:
            load = self.per_worker.setdefault(worker, WorkerLoad())
            load.docs, load.pages, load.cpu_s, load.current = load.docs + 1, load.pages + pages, load.cpu_s + cpu_s, ""

    @property
    def docs(self) -> int:
        return sum(w.docs for w in self.per_worker.values())

    @property
    def pages(self) -> int:
        return sum(w.pages for w in self.per_worker.values())

    def summary(self) -> str:
        """One line: backend, workers, documents and pages done, pages per second (wall) and per CPU-second."""
        with self._lock:
            if not self.backend:
                return ""
            wall = max((self.ended or time.monotonic()) - self.started, 1e-9)
            cpu = sum(w.cpu_s for w in self.per_worker.values())
            docs, pages = self.docs, self.pages
            line = f"{self.backend} backend, {self.workers} worker{'s' if self.workers != 1 else ''}: {docs} " \
                   f"document{'s' if docs != 1 else ''}, {pages} pages in {wall:.0f} s ({pages / wall:.2f} pages/s"
            line += f", {pages / cpu:.2f} pages per CPU-second)" if cpu else ")"
            per = [f"{name}: {w.docs} docs, {w.pages} pages, {w.cpu_s:.0f} CPU-s" for name, w in
                   sorted(self.per_worker.items())]
            return line + ("; " + "; ".join(per) if per else "")
