"""The local compute backend and the single writer on real PDFs (MinerU's flash parse, the embedding model, SQLite,
Chroma): two documents computed at once by two worker processes give exactly what a sequential run gives, and a
worker killed mid-task is retried, while a document that kills its worker every time ends `failed`."""
from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest

from core.cli import build_parser
from core.library import Library, open_library
from core.pipeline.compute import compute_backend
from core.pipeline.documents import add_pdf
from core.pipeline.ingest import process_document, process_queue
from core.schema.records import DocStatus
from core.settings.config import Settings
from core.settings.workspace import Workspace
from tests import pdfs

TITLES = ["Okapi lattices for sparse solvers", "Heliotrope sampling of tiny graphs"]
_WORKER = re.compile(r" — worker [^:]+:(\d+)$")


def make_papers(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return [pdfs.make_paper_pdf(folder / f"paper{i}.pdf", title=title, pages=1) for i, title in enumerate(TITLES)]


def new_library(root: Path, retries: int = 2) -> Library:
    ws = Workspace(root).ensure()
    settings = Settings()
    settings.compute.retries = retries
    ws.save_settings(settings)
    return open_library(ws)


def add_all(lib: Library, papers: list[Path]) -> list[str]:
    return [add_pdf(lib, p.name, p.read_bytes()).doc_id for p in papers]


def snapshot(lib: Library) -> dict:
    """What a run leaves, per document: status, title, pages, item counts, chunks (ids and text), window ids."""
    out = {}
    for doc in lib.documents.list():
        chunks = lib.chunks.by_doc(doc.id)
        out[doc.id] = {"status": doc.status.value, "title": doc.title, "pages": doc.pages,
                       "items": doc.item_counts, "chunk_count": doc.chunk_count,
                       "chunks": [(c.id, c.text) for c in chunks]}
    out["windows"] = sorted(lib.windows.all_ids())
    return out


def sequential_run(lib: Library) -> None:
    """One document after another, computed in this very process: the reference every backend must match."""
    while (doc := lib.queue.claim_next("sequential-test")) is not None:
        assert process_document(lib, doc).status == DocStatus.READY


@pytest.fixture(scope="module")
def papers(tmp_path_factory) -> list[Path]:
    return make_papers(tmp_path_factory.mktemp("compute-papers"))


@pytest.fixture(scope="module")
def sequential(papers, tmp_path_factory) -> dict:
    lib = new_library(tmp_path_factory.mktemp("sequential") / "ws")
    add_all(lib, papers)
    sequential_run(lib)
    return snapshot(lib)


@pytest.mark.slow
def test_two_workers_compute_two_papers_at_once_and_match_a_sequential_run(papers, sequential, tmp_path):
    lib = new_library(tmp_path / "ws")
    add_all(lib, papers)
    seen: dict[str, list[tuple[float, str]]] = {}

    def progress(doc_id: str, detail: str, fraction: float) -> None:
        worker = _WORKER.search(detail)
        if worker:
            seen.setdefault(doc_id, []).append((time.monotonic(), worker.group(1)))

    done = process_queue(lib, on_progress=progress, backend=compute_backend(lib.settings.compute, "local", 2))

    assert [d.status for d in done] == [DocStatus.READY] * len(papers), [d.message for d in done]
    assert snapshot(lib) == sequential
    workers = {pid for events in seen.values() for _, pid in events}
    assert len(workers) == 2, f"two worker processes should share the papers: {workers}"
    spans = sorted((events[0][0], events[-1][0]) for events in seen.values())
    assert spans[1][0] < spans[0][1], f"the first two papers were not computed at the same time: {spans}"


@pytest.mark.slow
def test_a_killed_worker_is_retried_and_a_paper_that_always_kills_it_fails(papers, sequential, tmp_path):
    lib = new_library(tmp_path / "ws", retries=1)
    poison, innocent = add_all(lib, papers[:2])
    killed: list[int] = []

    def kill_the_poison_worker(doc_id: str, detail: str, fraction: float) -> None:
        # Every time the poison paper starts parsing, its worker process dies (as an out-of-memory kill would).
        worker = _WORKER.search(detail)
        if doc_id == poison and worker and detail.startswith("parsing") and int(worker.group(1)) not in killed:
            killed.append(int(worker.group(1)))
            os.kill(int(worker.group(1)), signal.SIGKILL)

    done = {d.id: d for d in process_queue(lib, on_progress=kill_the_poison_worker,
                                           backend=compute_backend(lib.settings.compute, "local", 2))}

    # The innocent paper was in flight when the pool broke the first time: computed again, alone, and ready.
    assert done[innocent].status == DocStatus.READY
    assert snapshot(lib)[innocent] == sequential[innocent]
    # The poison paper: killed with the innocent one in flight (no attempt counted), then alone twice.
    assert len(killed) == 3, killed
    assert done[poison].status == DocStatus.FAILED
    assert "worker process died 2 times" in done[poison].message, done[poison].message
    assert lib.windows.doc_counts().get(poison, 0) == 0 and lib.chunks.by_doc(poison) == []
    assert not [p for p in lib.workspace.staging_dir.iterdir() if p.name.startswith("parse-")]


def test_ingest_chooses_its_backend_and_workers_on_the_command_line():
    args = build_parser().parse_args(["ingest", "papers/", "--backend", "ray", "--workers", "8"])
    assert (args.backend, args.workers) == ("ray", 8)
    args = build_parser().parse_args(["ingest", "paper.pdf"])
    assert (args.backend, args.workers) == (None, None)  # then Settings decide (compute.backend, compute.workers)
    backend = compute_backend(Settings().compute, "local", 3)
    assert (backend.name, backend.workers) == ("local", 3)
    assert compute_backend(Settings().compute, "local", 3) is backend  # one pool per size per process: warm models
    with pytest.raises(SystemExit):
        build_parser().parse_args(["ingest", "paper.pdf", "--backend", "dask"])
