"""The Search page through Streamlit's AppTest, over the shared ready workspace (see tests/conftest.py): a
distinctive sentence found with its paper, page and region, and the filter by item type."""
from __future__ import annotations

from tests.pages.app_helpers import run_app, texts


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
