"""Sign-in in a real browser: `streamlit run app.py --server.address 127.0.0.1` with an account configured and
sign-in forced on loopback (PAPERGRAPH_REQUIRE_SIGNIN=1, what a team behind a reverse proxy sets). A deep link to
/settings as the very first request of the fresh server (when Streamlit still runs page files without app.py)
shows the sign-in form; a viewer then sees no upload control and no Settings page, and signs out.
"""
from __future__ import annotations

import shutil

import pytest

from core.settings import accounts
from tests.pages.test_browser import PAGES, browser_page, serve_app

pytestmark = pytest.mark.slow

VIEWER_PASSWORD = "viewer-pass-1"
SCREENSHOT = "/tmp/papergraph-auth-viewer.png"  # kept after the run, for a look at the signed-in viewer


def test_a_viewer_signs_in_and_sees_no_upload_and_no_settings(monkeypatch, tmp_path):
    from playwright.sync_api import expect

    accounts.add_account("vera", VIEWER_PASSWORD, "viewer")  # in this test's PAPERGRAPH_CONFIG_DIR (conftest)
    monkeypatch.setenv(accounts.REQUIRE_SIGNIN_ENV, "1")
    with serve_app(tmp_path / "workspace", tmp_path / "streamlit.log") as url, \
            browser_page(tmp_path / "failure.png") as page:
        page.goto(f"{url}/settings")
        expect(page.get_by_role("heading", name="Sign in")).to_be_visible(timeout=60_000)
        expect(page.get_by_role("heading", name="Settings")).to_have_count(0)
        expect(page.get_by_test_id("stFileUploader")).to_have_count(0)

        page.get_by_label("Name").fill("vera")
        page.get_by_label("Password", exact=True).fill("wrong-password")
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_text("Wrong name or password.")).to_be_visible(timeout=30_000)
        page.get_by_label("Name").fill("vera")
        page.get_by_label("Password", exact=True).fill(VIEWER_PASSWORD)
        page.get_by_role("button", name="Sign in").click()

        expect(page.get_by_text("Signed in as")).to_be_visible(timeout=60_000)
        expect(page.get_by_role("heading", name="Library")).to_be_visible(timeout=60_000)
        nav = page.get_by_test_id("stSidebarNav").get_by_role("link")
        expect(nav).to_have_count(len(PAGES) - 1)
        # (an icon may render as its name before the icon font loads: the title is the last line)
        assert [t.strip().splitlines()[-1] for t in nav.all_inner_texts()] == [p for p in PAGES if p != "Settings"]
        expect(page.get_by_test_id("stFileUploader")).to_have_count(0)
        page.screenshot(path=str(tmp_path / "viewer.png"), full_page=True)
        shutil.copy(tmp_path / "viewer.png", SCREENSHOT)

        page.get_by_role("button", name="Sign out").click()
        expect(page.get_by_role("heading", name="Sign in")).to_be_visible(timeout=30_000)
        expect(page.get_by_test_id("stSidebarNav")).to_have_count(0)
