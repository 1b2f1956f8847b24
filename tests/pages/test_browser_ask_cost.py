"""What waiting for an answer costs the researcher's browser, in a real one: `streamlit run app.py` over an empty
workspace in Debian's Chromium. While a question runs, Streamlit fades what the last run drew (opacity over 1 s,
after 0.5 s) and eases borders and colours; without a GPU each frame of a fade is painted and composited in
software: ~0.1 CPU-s per second of waiting in each browser, most of what a browser spent per answer with eight
researchers asking at once (bench/load_ask.py). app.py keeps every transition's delay and drops its duration: what
was stale still dims after 0.5 s, in one step instead of sixty frames.

Skipped when Chromium is missing. A screenshot is saved in the test's tmp dir when anything fails.
"""
from __future__ import annotations

import pytest

from tests.pages.test_browser import CHROMIUM, browser_page, serve_app

pytestmark = [pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)")]

# A probe styled as Streamlit styles a stale element (its `transition: opacity 1s ease-in 0.5s`), on the page.
PROBE = """() => {
    const box = document.querySelector('[data-testid=stMain]').appendChild(document.createElement('div'));
    box.dataset.stale = 'true';
    box.style.transition = 'opacity 1s ease-in 0.5s';
    const style = getComputedStyle(box);
    const timing = [style.transitionProperty, style.transitionDuration, style.transitionDelay];
    box.remove();
    return timing;
}"""


def test_transitions_keep_their_delay_but_take_no_frames(tmp_path):
    from playwright.sync_api import expect

    with serve_app(tmp_path / "ws", tmp_path / "streamlit.log") as url, browser_page(tmp_path / "failure.png") as page:
        page.goto(f"{url}/ask")
        expect(page.get_by_test_id("stSidebar").get_by_text("PaperGraph")).to_be_visible(timeout=60_000)
        # app.py's style arrives with its first run (st.html loads its component on demand): wait until it applies.
        page.wait_for_function(f"() => ({PROBE})()[1] === '0s'", timeout=30_000)
        assert page.evaluate(PROBE) == ["opacity", "0s", "0.5s"]
        # Streamlit's own elements too: the widgets' eased borders and colours (here the sidebar's and the
        # navigation's) take no frames either.
        durations = page.evaluate("""() => [...document.querySelectorAll('[data-testid=stSidebar] *')]
            .map(e => getComputedStyle(e).transitionDuration)""")
        assert durations and set(", ".join(durations).split(", ")) == {"0s"}
