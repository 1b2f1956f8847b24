"""A paper a killed writer left mid-stage is taken up again when the next writer starts (issue 36: after kill -9 of
`core serve` mid-parse the paper stayed `parsing` for good; only queued papers resumed). A live writer's claims are
left to it; the killed writer's staging folders and processes are gone, and the paper becomes ready.

Real processes: `python -m core serve` parses with MinerU and is killed with SIGKILL while its MinerU child runs;
the next writer is the API server started in this process (create_app's start-up resumes the workspace)."""
from __future__ import annotations

import os
import signal
import time

import httpx
import psutil
import pytest

from core.library import open_library
from core.pipeline.documents import add_pdf
from core.pipeline.graph.stage import recover_graph
from core.pipeline.ingest import process_queue, recover
from core.pipeline.ingest_commit import PARSE_PREFIX
from core.pipeline.worker import work_to_resume
from core.query.search import search
from core.schema.records import DocStatus, GraphStatus
from core.settings.config import Settings
from core.settings.workspace import Workspace
from tests import graph_papers, pdfs
from tests.api.helpers import LiveServer
from tests.api.test_serve_stop import _serving
from tests.held_claims import held_claim

pytestmark = pytest.mark.slow  # a server process parsing with MinerU, then this process parsing again

PAGES = 20


def _wait(predicate, what: str, seconds: float):
    deadline = time.monotonic() + seconds
    while not (found := predicate()):
        assert time.monotonic() < deadline, f"no {what} within {seconds:.0f} s"
        time.sleep(0.1)
    return found


def _mineru_child(server: psutil.Process) -> bool:
    return any("mineru_worker" in " ".join(p.cmdline()) for p in server.children(recursive=True)
               if p.is_running())


def _parse_folders(ws: Workspace, doc_id: str) -> list:
    return list(ws.staging_dir.glob(f"{PARSE_PREFIX}{doc_id[:16]}-*"))


def test_a_paper_a_killed_server_left_parsing_is_parsed_again_by_the_next_writer(tmp_path):
    ws = Workspace(tmp_path / "ws").ensure()
    settings = Settings()
    settings.compute.workers = 1  # one parse at a time on a shared machine
    ws.save_settings(settings)
    lib = open_library(ws)
    sections = [(f"{n} Survey of quarry {n}", [f"Quarry {n} holds basalt columns catalogued under the code QX-{n:03d} "
                                               "by the survey team, with their heights and the joints between them."])
                for n in range(1, PAGES + 1)]
    pdf = pdfs.make_paper_pdf(tmp_path / "quarries.pdf", sections=sections, pages=PAGES, with_figure=False)
    doc_id = add_pdf(lib, "quarries.pdf", pdf.read_bytes()).doc_id

    # Another writer: `core serve` resumes the queue at start and parses the paper with MinerU.
    server, _ = _serving(ws.root, tmp_path / "serve.log")
    process = psutil.Process(server.pid)
    try:
        _wait(lambda: _mineru_child(process), "MinerU child of the server", 120)
        # Held mid-parse (SIGSTOP) while a second writer works beside it, and let go at the kill: on a quiet machine
        # the server finished the paper first and the test raced. (A stopped child would not act on its death signal.)
        held_children = [c for c in process.children(recursive=True) if "mineru_worker" in " ".join(c.cmdline())]
        for child in held_children:
            child.suspend()
        held = lib.queue.in_progress_workers()
        assert lib.documents.get(doc_id).status == DocStatus.PARSING
        assert held[doc_id].split(":")[1] == str(server.pid) and _parse_folders(ws, doc_id)

        # A second writer beside it, given work of its own, leaves the live server's claim alone.
        with LiveServer(lib) as other, httpx.Client(base_url=other.url, timeout=60) as client:
            assert recover(lib) == [] and not work_to_resume(lib)
            note = b"# Lichen notes\n\nThe cobalt lichen grows on the north face of the basalt quarry.\n"
            added = client.post("/api/papers", params={"filename": "lichen.md"}, content=note,
                                headers={"X-PaperGraph-Request": "1"}).json()  # a write needs it without a token
            _wait(lambda: client.get(f"/api/papers/{added['paper_id']}").json()["status"] == "ready",
                  "ready upload on the second writer", 120)
            assert lib.documents.get(doc_id).status == DocStatus.PARSING
            assert lib.queue.in_progress_workers()[doc_id] == held[doc_id] and _parse_folders(ws, doc_id)

        descendants = process.children(recursive=True)
        for child in held_children:
            child.resume()
        os.kill(server.pid, signal.SIGKILL)  # mid-parse: its MinerU child is running
        server.wait(timeout=30)
        _, alive = psutil.wait_procs(descendants, timeout=30)
        assert not alive, [p.cmdline() for p in alive]  # its workers and MinerU child went with it
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert lib.documents.get(doc_id).status == DocStatus.PARSING  # what the killed writer left
    assert work_to_resume(lib)

    # The next writer starts: the paper is queued again, its staging folder removed, then parsed and indexed.
    with LiveServer(lib) as restarted, httpx.Client(base_url=restarted.url, timeout=60) as client:
        _wait(lambda: lib.queue.in_progress_workers().get(doc_id) != held[doc_id], "release of the dead claim", 15)
        paper = _wait(lambda: (p := client.get(f"/api/papers/{doc_id}").json())["status"] in ("ready", "failed")
                      and p, "ready paper", 300)
    assert paper["status"] == "ready", paper
    doc = lib.documents.get(doc_id)
    assert doc.pages == PAGES and doc.chunk_count == len(lib.chunks.by_doc(doc_id)) > 0
    assert doc_id in lib.windows.doc_ids()
    hits = search(lib, "Quarry 20 holds basalt columns catalogued under the code QX-020", top_k=3)
    assert any(h.chunk.doc_id == doc_id and "QX-020" in h.window_text for h in hits)
    assert not list(ws.staging_dir.glob(f"{PARSE_PREFIX}*")), list(ws.staging_dir.iterdir())  # no leftovers
    assert sorted(p.name for p in ws.doc_dir(doc_id).iterdir() if p.is_dir()) == ["parsed"]


_CLAIM_GRAPH = """
import sys, time
from pathlib import Path
from core.library import open_library
from core.pipeline.status import worker_id
from core.settings.workspace import Workspace
lib = open_library(Workspace(Path(sys.argv[1])))
doc = lib.queue.claim_graph_next(worker_id())
print(doc.id if doc else "", flush=True)
time.sleep(600)
"""


def test_a_graph_a_killed_process_left_extracting_is_built_by_the_next_writer(tmp_path):
    ws = graph_papers.fast_workspace(tmp_path / "ws")
    lib = open_library(ws)
    doc_id = add_pdf(lib, "bert.pdf", graph_papers.make_bert_pdf(tmp_path).read_bytes()).doc_id
    (doc,) = process_queue(lib)  # ready, its graph pending
    assert doc.status == DocStatus.READY and doc.graph_status == GraphStatus.PENDING
    with held_claim(_CLAIM_GRAPH, ws.root) as claimed:
        assert claimed == doc_id
        assert lib.documents.get(doc_id).graph_status == GraphStatus.EXTRACTING
        assert recover_graph(lib) == [] and not work_to_resume(lib)  # a live process's claim stays its own
    assert lib.documents.get(doc_id).graph_status == GraphStatus.EXTRACTING and work_to_resume(lib)
    with LiveServer(lib) as restarted, httpx.Client(base_url=restarted.url, timeout=60):
        _wait(lambda: lib.documents.get(doc_id).graph_status == GraphStatus.DONE, "graph built", 120)
    assert lib.graph.counts()[0] > 0 and doc_id in lib.graph_sources.doc_ids()
