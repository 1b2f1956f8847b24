"""The graph stage following the ingest (core.pipeline.run): the graph of the first papers is built while the
next ones are computed, the result is the sequential run's, communities are refreshed once at the end; the CLI
and the app's worker take that path. Real SQLite, Chroma, the embedding model, spaCy and the local worker pool."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import core.pipeline.graph.stage as stage
import core.pipeline.ingest_writer as ingest_writer
import core.pipeline.run as run
from core.library import open_library
from core.pipeline.documents import add_document
from core.pipeline.graph.stage import process_graph_queue
from core.pipeline.ingest import process_queue
from core.pipeline.run import ingest_and_graph
from core.pipeline.worker import BackgroundIngestor
from core.schema.records import DocStatus, GraphStatus
from core.settings.workspace import Workspace
from tests.graph_papers import fast_workspace
from tests.paths import REPO
from tests.pipeline.graph_build_helpers import SHARED_ENTITY_DOCS, snapshot
from tests.pipeline.test_ingest import cli


def _queued(root):
    lib = open_library(fast_workspace(root))
    for title, text in SHARED_ENTITY_DOCS:
        add_document(lib, f"{title}.txt", f"{title}\n\n{text}\n".encode())
    return lib


def _graph(lib) -> dict:
    out = snapshot(lib)
    for name, store in (("entity", lib.entity_vectors), ("relation", lib.relation_vectors)):
        out[f"{name}_texts"] = store.get_documents(sorted(store.all_ids()))
    out["phrases"] = {chunk: sorted(p) for chunk, p in lib.graph_sources.chunk_phrases().items()}
    return out


def _small_batches(monkeypatch) -> None:
    """Batches of two papers in both stages, so six papers make several commits and several graph batches."""
    monkeypatch.setattr(ingest_writer, "SHORT_TEXTS_PER_TASK", 2)
    monkeypatch.setattr(run, "BATCH_DOCS", 2)


def _count_refreshes(monkeypatch) -> list:
    """Every community refresh the graph stage runs (the real one), with what it did (None: nothing changed)."""
    calls = []
    real = stage.refresh_communities

    def refresh(lib, *args, **kwargs):
        calls.append(real(lib, *args, **kwargs))
        return calls[-1]

    monkeypatch.setattr(stage, "refresh_communities", refresh)
    return calls


def _wait(condition, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
def test_the_graph_follows_the_ingest_and_ends_as_the_sequential_run(tmp_path, monkeypatch):
    sequential = _queued(tmp_path / "sequential")
    process_queue(sequential)
    process_graph_queue(sequential)

    _small_batches(monkeypatch)
    refreshes = _count_refreshes(monkeypatch)
    lib = _queued(tmp_path / "pipelined")
    commits, overlapped = [], []

    def ready(docs):
        # The writer waits here, after its first commit, for those papers' graphs: they are built only if the
        # graph stage runs beside the ingest (a sequential run would wait in vain).
        commits.append(len(refreshes))  # none so far: communities wait for the end of the ingest
        if len(commits) == 1:
            overlapped.append(_wait(lambda: all(lib.documents.get(d.id).graph_status == GraphStatus.DONE
                                                for d in docs), 120))

    result = ingest_and_graph(lib, on_ready=ready)
    assert overlapped == [True]
    assert set(commits) == {0}  # no refresh while the ingest ran
    assert {d.id: d.status for d in result.ingested} == {d.id: d.status for d in sequential.documents.list()}
    assert {d.status for d in result.ingested} == {DocStatus.READY}
    assert sorted(d.id for d in result.graphed) == sorted(d.id for d in result.ingested)
    assert {d.graph_status for d in lib.documents.list()} == {GraphStatus.DONE}
    assert min(d.timings["graph_batch_docs"] for d in result.graphed) <= 2  # the first batches were small
    expected, got = _graph(sequential), _graph(lib)
    assert expected["nodes"] and expected["edges"] and expected["phrases"]
    assert got == expected
    assert len(refreshes) == 1 and refreshes[0] is not None  # once, at the end, and it did the work
    assert lib.graph_sources.meta("communities_version") == lib.graph_sources.meta("version")


@pytest.mark.slow
def test_a_stop_ends_both_stages_and_the_next_run_finishes_the_graph(tmp_path, monkeypatch):
    _small_batches(monkeypatch)
    lib = _queued(tmp_path / "ws")
    stop = threading.Event()
    first = ingest_and_graph(lib, stop=stop, on_ready=lambda docs: stop.set())
    # Stopped at the first commit: the tasks under way were finished and committed, nothing new claimed; the
    # graph stage started at most the batch that commit filled, and left the rest pending.
    assert first.ingested and {d.status for d in first.ingested} == {DocStatus.READY}
    assert len([d for d in first.graphed if d.graph_status == GraphStatus.DONE]) <= 2
    assert not lib.queue.graph_workers()  # nothing left extracting
    ingest_and_graph(lib)
    assert {d.status for d in lib.documents.list()} == {DocStatus.READY}
    assert {d.graph_status for d in lib.documents.list()} == {GraphStatus.DONE}


@pytest.mark.slow
def test_the_app_worker_builds_graphs_while_it_ingests_and_refreshes_communities_once(tmp_path, monkeypatch):
    _small_batches(monkeypatch)
    refreshes = _count_refreshes(monkeypatch)
    lib = _queued(tmp_path / "ws")
    worker = BackgroundIngestor(lib)
    told, overlapped = worker._ready, []

    def ready(docs):
        told(docs)  # the app's hook: tells the graph thread
        if not overlapped:  # the writer holds on after its first commit: the graph thread must build those
            overlapped.append(_wait(lambda: all(lib.documents.get(d.id).graph_status == GraphStatus.DONE
                                                for d in docs), 120))

    monkeypatch.setattr(worker, "_ready", ready)
    try:
        worker.kick("ingest")  # the graph thread is started by the writer's commits, not by this kick
        assert _wait(lambda: {d.graph_status for d in lib.documents.list()} == {GraphStatus.DONE}, 300)
        assert overlapped == [True]
        assert _wait(lambda: any(r is not None for r in refreshes), 30)
    finally:
        worker.stop()
    assert len([r for r in refreshes if r is not None]) == 1  # the later calls found nothing changed
    assert {d.status for d in lib.documents.list()} == {DocStatus.READY}


@pytest.mark.slow
def test_cli_ingest_builds_the_graph_beside_the_ingest_unless_told_not_to(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for title, text in SHARED_ENTITY_DOCS:
        (src / f"{title}.txt").write_text(f"{title}\n\n{text}\n", encoding="utf-8")
    out = cli(tmp_path / "ws", "ingest", str(src))
    assert out.returncode == 0, out.stdout + out.stderr
    lib = open_library(Workspace(tmp_path / "ws"))
    docs = lib.documents.list()
    assert len(docs) == len(SHARED_ENTITY_DOCS) and {d.status for d in docs} == {DocStatus.READY}
    assert {d.graph_status for d in docs} == {GraphStatus.DONE}
    assert out.stdout.count("graph done ") == len(SHARED_ENTITY_DOCS), out.stdout
    assert all(f"ready     {d.id[:12]}" in out.stdout for d in docs), out.stdout
    assert lib.graph.counts()[0] > 0 and lib.graph_sources.meta("communities_version")  # refreshed

    (src / "more.txt").write_text("XLNet\n\nXLNet from Google and CMU permutes BERT's factorisation order.\n",
                                  encoding="utf-8")
    out = cli(tmp_path / "ws", "ingest", "--no-graph", str(src / "more.txt"))
    assert out.returncode == 0 and "graph " not in out.stdout, out.stdout + out.stderr
    more = next(d for d in open_library(Workspace(tmp_path / "ws")).documents.list() if d.filename == "more.txt")
    assert more.status == DocStatus.READY and more.graph_status == GraphStatus.PENDING


@pytest.mark.slow
def test_ctrl_c_stops_the_cli_ingest_and_its_graph_stage_and_the_next_run_finishes(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for n in range(400):  # enough that the first graph batches are built while the ingest goes on
        (src / f"note{n:03}.txt").write_text(f"Survey {n}\n\nThe walrus colony {n} on Svalbard was counted by the "
                                             f"Norwegian Polar Institute in {1950 + n % 70}.\n", encoding="utf-8")
    root = tmp_path / "ws"
    env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(root))
    proc = subprocess.Popen([sys.executable, "-m", "core", "ingest", "-q", str(src)], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    lib = None

    def both_running() -> bool:
        nonlocal lib
        if not (root / "papergraph.sqlite").exists():
            return False
        lib = lib or open_library(Workspace(root))
        docs = lib.documents.list()
        return any(d.graph_status in (GraphStatus.EXTRACTING, GraphStatus.DONE) for d in docs) and any(
            d.status in (DocStatus.QUEUED, DocStatus.PARSING, DocStatus.INDEXING) for d in docs)

    try:
        assert _wait(both_running, 300), "the graph stage never ran beside the ingest"
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal sends: the CLI and its workers
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    out = cli(root, "ingest", str(src))  # the same command again: the rest of the queue and of the graph
    assert out.returncode == 0, out.stdout + out.stderr
    docs = open_library(Workspace(root)).documents.list()
    assert len(docs) == 400 and {d.status for d in docs} == {DocStatus.READY}
    assert {d.graph_status for d in docs} == {GraphStatus.DONE}
