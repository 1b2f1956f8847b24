"""The app's background workers: uploads return at once, the Library page polls the registry.

Two threads: "papergraph-ingest" is the ingest writer (core.pipeline.ingest): it hands uploads to the compute
backend Settings choose (core.pipeline.compute: worker processes on this machine, or a Ray cluster), which
parses and embeds several at once, and commits what they return; "papergraph-graph" builds the graph of ready
papers. They are separate so a graph
extraction waiting on a slow or stuck LLM never holds up a new upload: the upload is parsed, indexed and
searchable meanwhile. The graph thread shares the process's one embedding model with search; each compute
worker has its own.

The writer wakes the graph thread after every commit, so the graph of the first papers of a large upload is
built while the next ones are computed; the graph thread takes a batch once a full one waits or the ingest is
over, and refreshes communities only when no ingest runs (core.pipeline.run: GraphFeed, graph_round).

Each thread starts its turn by taking back what a dead worker held (core.pipeline.ingest.recover,
core.pipeline.graph.stage.recover_graph): a paper left parsing, indexing or extracting by a killed process (the app,
`core serve`, a CLI ingest) is queued again and its staging folders removed, while one a live process of another
writer holds is left to it. `work_to_resume` tells the app and the API server, as they start, whether to start them.
"""
from __future__ import annotations

import logging
import threading

from core.library import Library
from core.pipeline.compute import RayUnavailable, compute_backend
from core.pipeline.compute.throughput import Throughput
from core.pipeline.gc import collect_garbage
from core.pipeline.graph.stage import recover_graph
from core.pipeline.ingest import process_queue, recover
from core.pipeline.run import GraphFeed, graph_round
from core.pipeline.status import worker_alive
from core.schema.records import DocStatus, Document

log = logging.getLogger(__name__)


def _collect_garbage(lib: Library) -> None:
    try:
        collect_garbage(lib)
    except Exception:  # a failed collection leaves orphans for the next start; the app works on
        log.exception("garbage collection at start-up failed")


def work_to_resume(lib: Library) -> bool:
    """Whether the background threads have something to take up: queued papers, pending graphs, or a paper held by a
    worker that is gone (its process was killed mid-parse, mid-index or mid-extraction). A paper a live worker holds
    is that worker's: it alone starts nothing. Reads the rows in progress only (indexed), so it can run on every
    rerun of the app."""
    if lib.documents.status_counts().get(DocStatus.QUEUED):
        return True
    extracting = lib.queue.graph_workers()
    if set(lib.stages.graph_progress()) - set(extracting):  # pending graphs
        return True
    return any(not (worker and worker_alive(worker))
               for worker in (*lib.queue.in_progress_workers().values(), *extracting.values()))


class BackgroundIngestor:
    def __init__(self, lib: Library):
        self.lib = lib
        self._work = {"ingest": self._ingest, "graph": self._graph}
        self._threads: dict[str, threading.Thread | None] = dict.fromkeys(self._work)
        self._wakes = {name: threading.Event() for name in self._work}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._feed = GraphFeed()  # what the ingest thread made ready for the graph thread
        self.throughput = Throughput()  # the Library page shows it: backend, workers, pages per second
        self.backend_note = ""  # why the backend Settings chose is not the one in use
        recover(lib)
        recover_graph(lib)
        # Orphans an older version or a crash left, removed in the background: no page waits for the scan.
        threading.Thread(target=_collect_garbage, args=(lib,), name="papergraph-gc", daemon=True).start()

    def kick(self, *names: str) -> None:
        """Make sure queued documents (and pending graphs) are being processed; cheap to call on every page run.
        `names` limits it to some of the threads ("ingest", "graph")."""
        with self._lock:
            for name in names or self._work:
                self._wakes[name].set()
                thread = self._threads[name]
                if thread is None or not thread.is_alive():
                    thread = threading.Thread(target=self._run, args=(name,), name=f"papergraph-{name}",
                                              daemon=True)
                    self._threads[name] = thread
                    thread.start()

    @property
    def running(self) -> bool:
        """Either thread is at work (an upload being processed, a graph being built)."""
        return any(t is not None and t.is_alive() for t in self._threads.values())

    @property
    def busy(self) -> bool:
        """Both threads are running: a kick() could start nothing more."""
        return all(t is not None and t.is_alive() for t in self._threads.values())

    def stop(self) -> None:
        self._stop.set()
        for wake in self._wakes.values():
            wake.set()

    def _ingest(self) -> list:
        config = self.lib.settings.compute
        try:
            backend = compute_backend(config)
            self.backend_note = ""
        except RayUnavailable as exc:  # uploads must not wait on a missing extra: they run here instead
            log.warning("%s; computing on this machine instead", exc)
            self.backend_note = f"{exc}; computing on this machine instead"
            backend = compute_backend(config, "local")
        recover(self.lib)  # what a writer killed since the last turn left parsing or indexing
        self._feed.ingest_started()
        try:
            done = process_queue(self.lib, stop=self._stop, backend=backend, throughput=self.throughput,
                                 on_ready=self._ready)
        finally:
            self._feed.ingest_finished()
        # Even after a run that found nothing to do: the graph thread left the last, smaller batch of the run
        # before it for when no ingest runs (it may have given up waiting meanwhile), then communities.
        self.kick("graph")
        return done

    def _ready(self, docs: list[Document]) -> None:
        # In the writer's thread, after each commit: the graph thread decides whether a batch is due.
        self._feed.ready(docs)
        self.kick("graph")

    def _graph(self) -> list:
        # One batch of papers (one paper with an LLM extractor) at a time, without pausing for uploads: those are
        # parsed by the other thread meanwhile. First, papers a killed graph worker left extracting are pending again.
        recover_graph(self.lib)
        return graph_round(self.lib, self._feed, stop=self._stop)

    def _run(self, name: str) -> None:
        wake = self._wakes[name]
        while not self._stop.is_set():
            wake.clear()
            try:
                done = self._work[name]()
            except Exception:  # the thread must survive anything a document does to it
                log.exception("background %s loop failed", name)
                done = []
            # Exit when idle; the next kick() starts a fresh thread. Deciding under the lock closes the race
            # with a kick() that saw this thread still alive.
            if not done and not wake.wait(timeout=1.0):
                with self._lock:
                    if not wake.is_set():
                        self._threads[name] = None
                        return
