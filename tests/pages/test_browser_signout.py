"""Sign-out reaches every tab (issue 36), in a real browser: `streamlit run serve.py` with sign-in forced on
loopback, a workspace with one ready paper, one Chromium profile with two tabs. Tab 2 stays on a page, ready to
act; tab 1 signs out; tab 2's next action — asking a question, running a Compare, opening a citation's dialog,
exporting the cited papers' BibTeX — shows the sign-in page with "You were signed out", and never the answer,
the comparison, the dialog or the file. Each of those reruns a fragment (or a dialog) alone, not app.py: before,
tab 2 answered two questions, ran a Compare and opened a citation dialog after the sign-out.

Screenshots of tab 2 after each action go to /work/screens/signout/ (or $PAPERGRAPH_SCREENS/signout).
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from core.library import open_library
from core.settings import accounts
from tests import pdfs
from tests.graph_papers import fast_workspace
from tests.pages.test_browser import CHROMIUM, serve_app, submit
from tests.pages.test_browser_auth import EDITOR_PASSWORD, browser_context, fill_sign_in
from tests.presentation.explorer_helpers import ingest

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)")]

SCREENS = Path(os.environ.get("PAPERGRAPH_SCREENS", "/work/screens")) / "signout"
QUESTION = "What does the purple walrus hypothesis predict?"
ANSWER = "purple walrus hypothesis predicts exactly this behaviour"


def test_sign_out_in_one_tab_stops_ask_compare_a_dialog_and_a_download_in_another(monkeypatch, tmp_path):
    from playwright.sync_api import expect

    accounts.add_account("edna", EDITOR_PASSWORD, "editor")  # in this test's PAPERGRAPH_CONFIG_DIR (conftest)
    monkeypatch.setenv(accounts.REQUIRE_SIGNIN_ENV, "1")
    SCREENS.mkdir(parents=True, exist_ok=True)
    root = tmp_path / "ws"
    ingest(open_library(fast_workspace(root)), pdfs.make_paper_pdf(tmp_path / "walrus-paper.pdf"))

    with serve_app(root, tmp_path / "streamlit.log") as url, browser_context(tmp_path / "failure.png") as browser:
        stay, other = browser.new_page(), browser.new_page()
        downloads: list = []
        stay.on("download", lambda download: downloads.append(download))

        def on_page(path: str, heading: str) -> None:
            """Tab 2 on `path`, signed in (through the form if need be)."""
            stay.bring_to_front()
            stay.goto(f"{url}{path}")
            if stay.get_by_label("Password", exact=True).is_visible():  # sent to the form (a static page)
                fill_sign_in(stay, "edna", EDITOR_PASSWORD)
            expect(stay.get_by_text("Signed in as edna (editor)")).to_be_visible(timeout=60_000)
            expect(stay.get_by_role("heading", name=heading, exact=True)).to_be_visible(timeout=60_000)
            # While the embedding model loads, the sidebar's model line redraws itself every 2 s: that rerun would
            # be the tab's next action after the sign-out (rightly signing it out) before the click this test makes.
            expect(stay.get_by_test_id("stSidebar")).to_contain_text(re.compile("— (loaded|not loaded yet)"),
                                                                      timeout=180_000)
            stay.wait_for_timeout(5_000)  # "loaded" is drawn by the timer's last run; the full run it asks for ends it

        def sign_out_in_the_other_tab() -> None:
            other.bring_to_front()
            other.goto(f"{url}/search")
            expect(other.get_by_text("Signed in as edna (editor)")).to_be_visible(timeout=60_000)
            other.get_by_role("button", name="Sign out").click()
            expect(other.get_by_role("heading", name="Sign in")).to_be_visible(timeout=30_000)
            stay.bring_to_front()

        def signed_out(shot: str) -> None:
            """Tab 2 after its action: the sign-in page, nothing of the app."""
            expect(stay.get_by_role("heading", name="Sign in")).to_be_visible(timeout=60_000)
            expect(stay.get_by_text("You were signed out")).to_be_visible()
            expect(stay.get_by_role("link", name="Sign in to PaperGraph")).to_be_visible()
            expect(stay.get_by_test_id("stSidebarNav")).to_have_count(0)
            expect(stay.get_by_text(ANSWER)).to_have_count(0)
            expect(stay.get_by_role("dialog")).to_have_count(0)
            expect(stay.get_by_text("Signed in as")).to_have_count(0)
            stay.screenshot(path=str(SCREENS / shot))

        # 1. A question.
        on_page("/ask", "Ask")
        stay.get_by_label("Question").fill(QUESTION)
        sign_out_in_the_other_tab()
        stay.get_by_role("button", name="Ask", exact=True).click()
        signed_out("1-ask-after-sign-out.png")
        expect(stay.get_by_role("heading", name=QUESTION)).to_have_count(0)

        # 2. A comparison.
        on_page("/compare", "Compare modes")
        stay.get_by_label("Question").fill(QUESTION)
        sign_out_in_the_other_tab()
        stay.get_by_role("button", name="Compare", exact=True).click()
        signed_out("2-compare-after-sign-out.png")
        expect(stay.get_by_role("heading", name="naive", exact=True)).to_have_count(0)

        # 3. A citation's dialog, from an answer given while signed in.
        on_page("/ask", "Ask")
        stay.get_by_label("Question").fill(QUESTION)
        submit(stay, "Ask", stay.get_by_text(ANSWER).first, timeout_ms=120_000)
        sign_out_in_the_other_tab()
        stay.get_by_role("button", name="[1]", exact=True).first.click()
        signed_out("3-citation-after-sign-out.png")
        expect(stay.get_by_text("the cited passage highlighted")).to_have_count(0)

        # 4. The cited papers' BibTeX, from an answer given while signed in.
        on_page("/ask", "Ask")
        stay.get_by_label("Question").fill(QUESTION)
        submit(stay, "Ask", stay.get_by_text(ANSWER).first, timeout_ms=120_000)
        export = stay.get_by_role("button", name="Export BibTeX of the 1 cited paper")
        expect(export).to_be_visible()
        sign_out_in_the_other_tab()
        export.click()  # its data is made on demand, over the websocket: the gate makes that a full run
        signed_out("4-download-after-sign-out.png")
        stay.wait_for_timeout(2_000)  # were a download to start, it would have by now
        files = [Path(d.path()).read_text(errors="replace") if d.failure() is None else "" for d in downloads]
        print(f"downloads after the sign-out: {len(downloads)}; contents: {files!r}")
        assert not any("@" in f for f in files)  # no BibTeX entry reached the browser
