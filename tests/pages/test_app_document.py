"""The Document page through Streamlit's AppTest, over real workspaces (see tests/conftest.py): its tabs
(Markdown, Items, Gallery, Pages), links from search hits, hostile paper content kept inert, an unreadable
content list, and pages that load without importing the embedding model."""
from __future__ import annotations

import json

import pytest

from core.library import open_library
from core.pipeline.ingest import process_queue
from core.schema.records import DocStatus
from core.settings.workspace import Workspace
from tests.pages.app_helpers import HOSTILE_BODY, HOSTILE_TITLE, _unescaped_markup, open_tab, run_app, texts
from tests.paths import REPO


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
    lib.queue.claim_next("test")
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
