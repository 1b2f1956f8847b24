"""A background ingest thread for the app: uploads return at once, the Library page polls the registry.

Parsing itself runs in child processes (see core.pipeline.parsing), so this thread mostly waits; embedding and graph
extraction run here and share the process's one embedding model with search.
"""
from __future__ import annotations

import logging
import threading

from core.library import Library
from core.pipeline.graph.stage import process_graph_queue, recover_graph
from core.pipeline.ingest import process_queue, recover

log = logging.getLogger(__name__)


class BackgroundIngestor:
    def __init__(self, lib: Library):
        self.lib = lib
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        recover(lib)
        recover_graph(lib)

    def kick(self) -> None:
        """Make sure queued documents are being processed; cheap to call on every page run."""
        with self._lock:
            self._wake.set()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="papergraph-ingest", daemon=True)
                self._thread.start()

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            try:
                done = process_queue(self.lib, stop=self._stop)
                # One paper's graph at a time, paused as soon as an upload is queued, so new papers become
                # searchable without waiting for a long (LLM) extraction.
                done += process_graph_queue(self.lib, stop=self._stop, max_docs=1, yield_to_uploads=True)
            except Exception:  # the thread must survive anything a document does to it
                log.exception("background ingest loop failed")
                done = []
            # Exit when idle; the next kick() starts a fresh thread. Wait briefly for a kick that raced us.
            if not done and not self._wake.wait(timeout=1.0):
                return
