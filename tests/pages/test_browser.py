"""The real app in a real browser: start `streamlit run serve.py` on a fresh workspace, upload a generated paper
through the file uploader, wait until it is ready, search one of its sentences on the Search page and find it.

Drives Debian's Chromium through Playwright (never `playwright install`); skipped when Chromium is missing.
A screenshot of the page is saved in the test's tmp dir when anything fails.
"""
from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests import pdfs
from tests.paths import REPO

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
READY_TIMEOUT_MS = 180_000  # mineru parse + loading the embedding model in the app's process, on 2 busy cores

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)")


PAGES = ["Library", "Document", "Ask", "Compare", "Search", "Graph", "Gallery", "Results", "Evaluate", "Settings"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"streamlit did not become healthy in {timeout:.0f} s:\n{log.read_text()[-3000:]}")


@contextmanager
def serve_app(workspace: Path, log: Path, entry: str = "serve.py"):
    """`streamlit run serve.py` (app.py behind its gate, as `make run`) on a free port over `workspace`; yields
    its URL and stops it (and its mineru children: it runs in a session of its own) afterwards."""
    env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(workspace), PYTHONUNBUFFERED="1")
    for _attempt in range(5):
        # A free port can be taken between choosing it and Streamlit binding it; then start again on another.
        port = _free_port()
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", entry, "--server.port", str(port),
                 "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
                cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, proc, log)
            break
        except RuntimeError:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                raise
            if not any(sign in log.read_text() for sign in ("already in use", "is not available")):
                raise
    else:
        raise RuntimeError("five ports taken in a row")
    try:
        yield url
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@contextmanager
def browser_page(shot: Path, width: int = 1400, height: int = 1000):
    """A Chromium page; when anything inside fails, a full-page screenshot is saved to `shot` first."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        try:
            yield page
        except Exception:
            page.screenshot(path=str(shot), full_page=True)
            print(f"screenshot of the failure: {shot}")
            raise
        finally:
            browser.close()


def submit(page, button: str, sign, timeout_ms: int = 60_000) -> None:
    """Click a form's `button` and wait for `sign` (a locator) to show. In about one CI run in four, one click of
    this file started nothing: 60 s later the form was still filled, with neither results nor a spinner, and the
    server had not run the page (the same test passed alone at once). A click that starts nothing visible within
    15 s is made once more, as the researcher would; what the run then shows is checked as before."""
    from playwright.sync_api import expect

    started = sign.or_(page.get_by_test_id("stSpinner")).first
    page.get_by_role("button", name=button).click()
    try:
        expect(started).to_be_visible(timeout=15_000)
    except AssertionError:
        print(f"the click on {button!r} started nothing in 15 s: clicking again")
        page.get_by_role("button", name=button).click()
    expect(sign).to_be_visible(timeout=timeout_ms)


def check_citation_opens_in_place(page, shot: Path) -> None:
    """Click the answer's [1]: the cited page opens in a dialog over the answer, highlighted, in the same tab;
    its next page shows without closing it; closed, the answer is still there. Saves a screenshot to `shot`."""
    from playwright.sync_api import expect

    tabs = len(page.context.pages)
    answer = page.get_by_text("purple walrus hypothesis predicts exactly this behaviour").first
    expect(answer).to_be_visible()
    page.get_by_role("button", name="[1]", exact=True).first.click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible(timeout=30_000)
    expect(dialog.get_by_text("Page 1: the cited passage highlighted")).to_be_visible(timeout=30_000)
    expect(dialog.get_by_role("img").first).to_be_visible()
    link = dialog.get_by_role("link", name="Open page 1 in the Document page")
    assert "doc=" in (link.get_attribute("href") or "") and link.get_attribute("target") != "_blank"
    page.screenshot(path=str(shot))
    print(f"screenshot of the citation dialog: {shot}")
    dialog.get_by_role("button", name="Next page ▶").click()
    expect(dialog.get_by_text("(the passage is on page 1)")).to_be_visible(timeout=30_000)
    assert len(page.context.pages) == tabs  # no new tab, so no new session
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_have_count(0, timeout=10_000)
    expect(answer).to_be_visible()


@pytest.fixture
def app_url(tmp_path):
    with serve_app(tmp_path / "workspace", tmp_path / "streamlit.log") as url:
        yield url


@pytest.mark.slow
def test_upload_a_paper_wait_until_ready_search_ask_and_compare(app_url, tmp_path):
    from playwright.sync_api import expect

    pdf = pdfs.make_paper_pdf(tmp_path / "walrus-paper.pdf")
    # Three at once: the ingest pool's workers spawn while two wait in the queue (a worker that ran the app
    # again resumed that queue in a second writer: documents failed or the ingest hung).
    others = [pdfs.make_paper_pdf(tmp_path / f"{name}.pdf", title=title, pages=1, with_table=False,
                                  with_figure=False, sections=[("Abstract", [text]), ("1 Introduction", [text])])
              for name, title, text in (
                  ("tides", "Tidal Locking of Small Moons", "Small moons lock to their planet within a few million "
                   "years, because tides raised in their rock dissipate the energy of their spin."),
                  ("lichen", "Lichen Growth on Basalt", "Crustose lichens colonise fresh basalt within a decade "
                   "and grow less than a millimetre a year on its exposed faces."))]
    shot = tmp_path / "failure.png"
    with browser_page(shot) as page:
        # A deep link as the very first request to a fresh server still runs the entry point (sidebar too).
        page.goto(f"{app_url}/settings")
        expect(page.get_by_role("heading", name="Settings")).to_be_visible(timeout=30_000)
        expect(page.get_by_test_id("stSidebar").get_by_text("PaperGraph")).to_be_visible()
        # The navigation lists the ten pages of app.py and nothing else (pages/widgets/ is not a page).
        nav = page.get_by_test_id("stSidebarNav").get_by_role("link")
        expect(nav).to_have_count(len(PAGES))
        assert [t.split("\n")[-1].strip() for t in nav.all_inner_texts()] == PAGES  # icon name, then title

        page.goto(app_url)
        expect(page.get_by_role("heading", name="Library")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("The library is empty")).to_be_visible(timeout=30_000)

        page.locator('input[type="file"]').first.set_input_files([str(p) for p in (pdf, *others)])
        expect(page.get_by_text("added and queued for parsing").first).to_be_visible(timeout=30_000)

        sidebar = page.get_by_test_id("stSidebar")
        expect(sidebar.get_by_text("3 ready")).to_be_visible(timeout=READY_TIMEOUT_MS)
        table = page.get_by_test_id("stDataFrame")
        expect(table).to_be_visible()

        page.get_by_role("link", name="Search").click()
        expect(page.get_by_role("heading", name="Search")).to_be_visible(timeout=30_000)
        page.get_by_label("Question or phrase").fill("purple walrus hypothesis for coherent lattices")
        submit(page, "Search", page.get_by_text(f"1. {pdfs.DEFAULT_TITLE}"))
        expect(page.get_by_text("purple walrus hypothesis predicts exactly this behaviour").first).to_be_visible()
        expect(page.get_by_text("Page 1: where the passage was found").first).to_be_visible()
        link = page.get_by_role("link", name="Open page 1 in the Document view").first
        assert "doc=" in (link.get_attribute("href") or "")

        # Ask: an extractive (LLM-free) answer whose citation [1] shows the cited page in place: a dialog in the
        # same tab and session, not a link to a new tab.
        page.get_by_role("link", name="Ask", exact=True).click()
        expect(page.get_by_role("heading", name="Ask")).to_be_visible(timeout=30_000)
        # Streamlit's waiting indicators stand still (app.py STILL_INDICATORS_CSS): animated, each costs the browser
        # ~0.13 CPU-s per second of waiting without a GPU. A probe spinner with an animation of its own is stilled.
        assert page.evaluate("""() => {
            const box = document.body.appendChild(document.createElement('div'));
            box.dataset.testid = 'stSpinner';
            const dot = box.appendChild(document.createElement('i'));
            dot.style.animation = 'spin 1s infinite';
            const name = getComputedStyle(dot).animationName;
            box.remove();
            return name;
        }""") == "none"
        page.get_by_label("Question").fill("What does the purple walrus hypothesis predict?")
        submit(page, "Ask", page.get_by_text("Extractive answer").first)
        # The cited source is open under Sources; its page region is drawn on demand (a dialog), not with every answer.
        expect(page.get_by_text("Show the passage on its page").first).to_be_visible()
        check_citation_opens_in_place(page, tmp_path / "citation-dialog.png")

        # Compare: a summary table of every mode, then one tab per mode (five modes do not fit side by side);
        # a tab opened later draws its mode then, in the same session.
        page.get_by_role("link", name="Compare", exact=True).click()
        expect(page.get_by_role("heading", name="Compare modes")).to_be_visible(timeout=30_000)
        page.get_by_label("Question").fill("What does the purple walrus hypothesis predict?")
        submit(page, "Compare", page.get_by_test_id("stDataFrame").first)
        for mode in ("naive", "local", "global", "hybrid", "mix"):
            expect(page.get_by_role("tab", name=mode, exact=True)).to_be_visible(timeout=60_000)
        expect(page.get_by_role("heading", name="naive", exact=True)).to_be_visible()
        page.get_by_role("tab", name="mix", exact=True).click()
        expect(page.get_by_role("heading", name="mix", exact=True)).to_be_visible(timeout=60_000)
        page.screenshot(path=str(tmp_path / "compare.png"), full_page=True)

        # A deep link to a page of a document (a new session): the Document page opens on that paper and page.
        doc_id = hashlib.sha256(pdf.read_bytes()).hexdigest()
        page.goto(f"{app_url}/document?doc={doc_id[:12]}&page=2")
        expect(page.get_by_role("heading", name=pdfs.DEFAULT_TITLE, level=2)).to_be_visible(timeout=30_000)
        expect(page.get_by_test_id("stSidebar").get_by_text("PaperGraph")).to_be_visible()
        assert f"doc={doc_id}" in page.url
