"""Following a "Cited by" link on the Document page, in a real browser: the address names the paper now shown, so
a reload (or a copied link) shows that paper, not the one the researcher started from. `streamlit run serve.py`
over two generated papers that cite each other (tests/references_papers.py), in Debian's Chromium through
Playwright; skipped when Chromium is missing. A screenshot is saved in the test's tmp dir when anything fails."""
from __future__ import annotations

import re

import pytest

from core.library import open_library
from core.pipeline.documents import add_pdf
from core.pipeline.ingest import process_queue
from tests.graph_papers import fast_workspace
from tests.pages.test_browser import CHROMIUM, browser_page, serve_app
from tests.references_papers import HELIOTROPE_TITLE, MARIGOLD_TITLE, heliotrope_pdf, marigold_pdf

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)")]


def test_the_address_follows_the_paper_a_cited_by_link_opens(tmp_path):
    from playwright.sync_api import expect

    root = tmp_path / "ws"
    lib = open_library(fast_workspace(root))
    marigold, heliotrope = (add_pdf(lib, pdf.name, pdf.read_bytes()).doc_id
                            for pdf in (marigold_pdf(tmp_path / "pdfs"), heliotrope_pdf(tmp_path / "pdfs")))
    assert all(d.status == "ready" for d in process_queue(lib))
    with serve_app(root, tmp_path / "streamlit.log") as url, browser_page(tmp_path / "failure.png") as page:
        page.goto(f"{url}/document?doc={heliotrope[:12]}")
        expect(page.get_by_role("heading", name=HELIOTROPE_TITLE, level=2)).to_be_visible(timeout=60_000)
        page.get_by_text("References · cites 1 and cited by 1").click()
        expect(page.get_by_text("Cited by, in your library")).to_be_visible(timeout=30_000)
        # The marigold paper both cites the heliotrope paper and is cited by it: the last link is the Cited-by one.
        page.get_by_role("link", name=re.compile("Marigold Lattices Revisited")).last.click()
        expect(page.get_by_role("heading", name=MARIGOLD_TITLE, level=2)).to_be_visible(timeout=30_000)
        expect(page).to_have_url(re.compile(f"doc={marigold}"), timeout=10_000)
        assert heliotrope not in page.url
        page.reload()
        expect(page.get_by_role("heading", name=MARIGOLD_TITLE, level=2)).to_be_visible(timeout=60_000)
        expect(page.get_by_role("heading", name=HELIOTROPE_TITLE, level=2)).to_have_count(0)
