"""Sign-in in a real browser: `streamlit run serve.py --server.address 127.0.0.1` with accounts configured and
sign-in forced on loopback (PAPERGRAPH_REQUIRE_SIGNIN=1, what a team behind a reverse proxy sets).

The walk of issue 26: a deep link (page and query) as the very first request of a fresh server goes to the
sign-in form and, once signed in, to that page with that query; a reload and a second tab are still signed in
(the cookie is HttpOnly and SameSite=Strict), and an upload goes through; signing out in one tab signs the other
out at its next action, on the page it was on, with no "Page not found" over it; a viewer then signs in there and
sees no upload and no Settings. Screenshots of each step go to /work/screens/auth/ (or $PAPERGRAPH_SCREENS/auth).
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import pytest

from core.service import sessions
from core.settings import accounts
from tests.pages.test_browser import CHROMIUM, CHROMIUM_ARGS, PAGES, serve_app

pytestmark = pytest.mark.slow

EDITOR_PASSWORD, VIEWER_PASSWORD = "editor-pass-1", "viewer-pass-1"
SCREENS = Path(os.environ.get("PAPERGRAPH_SCREENS", "/work/screens")) / "auth"
DEEP_LINK = "/document?doc=d0c-4711"
# Every title the sidebar's navigation ever shows, from the first paint on: a cold server used to list the raw
# pages/ folder ("app", "library", "widgets"…) for seconds before app.py's navigation replaced it.
NAV_WATCH = """
window.__navSeen = new Set();
new MutationObserver(() => document.querySelectorAll('[data-testid="stSidebarNav"] a').forEach(
    a => window.__navSeen.add(a.innerText.trim().split('\\n').pop().trim()))
).observe(document, {subtree: true, childList: true, characterData: true});
"""


@contextmanager
def browser_context(shot: Path):
    """One browser profile (its cookie jar shared by its tabs); on failure a screenshot of each tab to `shot`."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        try:
            yield context
        except Exception:
            for i, tab in enumerate(context.pages):
                tab.screenshot(path=str(shot.with_name(f"{shot.stem}-{i}.png")), full_page=True)
            print(f"screenshots of the failure: {shot.parent}")
            raise
        finally:
            browser.close()


def nav_titles(page) -> list[str]:
    nav = page.get_by_test_id("stSidebarNav").get_by_role("link")
    # (an icon may render as its name before the icon font loads: the title is the last line)
    return [t.strip().splitlines()[-1] for t in nav.all_inner_texts()]


def fill_sign_in(page, name: str, password: str) -> None:
    page.get_by_label("Name").fill(name)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Sign in").click()


def test_signed_in_through_reload_new_tab_and_deep_link_until_signed_out_in_another_tab(monkeypatch, tmp_path):
    from playwright.sync_api import expect

    accounts.add_account("edna", EDITOR_PASSWORD, "editor")  # in this test's PAPERGRAPH_CONFIG_DIR (conftest)
    accounts.add_account("vera", VIEWER_PASSWORD, "viewer")
    monkeypatch.setenv(accounts.REQUIRE_SIGNIN_ENV, "1")
    SCREENS.mkdir(parents=True, exist_ok=True)

    def shot(page, name: str) -> None:
        # The viewport, not the full page: resizing to a tall page makes Streamlit redraw its widgets as
        # placeholders for a moment, and the Settings page is tall.
        page.bring_to_front()
        page.screenshot(path=str(SCREENS / name))

    with serve_app(tmp_path / "workspace", tmp_path / "streamlit.log") as url, \
            browser_context(tmp_path / "failure.png") as browser:
        browser.add_init_script(NAV_WATCH)
        page = browser.new_page()
        # The deep link, first request of the server: the sign-in form, the link kept in `next`; no app behind it.
        page.goto(f"{url}{DEEP_LINK}")
        expect(page.get_by_role("heading", name="Sign in")).to_be_visible(timeout=60_000)
        assert page.url == f"{url}/sign-in?next=%2Fdocument%3Fdoc%3Dd0c-4711"
        expect(page.get_by_test_id("stSidebarNav")).to_have_count(0)
        expect(page.get_by_text("Page not found")).to_have_count(0)
        shot(page, "01-deep-link-asks-to-sign-in.png")

        fill_sign_in(page, "edna", "wrong-password")
        expect(page.get_by_text("Wrong name or password.")).to_be_visible(timeout=30_000)
        assert page.get_by_label("Password", exact=True).input_value() == ""  # not echoed back
        shot(page, "02-wrong-password.png")
        fill_sign_in(page, "edna", EDITOR_PASSWORD)

        # Signed in, on the page and query the link asked for.
        expect(page.get_by_text("Signed in as")).to_be_visible(timeout=60_000)
        expect(page.get_by_role("heading", name="Document")).to_be_visible(timeout=60_000)
        assert page.url == f"{url}{DEEP_LINK}"
        assert nav_titles(page) == PAGES
        assert set(page.evaluate("Array.from(window.__navSeen)")) <= set(PAGES)  # never the raw pages/ list
        cookie = next(c for c in page.context.cookies() if c["name"] == sessions.COOKIE_NAME)
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/"
        assert page.evaluate("document.cookie").find(sessions.COOKIE_NAME) == -1  # no script can read it
        shot(page, "03-signed-in-on-the-deep-link.png")

        # A reload: a new websocket and Streamlit session, the same browser: still signed in, same page.
        page.reload()
        expect(page.get_by_text("Signed in as edna (editor)")).to_be_visible(timeout=60_000)
        expect(page.get_by_role("heading", name="Document")).to_be_visible()
        assert page.url == f"{url}{DEEP_LINK}"
        shot(page, "04-after-reload.png")

        # An editor's upload passes the gate: the browser's PUT carries the session cookie.
        note = tmp_path / "signed-in-note.md"
        note.write_text("# A note\n\nUploaded by a signed-in editor.\n", encoding="utf-8")
        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Library").click()
        expect(page.get_by_role("heading", name="Library")).to_be_visible(timeout=60_000)
        page.locator('input[type="file"]').first.set_input_files(str(note))
        expect(page.get_by_text("added and queued for parsing")).to_be_visible(timeout=60_000)
        # Off the Library, whose list refreshes itself while the note is parsed: a refresh after the sign-out below
        # would be this tab's next action (signing it out, rightly) before the click this test makes (CI clone 24).
        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Ask").click()
        expect(page.get_by_role("heading", name="Ask", exact=True)).to_be_visible(timeout=60_000)

        # A second tab, straight to another page.
        tab = browser.new_page()
        tab.goto(f"{url}/settings")
        expect(tab.get_by_text("Signed in as edna (editor)")).to_be_visible(timeout=60_000)
        expect(tab.get_by_role("heading", name="Settings")).to_be_visible(timeout=60_000)
        # Drawn, not placeholders: Streamlit loads each kind of widget's code on first use.
        expect(tab.get_by_test_id("stSelectbox").first.locator("input")).to_be_visible(timeout=60_000)
        shot(tab, "05-second-tab-settings.png")

        # Sign out in the second tab: the session is gone on the server.
        tab.get_by_role("button", name="Sign out").click()
        expect(tab.get_by_role("heading", name="Sign in")).to_be_visible(timeout=30_000)
        expect(tab.get_by_test_id("stSidebarNav")).to_have_count(0)
        expect(tab.get_by_text("Page not found")).to_have_count(0)
        shot(tab, "06-signed-out-in-the-second-tab.png")

        # The first tab's next action (a page of the navigation) finds itself signed out, on that page's address.
        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Search").click()
        expect(page.get_by_role("heading", name="Sign in")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("You were signed out")).to_be_visible()
        expect(page.get_by_role("heading", name="Search")).to_have_count(0)
        expect(page.get_by_test_id("stSidebarNav")).to_have_count(0)
        expect(page.get_by_text("Page not found")).to_have_count(0)
        shot(page, "07-first-tab-signed-out-at-its-next-action.png")

        # Its link leads to the form and back to the page it was on; a viewer there has no upload, no Settings.
        page.get_by_role("link", name="Sign in to PaperGraph").click()
        expect(page.get_by_label("Name")).to_be_visible(timeout=30_000)
        fill_sign_in(page, "vera", VIEWER_PASSWORD)
        expect(page.get_by_text("Signed in as vera (viewer)")).to_be_visible(timeout=60_000)
        expect(page.get_by_role("heading", name="Search")).to_be_visible(timeout=60_000)
        assert page.url == f"{url}/search"
        assert nav_titles(page) == [p for p in PAGES if p != "Settings"]
        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Library").click()
        expect(page.get_by_role("heading", name="Library")).to_be_visible(timeout=60_000)
        expect(page.get_by_test_id("stFileUploader")).to_have_count(0)
        shot(page, "08-viewer-library.png")
