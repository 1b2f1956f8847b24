"""The sidebar's model line in a real browser while the app warms up: `streamlit run app.py` over a workspace with a
ready text document, the Ask page opened at once. The line says the model is loading in the background, then
"loaded" by itself: the Ask page reruns as a fragment, so without the line's own timer it said "loading" until the
researcher changed page. Skipped when Chromium is missing; a screenshot is saved in the test's tmp dir on failure.
"""
from __future__ import annotations

import pytest

from core.library import open_library
from core.pipeline.documents import add_document
from core.pipeline.ingest import process_queue
from core.settings.workspace import Workspace
from tests.pages.test_browser import CHROMIUM, browser_page, serve_app

pytestmark = [pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)")]

TEXT = (b"Walrus lattices\n\nThe purple walrus hypothesis predicts that coherent lattices relax in 37 steps. "
        b"We measured it on twelve lattices of sea ice.\n")


def test_the_model_line_turns_loaded_by_itself_after_the_background_warm_up(tmp_path):
    from playwright.sync_api import expect

    lib = open_library(Workspace(tmp_path / "ws"))
    add_document(lib, "walrus.txt", TEXT)
    assert [d.status.value for d in process_queue(lib)] == ["ready"]

    with serve_app(tmp_path / "ws", tmp_path / "streamlit.log") as url, browser_page(tmp_path / "failure.png") as page:
        page.goto(f"{url}/ask")
        sidebar = page.get_by_test_id("stSidebar")
        expect(sidebar.get_by_text("loading in the background for the first question")).to_be_visible(timeout=60_000)
        expect(sidebar.get_by_text("— loaded")).to_be_visible(timeout=120_000)  # no click, no page change
        expect(sidebar.get_by_text("loading in the background")).to_have_count(0)
        expect(page.get_by_role("heading", name="Ask")).to_be_visible()
