"""The Graph page in a real browser: `streamlit run app.py` over a real workspace (builtin parser, spaCy graph), in
Debian's Chromium through Playwright. The graph renders (the default view with its main nodes labelled), hovering
a node shows its tooltip, clicking a node or an edge opens its panel in the same session (no reload: filters, open
expanders and typed text stay), and a paper whose title and text hold `<script>alert(1)</script>` and
`<img src=x onerror=…>` (plus entities named so, through the page's own rename) shows them as text everywhere: no
dialog ever opens.

Skipped when Chromium is missing. A screenshot is saved in the test's tmp dir when anything fails.
"""
from __future__ import annotations

import re
from urllib.parse import quote_plus

import pytest

from core.graph.merge import normalize_key
from core.library import open_library
from core.pipeline.graph import edits
from core.presentation.graph.explorer import encode_view_state
from core.presentation.graph.graph_index import load_index
from tests import pdfs
from tests.graph_papers import fast_workspace, make_bert_pdf
from tests.pages.test_browser import CHROMIUM, browser_page, serve_app
from tests.presentation.explorer_helpers import ingest

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)")

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(2)>"
XSS_TITLE = f"Attacks {SCRIPT} and {IMG} on Benchmarks"
XSS_SECTIONS: list[pdfs.Section] = [
    ("Abstract", [f"We evaluate BERT against {SCRIPT} on the GLUE benchmark. The {IMG} baseline is weaker than "
                  "BERT on SQuAD."]),
    ("1 Results", [f"RoBERTa and BERT both beat {IMG} on MultiNLI. {SCRIPT} stands in for any hostile text."]),
]


@pytest.fixture(scope="module")
def graph_app(tmp_path_factory):
    """A workspace with the BERT paper and the hostile one, two entities renamed to the payloads, and the app
    serving it."""
    folder = tmp_path_factory.mktemp("browser-graph-pdfs")
    root = tmp_path_factory.mktemp("browser-graph") / "ws"
    lib = open_library(fast_workspace(root))
    hostile = pdfs.make_paper_pdf(folder / "hostile.pdf", title=XSS_TITLE, sections=XSS_SECTIONS, pages=1,
                                  with_table=False, with_figure=False, authors="Mallory")
    ingest(lib, make_bert_pdf(folder), hostile)
    edits.rename_entity(lib, normalize_key("SQuAD"), SCRIPT)
    edits.rename_entity(lib, normalize_key("MultiNLI"), IMG)
    with serve_app(root, folder / "streamlit.log") as url:
        yield url, lib


def graph_frame(page):
    """The frame holding the graph (the sandboxed #graph frame inside the graph component's iframe), once
    vis-network has drawn and settled it."""
    component = page.locator("iframe").first.element_handle(timeout=60_000)
    handle = component.content_frame().wait_for_selector("iframe#graph", state="attached", timeout=60_000)
    frame = handle.content_frame()
    frame.wait_for_function("() => document.body && document.body.getAttribute('data-graph-stable') === '1'",
                            timeout=60_000)
    return handle, frame


def node_point(handle, frame, key: str) -> tuple[float, float]:
    """Where a node is drawn, in page coordinates (the graph scrolled into the window first)."""
    handle.evaluate("e => e.scrollIntoView({block: 'start'})")
    spot = frame.evaluate("""(key) => {
        const p = network.canvasToDOM(network.getPositions([key])[key]);
        const box = document.getElementById('mynetwork').getBoundingClientRect();
        return [box.left + p.x, box.top + p.y];
    }""", key)
    box = handle.bounding_box()
    return box["x"] + spot[0], box["y"] + spot[1]


@pytest.mark.slow
def test_graph_renders_tooltips_and_panels_as_text_and_a_click_opens_the_panel(graph_app, tmp_path):
    from playwright.sync_api import expect

    url, lib = graph_app
    index = load_index(lib)
    hostile_paper = next(k for k, n in index.nodes.items() if n.is_paper and "Attacks" in n.name)
    assert SCRIPT in index.nodes[hostile_paper].name  # the paper node is named by the hostile title
    view = encode_view_state({"include_papers": True, "max_nodes": 300, "overview": False})
    shot = tmp_path / "failure.png"
    dialogs: list[str] = []
    with browser_page(shot, height=1100) as page:
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(f"{url}/graph?view={view}")
        expect(page.get_by_role("heading", name="Graph", exact=True)).to_be_visible(timeout=60_000)
        handle, frame = graph_frame(page)
        labels = frame.evaluate("() => nodes.get().map(n => n.label)")
        assert SCRIPT in labels and IMG in labels  # drawn on the canvas as text
        assert len(labels) == len(index.nodes)
        # Nothing from a paper became an element of the graph's document.
        assert frame.evaluate("() => document.querySelectorAll('img, iframe, object, embed').length") == 0
        assert frame.evaluate("() => document.scripts.length") <= 4  # vis, utils, pyvis's and ours

        # Hovering the hostile paper node shows its title in the tooltip, as text.
        frame = hover_until_tooltip(page, hostile_paper)
        tooltip = frame.evaluate("() => { const t = document.querySelector('.vis-tooltip');"
                                 " return [t.textContent, t.querySelectorAll('img, script').length]; }")
        assert SCRIPT in tooltip[0] and IMG in tooltip[0] and tooltip[1] == 0

        # Clicking a node opens its panel (in the same session; the URL follows, as a link to it).
        target = normalize_key("SQuAD")
        click_until(page, target, page.get_by_role("heading", name=SCRIPT, exact=True))
        expect(page).to_have_url(re.compile(rf"entity={re.escape(quote_plus(target))}"), timeout=30_000)
        assert "view=" in page.url
        expect(page.get_by_text("Passages", exact=True)).to_be_visible()
        expect(page.get_by_text("baseline is weaker than BERT on SQuAD", exact=False).first).to_be_visible()
        # The view came back with the click: paper nodes are still drawn.
        handle, frame = graph_frame(page)
        assert len(frame.evaluate("() => nodes.get()")) == len(index.nodes)

        # An ordinary entity too, chosen by clicking.
        bert = normalize_key("BERT")
        click_until(page, bert, page.get_by_role("heading", name="BERT", exact=True))
        expect(page.get_by_text("Neighbours", exact=True)).to_be_visible()
        # The passage is the paper's text as a reader sees it: the markup stripped (a script element with its
        # content), nothing of it an element of the page.
        expect(page.get_by_text("We evaluate BERT against on the GLUE", exact=False).first).to_be_visible()
        page.wait_for_timeout(1000)
        assert dialogs == [], dialogs


def hover_until_tooltip(page, key: str, attempts: int = 4):
    """Hover a node until its tooltip shows, and return the graph's frame. vis-network opens a tooltip only
    after a pointer move over a settled canvas; a move landing while the component's frame is being laid out
    again (Streamlit sizes it after the first draw) is lost, so move off and back as a person would."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in range(attempts):
        handle, frame = graph_frame(page)
        x, y = node_point(handle, frame, key)
        page.mouse.move(x - 40, y - 40)
        page.mouse.move(x, y, steps=5)
        try:
            frame.wait_for_function("() => { const t = document.querySelector('.vis-tooltip');"
                                    " return t && t.style.visibility !== 'hidden' && t.textContent.length > 0; }",
                                    timeout=8_000)
            return frame
        except PlaywrightTimeout:
            if attempt == attempts - 1:
                raise


def open_expander(summary, inside, attempts: int = 5) -> None:
    """Open an expander until what it holds shows. A click landing while a rerun redraws the page can be lost,
    or can wait on a summary being replaced (CI clone 7 timed out after 30 s there), so each click has a short
    timeout, and an expander found open is never clicked again (that would close it)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect

    for attempt in range(attempts):
        if inside.is_visible():
            return
        try:
            summary.click(timeout=10_000)
            expect(inside).to_be_visible(timeout=8_000)
            return
        except (AssertionError, PlaywrightTimeout):
            if attempt == attempts - 1:
                raise


def click_node(page, key: str) -> None:
    handle, frame = graph_frame(page)
    page.mouse.click(*node_point(handle, frame, key))


def click_until(page, key: str, shown, attempts: int = 3) -> None:
    """Click a node until its panel shows: a click landing while the frame is still being redrawn (after a rerun
    the page made) can be lost, as a person would click again."""
    from playwright.sync_api import expect

    for attempt in range(attempts):
        click_node(page, key)
        try:
            expect(shown).to_be_visible(timeout=20_000)
            return
        except AssertionError:
            if attempt == attempts - 1:
                raise


@pytest.mark.slow
def test_default_view_is_labelled_and_clicks_update_the_panel_without_reloading(graph_app, tmp_path):
    from playwright.sync_api import expect

    url, lib = graph_app
    index = load_index(lib)
    shot = tmp_path / "failure.png"
    with browser_page(shot, height=1100) as page:
        page.goto(f"{url}/graph")
        expect(page.get_by_role("heading", name="Graph", exact=True)).to_be_visible(timeout=60_000)
        expect(page.get_by_text("Overview: 2 paper(s)", exact=False)).to_be_visible(timeout=60_000)
        handle, frame = graph_frame(page)
        # The default view: both papers and their main entities; the most connected ones labelled at a size
        # that reads at the zoom the view opens with, the rest only once zoomed in (and in their tooltips).
        shown = frame.evaluate("() => nodes.get().map(n => n.id)")
        assert sum(k.startswith("paper:") for k in shown) == 2 and len(shown) < len(index.nodes)
        majors = frame.evaluate("""() => { const s = network.getScale();
            return nodes.get({filter: n => n.major}).map(n => [n.id, n.label, n.font.size * s]); }""")
        crowded = frame.evaluate("() => nodes.get({filter: n => n.crowded}).map(n => n.id)")
        assert len(majors) + len(crowded) >= 10 and len(majors) >= 5, (majors, crowded)
        assert all(label and on_screen >= 13 for _, label, on_screen in majors), majors
        entities = [k for k in shown if not k.startswith("paper:")]
        hub = max(entities, key=lambda k: (index.degree(k), k))
        assert hub in {k for k, _, _ in majors} | set(crowded)
        # No two labels drawn at the opening zoom cover each other (a crowded one waits for a zoom) ...
        boxes = frame.evaluate("() => nodes.get({filter: n => n.major}).map(n => network.getBoundingBox(n.id))")
        overlaps = [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:]
                    if a["left"] < b["right"] and a["right"] > b["left"] and a["top"] < b["bottom"]
                    and a["bottom"] > b["top"]]
        assert not overlaps, overlaps
        # ... and the key of the colours is above the graph, as the page's caption says.
        assert frame.evaluate("""() => document.getElementById('pg-legend').getBoundingClientRect().bottom
            <= document.getElementById('mynetwork').getBoundingClientRect().top""")
        expect(page.get_by_text("(key above the graph)", exact=False)).to_be_visible()
        # The rest, if any (the two papers' cleaned graph is small enough that its overview may be all main
        # entities), are drawn smaller.
        minor = frame.evaluate("() => nodes.get({filter: n => !n.major}).map(n => n.font.size * network.getScale())")
        assert not minor or max(minor) < max(on_screen for _, _, on_screen in majors)

        # State a reload would lose: a filter changed, an expander opened and text typed in it.
        page.get_by_text("community", exact=True).click()  # colour by community
        expect(page.get_by_text("Colours: community", exact=False)).to_be_visible(timeout=30_000)
        box = page.get_by_label("From: search")
        summary = page.locator("summary", has_text="Explain a connection")
        open_expander(summary, box)
        box.fill("RoBERTa")
        box.press("Enter")
        expect(page.get_by_label("From", exact=True)).to_be_visible(timeout=30_000)
        page.evaluate("() => { window.__sameDocument = 'yes'; }")  # gone if the app reloads
        tabs = len(page.context.pages)

        # Clicking a node opens its panel.
        bert = normalize_key("BERT")
        click_until(page, bert, page.get_by_role("heading", name="BERT", exact=True))
        expect(page.get_by_text("Neighbours", exact=True)).to_be_visible()
        expect(page).to_have_url(re.compile(rf"entity={re.escape(quote_plus(bert))}"), timeout=30_000)
        # ... and another one replaces it, still without a reload.
        other = next(k for k, _, _ in majors if not k.startswith("paper:") and k != bert)
        click_until(page, other, page.get_by_role("heading", name=index.nodes[other].name, exact=True))
        expect(page.get_by_role("heading", name="BERT", exact=True)).to_have_count(0)

        # Clicking an edge opens the relation's panel.
        handle, frame = graph_frame(page)
        edge = frame.evaluate("""() => { const e = edges.get({filter: e => !e.dashes})[0];
            const a = network.getPositions([e.from])[e.from], b = network.getPositions([e.to])[e.to];
            const p = network.canvasToDOM({x: (a.x + b.x) / 2, y: (a.y + b.y) / 2});
            const box = document.getElementById('mynetwork').getBoundingClientRect();
            return [e.from, e.to, box.left + p.x, box.top + p.y]; }""")
        box_of = handle.bounding_box()
        page.mouse.click(box_of["x"] + edge[2], box_of["y"] + edge[3])
        expect(page.get_by_text("RELATED · weight", exact=False).first).to_be_visible(timeout=60_000)
        headings = [h for h in page.get_by_role("heading").all_inner_texts() if " — " in h]
        assert any(index.nodes[edge[0]].name in h and index.nodes[edge[1]].name in h for h in headings), headings
        expect(page).to_have_url(re.compile(r"edge="), timeout=30_000)

        # Same document and session all along: the marker, the filter, the open expander and the typed text.
        assert page.evaluate("() => window.__sameDocument") == "yes"
        assert len(page.context.pages) == tabs
        expect(page.get_by_text("Colours: community", exact=False)).to_be_visible()
        expect(page.get_by_label("From: search")).to_have_value("RoBERTa")
        assert "%22color_by%22%3A%22community%22" in page.url

    # A deep link still opens the entity's panel in a new session.
    with browser_page(shot, height=1100) as page:
        page.goto(f"{url}/graph?entity={quote_plus(bert)}")
        expect(page.get_by_role("heading", name="BERT", exact=True)).to_be_visible(timeout=60_000)
