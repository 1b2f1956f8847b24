"""A viewer in a real browser (`streamlit run app.py`, sign-in forced on loopback, Debian's Chromium through
Playwright), over a workspace with one paper and its LLM-free graph:

- the pages show no editing hint or affordance a viewer cannot use: the Library's table says rows open a paper
  (not "retry or delete"), the Graph page has no "Your edits (0)" and no duplicate suggestions (which are for
  merging), the Evaluate page has no Run tab and does not send the viewer to one;
- an evaluation run that another process is running shows as running on the Results tab and, once it ends, as
  done with its scores, in the caption and in the run picker's label — in the same page, without a reload (the
  viewer has no Run tab whose progress polled).

Skipped when Chromium is missing. A screenshot is saved in the test's tmp dir when anything fails.
"""
from __future__ import annotations

import re
import threading

import pytest

from core.eval.runner import EvalOptions, run_eval
from core.library import open_library
from core.settings import accounts
from tests.graph_papers import fast_workspace, make_bert_pdf
from tests.pages.test_app_eval import QUESTIONS
from tests.pages.test_browser import CHROMIUM, browser_page, serve_app
from tests.presentation.explorer_helpers import ingest

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)")]

VIEWER_PASSWORD = "viewer-pass-1"


def sign_in(page, url: str, name: str, password: str) -> None:
    from playwright.sync_api import expect

    page.goto(url)
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible(timeout=60_000)
    page.get_by_label("Name").fill(name)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("Signed in as")).to_be_visible(timeout=60_000)


def test_a_viewer_sees_no_editing_hints_and_a_run_ending_elsewhere_shows_done_without_a_reload(monkeypatch,
                                                                                                 tmp_path):
    from playwright.sync_api import expect

    root = tmp_path / "ws"
    lib = open_library(fast_workspace(root))
    ingest(lib, make_bert_pdf(tmp_path))
    store = lib.eval_store
    qset = store.save_set("bert", QUESTIONS[:1], source="test")
    accounts.add_account("vera", VIEWER_PASSWORD, "viewer")  # in this test's PAPERGRAPH_CONFIG_DIR (conftest)
    monkeypatch.setenv(accounts.REQUIRE_SIGNIN_ENV, "1")

    started, proceed = threading.Event(), threading.Event()

    def hold(_run) -> None:  # the run's row says "running" until the test lets it go on
        started.set()
        proceed.wait(timeout=300)

    runner = threading.Thread(target=run_eval, daemon=True, args=(lib, qset, EvalOptions(
        modes=["naive", "local"], ragas=False, ragas_judge=False)), kwargs={"store": store, "on_start": hold})
    try:
        with serve_app(root, tmp_path / "streamlit.log") as url, browser_page(tmp_path / "failure.png") as page:
            sign_in(page, url, "vera", VIEWER_PASSWORD)
            expect(page.get_by_role("heading", name="Library")).to_be_visible(timeout=60_000)
            expect(page.get_by_text("Select a row to open it in the Document view.")).to_be_visible()
            expect(page.get_by_text("retry or delete", exact=False)).to_have_count(0)

            page.get_by_role("link", name="Graph", exact=True).click()
            expect(page.get_by_role("heading", name="Graph", exact=True)).to_be_visible(timeout=60_000)
            expect(page.get_by_text("Explain a connection")).to_be_visible(timeout=60_000)
            expect(page.get_by_text("Your edits", exact=False)).to_have_count(0)
            expect(page.get_by_text("Suggested duplicates")).to_have_count(0)

            runner.start()
            assert started.wait(timeout=120)
            page.get_by_role("link", name="Evaluate", exact=True).click()
            expect(page.get_by_role("heading", name="Evaluate")).to_be_visible(timeout=60_000)
            expect(page.get_by_role("tab", name="Run")).to_have_count(0)
            expect(page.get_by_text("0 of 2 answers scored · running", exact=False)).to_be_visible(timeout=60_000)
            page.evaluate("() => { window.__sameDocument = 'yes'; }")  # gone if the page reloads
            # The app's model warm-up reruns the page once when it ends: let it end first, so that only the page's
            # own polling can show the run's end.
            expect(page.get_by_test_id("stSidebar").get_by_text(re.compile("— loaded"))).to_be_visible(
                timeout=120_000)
            page.wait_for_timeout(3000)  # (one more poll of the sidebar's timer, which then stops)

            proceed.set()
            runner.join(timeout=120)
            assert store.runs()[0].status == "done"
            expect(page.get_by_text("2 of 2 answers scored · done", exact=False)).to_be_visible(timeout=60_000)
            expect(page.get_by_role("heading", name="Per mode")).to_be_visible(timeout=60_000)
            # The run picker's label says so too (it is the value of the picker's input).
            picker = page.get_by_test_id("stSelectbox").filter(has=page.get_by_text("Run", exact=True)).first
            expect(picker.locator("input")).to_have_value(re.compile(r"· done$"), timeout=30_000)
            assert page.evaluate("() => window.__sameDocument") == "yes"
            page.screenshot(path=str(tmp_path / "viewer-eval-done.png"))
    finally:
        proceed.set()
