"""The app, opened on a workspace where a killed process left a paper `parsing`, parses it again (issue 36: only
queued papers were resumed, so such a paper stayed `parsing` until someone opened the Library page twice)."""
from __future__ import annotations

import time

import pytest

from core.library import open_library
from core.pipeline.documents import add_pdf
from core.schema.records import DocStatus
from tests import graph_papers
from tests.held_claims import held_claim
from tests.pages.app_helpers import run_app

_CLAIM = """
import sys, time
from pathlib import Path
from core.library import open_library
from core.pipeline.status import worker_id
from core.settings.workspace import Workspace
lib = open_library(Workspace(Path(sys.argv[1])))
doc = lib.queue.claim_next(worker_id())
print(doc.id if doc else "", flush=True)
time.sleep(600)
"""


@pytest.mark.slow  # the app's ingest thread spawns a worker process that loads the embedding model
def test_the_app_parses_again_a_paper_a_killed_process_left_parsing(monkeypatch, tmp_path):
    ws = graph_papers.fast_workspace(tmp_path / "ws")
    lib = open_library(ws)
    doc_id = add_pdf(lib, "bert.pdf", graph_papers.make_bert_pdf(tmp_path).read_bytes()).doc_id
    with held_claim(_CLAIM, ws.root) as claimed:  # a real writer's claim, its process killed holding it
        assert claimed == doc_id
    assert lib.documents.get(doc_id).status == DocStatus.PARSING
    run_app(monkeypatch, ws.root)  # one run of the app, as a browser opening it; no page is clicked
    deadline = time.monotonic() + 120
    while (doc := lib.documents.get(doc_id)).status != DocStatus.READY:
        assert doc.status != DocStatus.FAILED and time.monotonic() < deadline, (doc.status, doc.message)
        time.sleep(0.2)
    assert doc.chunk_count > 0
