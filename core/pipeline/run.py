"""Ingest and graph stage together: the graph stage follows the ingest writer, batch by batch, instead of waiting
for the whole queue to be indexed.

The ingest writer (core.pipeline.ingest) keeps the compute workers busy and uses little CPU itself; the LLM-free
graph stage is one thread of Python. Run one after the other, a core idles during each; run together, the graph
of the first papers is built while the workers embed the next ones. The writer tells a `GraphFeed` what each
commit made ready; the graph stage takes a batch when a full one waits (BATCH_DOCS papers or BATCH_CHUNKS chunks;
one paper with an LLM extractor, which reads one paper at a time anyway) or the ingest is over — smaller
batches cost more per paper (each batch merges the hub entities again and makes its own embedding and spaCy
calls). Communities are refreshed once, after the ingest: a refresh per batch would redo the same neighbourhoods.

`ingest_and_graph` is the whole run for the CLI (`core ingest`) and bench/ingest.py; the app's two threads share
`GraphFeed` and `graph_round` (core.pipeline.worker). Crash safety is each stage's own: a paper's graph is
committed whole, a killed run leaves papers for `recover` and `recover_graph`.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from core.library import Library
from core.pipeline.compute import ComputeBackend
from core.pipeline.compute.throughput import Throughput
from core.pipeline.graph.batch import BATCH_CHUNKS, BATCH_DOCS, reads_many_papers
from core.pipeline.graph.build import GraphError, current_extractor
from core.pipeline.graph.stage import GraphStageProgress, process_graph_queue, recover_graph
from core.pipeline.ingest import process_queue
from core.pipeline.status import ProgressFn
from core.schema.records import Document

log = logging.getLogger(__name__)

_POLL_S = 0.2  # how often a waiting graph stage looks at the stop events (an Event cannot wake a Condition)


class GraphFeed:
    """What the ingest writer made ready that the graph stage has not taken yet, and whether an ingest runs.

    Counts only steer when the graph stage claims; the queue itself is the registry's (claim_graph_next). An entry
    can go stale (its paper deleted before its graph was built): a round that finds nothing to claim clears them.
    """

    def __init__(self):
        self._cond = threading.Condition()
        self._waiting: dict[str, int] = {}  # paper id → chunks
        self._ingests = 0

    # -------------------------------------------------------------------------------------- the writer's side

    def ingest_started(self) -> None:
        with self._cond:
            self._ingests += 1

    def ingest_finished(self) -> None:
        with self._cond:
            self._ingests -= 1
            self._cond.notify_all()

    def ready(self, docs: list[Document]) -> None:
        """process_queue's on_ready: a commit made these papers searchable, their graph is pending."""
        with self._cond:
            self._waiting.update((d.id, d.chunk_count) for d in docs)
            self._cond.notify_all()

    # ----------------------------------------------------------------------------------- the graph stage's side

    @property
    def ingesting(self) -> bool:
        with self._cond:
            return self._ingests > 0

    def full(self, batched: bool = True) -> bool:
        """Time for a round: a full batch waits (any paper, unless `batched`), or no ingest runs."""
        with self._cond:
            return self._full(batched)

    def _full(self, batched: bool) -> bool:
        if self._ingests <= 0:
            return True
        if not batched:
            return bool(self._waiting)
        return len(self._waiting) >= BATCH_DOCS or sum(self._waiting.values()) >= BATCH_CHUNKS

    def wait(self, stopped: Callable[[], bool], batched: bool = True) -> None:
        """Until a round is due or `stopped()`."""
        with self._cond:
            while not stopped() and not self._full(batched):
                self._cond.wait(_POLL_S)

    def taken(self, done: list[Document]) -> None:
        """A round built these papers' graphs (none: nothing was pending, so every entry is stale)."""
        with self._cond:
            if not done:
                self._waiting.clear()
            for d in done:
                self._waiting.pop(d.id, None)


def batched_extractor(lib: Library) -> bool:
    """The configured extractor reads many papers per call (LLM-free): worth waiting for a full batch."""
    try:
        return reads_many_papers(current_extractor(lib))
    except GraphError:
        return False  # each paper fails with the reason, one at a time: nothing to wait for


def graph_round(lib: Library, feed: GraphFeed, on_progress: GraphStageProgress | None = None,
                stop: threading.Event | None = None) -> list[Document]:
    """One turn of the graph stage beside an ingest: a batch when one is due (nothing otherwise); once no ingest
    runs, the pending papers and, when the queue is empty, communities."""
    if not feed.full(batched_extractor(lib)):
        return []
    ingesting = feed.ingesting
    done = process_graph_queue(lib, on_progress, stop, max_docs=BATCH_DOCS, communities=not ingesting)
    feed.taken(done)
    return done


@dataclass
class RunResult:
    ingested: list[Document] = field(default_factory=list)  # process_queue's result
    graphed: list[Document] = field(default_factory=list)  # process_graph_queue's, every round's


class _AnyOf:
    """Set when any of the events is (the caller's stop, or this run's own on an error or Ctrl-C)."""

    def __init__(self, *events: threading.Event | None):
        self.events = [e for e in events if e is not None]

    def is_set(self) -> bool:
        return any(e.is_set() for e in self.events)


def ingest_and_graph(lib: Library, *, graph: bool = True, on_progress: ProgressFn | None = None,
                     stop: threading.Event | None = None, on_deleted: Callable[[Document], None] | None = None,
                     on_ready: Callable[[list[Document]], None] | None = None,
                     backend: ComputeBackend | None = None, throughput: Throughput | None = None) -> RunResult:
    """Process the ingest queue and, with `graph`, build the graph of every paper it makes ready (and of any paper
    already pending) meanwhile; returns when both queues are empty, communities refreshed once at the end.

    The writer runs in the calling thread, so Ctrl-C interrupts it as it does process_queue; the graph thread is
    then stopped (its batch goes back to pending, what it extracted kept) and joined before the exception goes on.
    `on_ready` is process_queue's. An error in the graph thread is raised once the ingest is done."""
    if not graph:
        return RunResult(process_queue(lib, on_progress, stop, on_deleted, backend, throughput, on_ready))
    recover_graph(lib)  # papers a killed graph worker held go back to pending first
    feed = GraphFeed()
    halt = threading.Event()
    graph_stop = _AnyOf(stop, halt)
    result = RunResult()
    failure: list[BaseException] = []

    def follow() -> None:
        try:
            batched = batched_extractor(lib)
            while not graph_stop.is_set():
                feed.wait(graph_stop.is_set, batched)
                if graph_stop.is_set():
                    return
                if not feed.ingesting:
                    # The rest in one call: its last batch empties the queue, then communities, once.
                    result.graphed += process_graph_queue(lib, on_progress, graph_stop)
                    return
                done = process_graph_queue(lib, on_progress, graph_stop, max_docs=BATCH_DOCS, communities=False)
                feed.taken(done)
                result.graphed += done
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread, raised there
            failure.append(exc)

    def ready(docs: list[Document]) -> None:
        feed.ready(docs)
        if on_ready is not None:
            on_ready(docs)

    feed.ingest_started()
    follower = threading.Thread(target=follow, name="papergraph-graph", daemon=True)
    follower.start()
    try:
        result.ingested = process_queue(lib, on_progress, stop, on_deleted, backend, throughput, ready)
    except BaseException:
        halt.set()
        raise
    finally:
        feed.ingest_finished()
        follower.join()
    if failure:
        raise failure[0]
    return result
