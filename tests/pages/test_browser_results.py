"""The Results page in Chromium (served as `make run` serves it): a dataset picked, its leaderboards drawn, a search,
a row selected by a click showing its table cropped from the page and the link to it, the export buttons."""
from __future__ import annotations

import pytest

from core.library import open_library
from core.pipeline.documents import add_pdf
from core.pipeline.graph.stage import process_graph_queue
from core.pipeline.ingest import process_queue
from tests import pdfs
from tests.graph_papers import fast_workspace
from tests.pages.test_browser import CHROMIUM, browser_page, serve_app
from tests.results_records import add_papers

pytestmark = [pytest.mark.browser, pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing")]


@pytest.mark.slow
def test_the_results_page_in_a_browser(tmp_path):
    from playwright.sync_api import expect

    lib = open_library(fast_workspace(tmp_path / "ws"))
    add_pdf(lib, "paper.pdf", pdfs.make_paper_pdf(tmp_path / "paper.pdf", pages=1).read_bytes())
    process_queue(lib)
    process_graph_queue(lib, communities=False)
    add_papers(lib, hostile=True)
    with serve_app(lib.workspace.root, tmp_path / "streamlit.log") as url, browser_page(tmp_path / "shot.png") as page:
        page.goto(f"{url}/results")
        expect(page.get_by_role("heading", name="Results")).to_be_visible(timeout=60_000)
        expect(page.get_by_text("Pick a dataset, or search")).to_be_visible(timeout=30_000)
        page.get_by_role("combobox", name="Dataset").click()
        page.get_by_role("option", name="SciDocs").first.click()
        expect(page.get_by_role("heading", name="SciDocs — Avg.")).to_be_visible(timeout=30_000)
        expect(page.get_by_role("heading", name="SciDocs — MAP")).to_be_visible()
        for label in ("Download CSV", "Download Markdown", "Download LaTeX"):
            expect(page.get_by_role("button", name=label)).to_be_visible()
        expect(page.locator("script", has_text="alert(1)")).to_have_count(0)

        page.goto(f"{url}/results")  # a new session: no dataset picked
        page.get_by_label("Search methods, datasets, metrics and captions").fill("Heliotrope")
        page.keyboard.press("Enter")
        expect(page.get_by_role("heading", name="Dataset not named — Accuracy")).to_be_visible(timeout=30_000)
        grid = page.get_by_test_id("stDataFrame").first
        expect(grid).to_be_visible()
        box = grid.bounding_box()
        page.mouse.click(box["x"] + 14, box["y"] + 35 + 17)  # the first row's selection box, under the header
        expect(page.get_by_role("link", name="Open the paper at this page")).to_be_visible(timeout=30_000)
        expect(page.get_by_test_id("stImage").first).to_be_visible()
