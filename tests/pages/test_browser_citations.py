"""A citation opens in place, in a real browser: `streamlit run app.py` over a workspace with one ready paper
(builtin parser, LLM-free graph), in Debian's Chromium through Playwright. On the Ask page, clicking the answer's
[1] shows the cited page with the passage highlighted in a dialog: no new tab (which would be a new session),
the page around it one click away, and the answer still there when the dialog closes. Compare's citations open
the same way.

Skipped when Chromium is missing. Screenshots are saved in the test's tmp dir (the dialog always, the whole page
when anything fails).
"""
from __future__ import annotations

import pytest

from tests import pdfs
from tests.graph_papers import fast_workspace
from tests.pages.test_browser import CHROMIUM, browser_page, check_citation_opens_in_place, serve_app, submit
from tests.presentation.explorer_helpers import ingest

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)")]

QUESTION = "What does the purple walrus hypothesis predict?"
AGAIN = "Which lattice solvers are compared?"


def check_asking_again_reruns_the_form_and_answer_alone(page) -> None:
    """The form and the answer are a fragment: a second question sends the new answer and not the app around
    it (the sidebar's model line is sent by every full run), and the page still holds one form."""
    from playwright.sync_api import expect

    frames: list[bytes] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(
        payload if isinstance(payload, bytes) else payload.encode())))
    page.reload()  # the listener sees the socket the page opens now
    expect(page.get_by_role("heading", name="Ask", exact=True)).to_be_visible(timeout=60_000)
    expect(page.get_by_test_id("stSidebar").get_by_text("Embedding:")).to_be_visible(timeout=30_000)
    assert any(b"Embedding: **" in f for f in frames)  # a full run sends it: the check below can fail
    page.get_by_label("Question").fill(AGAIN)
    frames.clear()
    page.get_by_role("button", name="Ask").click()
    expect(page.get_by_role("heading", name=AGAIN, exact=True)).to_be_visible(timeout=120_000)
    expect(page.get_by_text("Extractive answer").first).to_be_visible()
    assert any(AGAIN.encode() in f for f in frames)
    assert not any(b"Embedding: **" in f for f in frames)
    expect(page.get_by_label("Question", exact=True)).to_have_count(1)


def test_a_citation_shows_its_page_in_place_on_ask_and_compare(tmp_path):
    from playwright.sync_api import expect

    from core.library import open_library

    root = tmp_path / "ws"
    ingest(open_library(fast_workspace(root)), pdfs.make_paper_pdf(tmp_path / "walrus-paper.pdf"))
    with serve_app(root, tmp_path / "streamlit.log") as url, browser_page(tmp_path / "failure.png") as page:
        page.goto(f"{url}/ask")
        expect(page.get_by_role("heading", name="Ask")).to_be_visible(timeout=60_000)
        page.get_by_label("Question").fill(QUESTION)
        submit(page, "Ask", page.get_by_text("Extractive answer").first, timeout_ms=120_000)
        check_citation_opens_in_place(page, tmp_path / "citation-dialog.png")
        check_asking_again_reruns_the_form_and_answer_alone(page)

        page.get_by_role("link", name="Compare", exact=True).click()
        expect(page.get_by_role("heading", name="Compare modes")).to_be_visible(timeout=30_000)
        page.get_by_label("Question").fill(QUESTION)
        submit(page, "Compare", page.get_by_role("heading", name="naive", exact=True), timeout_ms=120_000)
        tabs = len(page.context.pages)
        page.get_by_role("button", name="[1]", exact=True).first.click()
        dialog = page.get_by_role("dialog")
        expect(dialog.get_by_text("the cited passage highlighted")).to_be_visible(timeout=30_000)
        expect(dialog.get_by_role("img").first).to_be_visible(timeout=30_000)
        page.wait_for_function("() => [...document.querySelectorAll('[role=dialog] img')].every(i => i.complete)")
        page.screenshot(path=str(tmp_path / "compare-citation-dialog.png"))
        print(f"screenshot of the Compare citation dialog: {tmp_path / 'compare-citation-dialog.png'}")
        assert len(page.context.pages) == tabs
