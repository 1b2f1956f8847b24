"""The Library page's "Yes, delete" reads the papers again when clicked, says what happens to a busy one, and the
worker holding that paper then finds it gone and leaves nothing behind (AppTest over a real workspace)."""
from __future__ import annotations

import time
from collections import Counter

from core.library import open_library
from core.pipeline.documents import add_mineru_output, retry_document
from core.pipeline.gc import footprint
from core.pipeline.graph.stage import process_graph_queue
from core.pipeline.ingest import process_document, process_queue
from core.pipeline.status import worker_id
from core.schema.records import DocStatus
from tests.graph_papers import BERT_SECTIONS, BERT_TITLE, fast_workspace
from tests.pages.app_helpers import run_app, texts
from tests.pages.test_app_library import select_rows
from tests.pipeline.test_delete_races import mineru_output


def test_yes_delete_rechecks_a_paper_that_became_busy_and_its_worker_leaves_nothing(monkeypatch, tmp_path):
    root = tmp_path / "ws"
    lib = open_library(fast_workspace(root))
    doc_id = add_mineru_output(lib, mineru_output(tmp_path / "in", BERT_TITLE, BERT_SECTIONS)).doc_id
    process_queue(lib)
    process_graph_queue(lib)  # nothing left for the app's own worker, which then goes idle

    at = run_app(monkeypatch, root)
    select_rows(at, lib, [0])
    at.run()
    at.button(key="delete_selected").click().run()
    assert "Delete 1 document(s)" in texts(at.warning) and "being parsed" not in texts(at.caption)

    time.sleep(1.5)  # the app's worker exits when idle; only a page run starts it again
    retry_document(lib, doc_id)  # queued again after it was selected, and taken by a worker (this thread)
    claimed = lib.queue.claim_next(worker_id())
    assert claimed.id == doc_id and claimed.status == DocStatus.PARSING
    at.run()
    assert "is being parsed: its worker stops at its next step" in texts(at.caption)
    at.button(key="confirm_delete_yes").click().run()
    assert not at.exception
    assert lib.documents.get(doc_id) is None

    assert process_document(lib, claimed) is None  # the worker carries on, finds the paper gone, and purges
    assert +footprint(lib, [doc_id]) == Counter()
