"""Attack 5: a process killed mid-ingest (SIGKILL, nothing runs on its way out) leaves no MinerU child parsing on,
and the next start removes its staging folder at once and queues the paper again."""
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from core.library import open_library
from core.pipeline.ingest import recover
from core.schema.records import DocStatus
from core.settings.config import Settings
from core.settings.workspace import Workspace
from tests import pdfs
from tests.paths import REPO


def _mineru_child(parent: psutil.Process, deadline: float) -> psutil.Process:
    while time.monotonic() < deadline:
        for child in parent.children(recursive=True):
            try:
                if any("mineru_worker" in part for part in child.cmdline()):
                    return child
            except psutil.NoSuchProcess:
                continue
        time.sleep(0.1)
    raise AssertionError("the ingest never started its mineru child")


@pytest.mark.slow
def test_mineru_child_dies_with_a_killed_ingest_and_its_staging_goes_at_next_start(tmp_path):
    ws = Workspace(tmp_path / "ws").ensure()
    settings = Settings()
    settings.parsing.backend = "mineru"
    ws.save_settings(settings)
    # 80 pages: MinerU needs half a minute, far longer than the few seconds the child may outlive its parent
    pdf = pdfs.make_paper_pdf(tmp_path / "paper.pdf", sections=[pdfs.appendix_section(n) for n in range(80)],
                              pages=80)
    env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(ws.root))
    ingest = subprocess.Popen([sys.executable, "-m", "core", "ingest", "--no-graph", "-q", str(pdf)], cwd=REPO,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        child = _mineru_child(psutil.Process(ingest.pid), deadline)
        # Kill it mid-parse: MinerU running and the parse's staging folder there (what a killed run leaves).
        while not [p for p in ws.staging_dir.iterdir() if p.name.startswith("parse-")]:
            assert time.monotonic() < deadline and child.is_running(), "the parse never got under way"
            time.sleep(0.2)
        time.sleep(2.0)
        assert child.is_running(), "MinerU ended before the kill: the paper is too short for this test"
        os.kill(ingest.pid, signal.SIGKILL)
        ingest.wait(timeout=30)
        gone, alive = psutil.wait_procs([child], timeout=3)
        assert not alive, "mineru kept parsing after its parent was killed"
    finally:
        if ingest.poll() is None:
            ingest.kill()
            ingest.wait()
    lib = open_library(ws)
    (doc,) = lib.documents.list()

    assert recover(lib) == [doc.id]  # the next start, seconds later (well within ORPHAN_AGE_S)

    assert not [p for p in ws.staging_dir.iterdir() if p.name.startswith("parse-")]
    assert lib.documents.get(doc.id).status == DocStatus.QUEUED
