"""First contact: on an empty workspace the landing page (the Library), Ask, Compare and Search say what to do
first — add papers, then ask — with a link to the page that does it; once papers are on their way or failed the
hint says so; once one is ready it is gone."""
from __future__ import annotations

import pytest

from core.presentation.first_steps import first_steps
from core.schema.records import DocStatus
from tests.pages.app_helpers import run_app, texts


def _hint(at) -> tuple[str, list]:
    return texts(at.markdown), [link for link in at.get("page_link")]


def test_the_landing_page_of_an_empty_workspace_says_add_papers_then_ask(monkeypatch, tmp_path):
    at = run_app(monkeypatch, tmp_path / "ws")  # the app opens on the Library
    shown, links = _hint(at)
    assert "Start here: add papers, then ask." in shown and "into the box below" in shown
    assert any(link.proto.label == "Ask" and link.proto.page.endswith("ask") for link in links), \
        [(link.proto.label, link.proto.page) for link in links]


@pytest.mark.parametrize("page", ["ask", "compare", "search"])
def test_ask_compare_and_search_on_an_empty_workspace_point_to_the_library(monkeypatch, tmp_path, page):
    at = run_app(monkeypatch, tmp_path / "ws", f"pages/{page}.py")
    shown, links = _hint(at)
    assert "Start here: add papers, then ask." in shown and "on the Library page" in shown
    assert [link.proto.label for link in links if link.proto.label == "Go to the Library"], links
    assert not at.text_input  # the page stops there: no question box to type into with nothing to ask


def test_the_hint_follows_the_workspace():
    assert first_steps({}, "ask").text.startswith("**Start here: add papers, then ask.**")
    busy = first_steps({DocStatus.PARSING: 1, DocStatus.QUEUED: 2}, "search")
    assert "3 paper(s) are being parsed and indexed" in busy.text and busy.link == "library"
    assert "No paper could be read" in first_steps({DocStatus.FAILED: 2}, "ask").text
    assert first_steps({DocStatus.READY: 1, DocStatus.FAILED: 1}, "ask") is None
    assert first_steps({DocStatus.QUEUED: 1}, "library") is None  # the Library shows its progress itself
    assert "An editor adds them" in first_steps({}, "ask", editor=False).text


def test_a_workspace_with_a_ready_paper_shows_no_hint(monkeypatch, ready_workspace):
    at = run_app(monkeypatch, ready_workspace.root, "pages/ask.py")
    assert "Start here" not in texts(at.markdown) and at.text_input(key="ask_question")
