"""The Library page (the app's home) through Streamlit's AppTest, over real workspaces (real mineru, Chroma,
SQLite and embedding model; see tests/conftest.py): sidebar counts, the table of papers and failed uploads,
uploads parsed in the background, retry and delete, MinerU zip import, and duplicate entities merged."""
from __future__ import annotations

import time

import pytest

from core.library import open_library
from core.pipeline.documents import add_mineru_output, add_pdf, delete_document
from core.pipeline.graph.stage import process_graph_queue
from core.pipeline.ingest import process_queue
from core.presentation import display as present
from core.schema.records import DocStatus
from core.settings.workspace import Workspace
from tests import pdfs
from tests.graph_papers import BERT_SECTIONS, BERT_TITLE, fast_workspace
from tests.pages.app_helpers import open_tab, run_app, texts
from tests.pipeline.test_delete_races import mineru_output


def select_rows(at, lib, rows: list[int]) -> None:
    """Select rows of the Library table as a click would (its key names its rows, newest first)."""
    key = f"library_table_0_{present.table_identity(present.newest_first(lib.documents.list()))}"
    at.session_state[key] = {"selection": {"rows": rows, "columns": [], "cells": []}}


@pytest.fixture
def failed_doc(ready_workspace):
    """A corrupt PDF that failed, added to the shared workspace for one test and removed afterwards."""
    lib = open_library(Workspace(ready_workspace.root))
    pdf = pdfs.make_corrupt_pdf(ready_workspace.root.parent / "truncated-upload.pdf")
    added = add_pdf(lib, pdf.name, pdf.read_bytes())
    (doc,) = process_queue(lib)
    assert doc.status == DocStatus.FAILED and doc.message
    yield doc
    delete_document(lib, added.doc_id)


def test_home_sidebar_shows_workspace_counts_and_model_status(monkeypatch, ready_workspace):
    at = run_app(monkeypatch, ready_workspace.root)
    sidebar = texts(at.sidebar.markdown) + texts(at.sidebar.code)
    assert str(ready_workspace.root) in sidebar
    assert "**1** ready" in sidebar
    assert "gt\\-all\\-minilm\\-l6\\-v2" in sidebar and "no LLM configured" in sidebar
    assert at.title[0].value == "Library"


def test_library_lists_the_ready_paper_and_the_failed_upload_with_its_message(monkeypatch, ready_workspace,
                                                                             failed_doc):
    at = run_app(monkeypatch, ready_workspace.root)
    table = at.dataframe[0].value
    ready_row = table[table["title"] == ready_workspace.title].iloc[0]
    assert "ready" in ready_row["status"] and ready_row["pages"] == 2 and ready_row["chunks"] >= 3
    assert "table 1" in ready_row["items"] and "image 1" in ready_row["items"]
    assert ready_row["backend"].startswith("mineru") and "parse" in ready_row["timings"]
    # The graph stage ran after the paper was ready, without an LLM, and the page says so.
    assert ready_row["graph"] == "done" and ready_row["entities"] > 5 and ready_row["relations"] > 3
    assert ready_row["extractor"] == "LLM-free (spaCy)" and "graph" in ready_row["timings"]
    assert "without an LLM" in texts(at.caption) and "Entity graph of the collection" in texts(at.caption)
    failed_row = table[table["file"] == "truncated-upload.pdf"].iloc[0]
    assert "failed" in failed_row["status"] and failed_row["message"] == failed_doc.message
    errors = texts(at.error)
    assert "truncated\\-upload" in errors and "failed:" in errors
    assert "**1** failed" in texts(at.sidebar.markdown)


def test_library_upload_of_a_known_paper_says_it_is_already_in_the_library(monkeypatch, ready_workspace):
    at = run_app(monkeypatch, ready_workspace.root)
    at.file_uploader[0].set_value(("again.pdf", ready_workspace.pdf.read_bytes(), "application/pdf"))
    at.run()
    assert not at.exception
    info = texts(at.info)
    assert "already in the library" in info and "status ready" in info
    assert len(open_library(Workspace(ready_workspace.root)).documents.list()) == 1
    assert at.file_uploader[0].value in (None, [])  # the uploader was emptied after the batch


def _wait_until_done(at, title: str) -> dict:
    """Full reruns (as the page's live progress makes them) until the uploaded paper is ready and graphed, or
    failed; returns its row of the table and whether a progress bar was seen on the way."""
    seen_progress = bool(at.get("progress"))
    deadline = time.monotonic() + 120
    row = {}
    while time.monotonic() < deadline:
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        seen_progress = seen_progress or bool(at.get("progress"))
        table = at.dataframe[0].value
        row = table[table["file"] == title].iloc[0].to_dict()
        if "failed" in row["status"] or ("ready" in row["status"] and row["graph"] in ("done", "failed")):
            break
        time.sleep(1)
    return {**row, "seen_progress": seen_progress}


@pytest.mark.slow
def test_library_upload_is_parsed_in_the_background_with_live_progress(monkeypatch, tmp_path):
    pdf = pdfs.make_text_pdf(tmp_path / "notes.pdf", 1, "Basalt columns cool into hexagons because of "
                                                        "contraction cracks spreading at equal angles.")
    root = tmp_path / "ws"
    at = run_app(monkeypatch, root)
    assert "The library is empty" in texts(at.info)
    at.file_uploader[0].set_value(("notes.pdf", pdf.read_bytes(), "application/pdf"))
    at.run()
    assert "notes.pdf**: added and queued" in texts(at.success).replace("\\", "")
    row = _wait_until_done(at, "notes.pdf")
    assert "ready" in row["status"], row["message"]
    assert row["graph"] == "done", row["graph message"]
    assert row["seen_progress"], "no progress bar was shown while the document was in progress"
    assert not at.get("progress")  # polling stopped once nothing is in progress


@pytest.mark.slow
def test_a_new_upload_shows_on_top_and_its_queued_notice_goes_once_it_is_ready(monkeypatch, tmp_path):
    first = pdfs.make_text_pdf(tmp_path / "older.pdf", 1, "Basalt columns cool into hexagons.")
    second = pdfs.make_text_pdf(tmp_path / "newer.pdf", 1, "Glaciers carve U-shaped valleys over millennia.")
    root = tmp_path / "ws"
    at = run_app(monkeypatch, root)
    for pdf in (first, second):
        at.file_uploader[0].set_value((pdf.name, pdf.read_bytes(), "application/pdf"))
        at.run()
        # The newest upload is the table's first row, where it is seen without scrolling ...
        assert at.dataframe[0].value.iloc[0]["file"] == pdf.name
        if pdf is first:  # (the second, with the model loaded, may be ready before the page's next run)
            assert f"{pdf.stem}.pdf**: added and queued" in texts(at.success).replace("\\", "")
        row = _wait_until_done(at, pdf.name)
        assert "ready" in row["status"], row["message"]
        # ... and its "added and queued" notice is gone once it is ready, without a Dismiss click.
        assert "added and queued" not in texts(at.success)
        assert "Dismiss" not in [b.label for b in at.button]
    assert list(at.dataframe[0].value["file"]) == ["newer.pdf", "older.pdf"]


def test_a_selection_does_not_move_to_another_paper_when_a_new_one_lands_on_top(monkeypatch, tmp_path):
    root = tmp_path / "ws"
    lib = open_library(fast_workspace(root))
    doc_id = add_mineru_output(lib, mineru_output(tmp_path / "in", BERT_TITLE, BERT_SECTIONS)).doc_id
    process_queue(lib)
    process_graph_queue(lib)  # nothing left for the app's own worker
    at = run_app(monkeypatch, root)
    select_rows(at, lib, [0])
    at.run()
    assert at.button(key="delete_selected").label == "Delete 1 selected"
    # Another session (or the CLI) adds a paper: it lands on row 0, where the selection pointed. The selection is
    # dropped rather than moved onto it.
    other = add_mineru_output(lib, mineru_output(tmp_path / "in2", "Another Paper", BERT_SECTIONS[:1])).doc_id
    process_queue(lib)
    process_graph_queue(lib)
    at.run(timeout=120)
    assert [d.id for d in present.newest_first(lib.documents.list())][0] == other
    assert not [b for b in at.button if b.key == "delete_selected"]
    assert lib.documents.get(doc_id) is not None


def test_library_retry_and_delete_selected_documents(monkeypatch, tmp_path):
    root = tmp_path / "ws"
    lib = open_library(Workspace(root))
    pdf = pdfs.make_fake_pdf(tmp_path / "renamed-docx.pdf", kind="zip")
    added = add_pdf(lib, pdf.name, pdf.read_bytes())
    (doc,) = process_queue(lib)
    assert doc.status == DocStatus.FAILED

    at = run_app(monkeypatch, root)
    select_rows(at, lib, [0])
    at.run()
    assert at.button(key="retry_selected").label == "Retry 1 failed"
    at.button(key="retry_selected").click().run()
    assert not at.exception
    deadline = time.monotonic() + 60
    while True:  # queued again, parsed again in the background, failed again with its specific message
        again = lib.documents.get(added.doc_id)
        if again.status == DocStatus.FAILED and again.updated_at > doc.updated_at:
            break
        assert time.monotonic() < deadline, again
        time.sleep(0.5)
    assert again.message == doc.message and "not a PDF" in again.message

    at.run()
    at.button(key="delete_selected").click().run()
    assert "Delete 1 document(s)" in texts(at.warning)
    assert lib.documents.get(added.doc_id) is not None  # nothing is deleted before the confirmation
    at.button(key="confirm_delete_yes").click().run()
    assert not at.exception
    assert lib.documents.get(added.doc_id) is None and not lib.workspace.doc_dir(added.doc_id).exists()
    assert "The library is empty" in texts(at.info)


def test_library_imports_a_mineru_zip_whose_pages_then_say_images_are_unavailable(monkeypatch, tmp_path,
                                                                                 ready_workspace):
    import zipfile

    parsed = Workspace(ready_workspace.root).parsed_dir(ready_workspace.doc_id)
    archive = tmp_path / "heliotrope_mineru.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in parsed.rglob("*"):
            if path.is_file() and path.name != "parse.json":
                zf.write(path, f"heliotrope/auto/{path.relative_to(parsed)}")
    root = tmp_path / "ws"
    at = run_app(monkeypatch, root)
    zip_uploader = [u for u in at.file_uploader if u.label == "MinerU output zip"][0]
    zip_uploader.set_value((archive.name, archive.read_bytes(), "application/zip"))
    at.run()
    assert "heliotrope_mineru.zip**: added and queued" in texts(at.success).replace("\\", "")
    lib = open_library(Workspace(root))
    deadline = time.monotonic() + 120
    while (doc := lib.documents.list()[0]).status.in_progress:
        assert time.monotonic() < deadline
        time.sleep(0.5)
    assert doc.status == DocStatus.READY, doc.message

    at.switch_page("pages/document.py")
    at.query_params["doc"] = doc.id
    at.run()
    assert not at.exception
    assert "purple walrus" in texts(at.tabs[0].markdown)
    assert "Page images are unavailable" in texts(open_tab(at, "Pages").info)


def test_library_suggests_duplicate_entities_and_merges_one(monkeypatch, tmp_path):
    from core.pipeline.graph.stage import process_graph_queue
    from tests.graph_papers import fast_workspace, make_bert_pdf

    ws = fast_workspace(tmp_path / "ws")
    settings = ws.settings()
    # The one-paper test graph is clean (13 entities): its closest pair embeds at ~0.67, far below the default.
    settings.graph.duplicate_similarity = 0.5
    ws.save_settings(settings)
    lib = open_library(ws)
    pdf = make_bert_pdf(tmp_path)
    add_pdf(lib, pdf.name, pdf.read_bytes())
    process_queue(lib)
    process_graph_queue(lib)
    before = lib.graph.counts()[0]
    at = run_app(monkeypatch, ws.root)
    at.button(key="find_duplicates").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "similarity" in texts(at.markdown)
    at.button(key="merge_duplicate_0").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Merged" in texts(at.success)
    assert open_library(Workspace(ws.root)).graph.counts()[0] == before - 1


def test_a_document_mineru_was_stopped_on_says_why_and_an_editor_retries_it_with_more_memory(monkeypatch, tmp_path):
    from core.pipeline.documents import parse_memory_override
    from core.settings.config import Settings

    ws = Workspace(tmp_path / "ws").ensure()
    settings = Settings()
    settings.parsing.memory_gb, settings.parsing.dense_page_paths, settings.compute.workers = 1.0, 0, 1
    ws.save_settings(settings)
    lib = open_library(ws)
    added = add_pdf(lib, "scatter.pdf", pdfs.make_dense_vector_pdf(tmp_path / "scatter.pdf").read_bytes())
    (doc,) = process_queue(lib)
    reason = "MinerU stopped at 1 GB on page 1 of 1; parsed with PyMuPDF, tables and formulas are approximate"
    assert doc.status == DocStatus.READY and reason in doc.message
    process_graph_queue(lib)  # nothing left for the app's own worker: its graph run would change the table's rows
    # (and with them the table's key), dropping the selection between the two runs below (CI clone 11)

    at = run_app(monkeypatch, ws.root)
    select_rows(at, lib, [0])
    at.run()
    assert "MinerU stopped at 1 GB on page 1 of 1" in texts(at.caption)
    assert at.number_input(key="retry_memory_gb").value == 2.0  # twice the child's share
    assert at.button(key="retry_memory").label == "Retry with MinerU and 2 GB"
    at.button(key="retry_memory").click().run()
    assert not at.exception
    assert parse_memory_override(lib, added.doc_id) == 2.0
    assert lib.documents.get(added.doc_id).status.in_progress or lib.documents.get(added.doc_id).updated_at > \
        doc.updated_at
    delete_document(lib, added.doc_id)  # its worker stops at its next step
