"""The Evaluate page in a real browser: `streamlit run app.py` over a real workspace (builtin parser, LLM-free
graph), in Debian's Chromium through Playwright. A question set with bad rows is refused row by row and nothing
is saved; a good one (holding a hostile question) is saved, run through two modes from the page, and its
per-mode table, charts and drill-down appear, with the hostile text shown as text and no dialog ever opened.

Skipped when Chromium is missing. A screenshot is saved in the test's tmp dir when anything fails.
"""
from __future__ import annotations

import json

import pytest

from core.library import open_library
from tests.graph_papers import fast_workspace, make_bert_pdf
from tests.pages.test_browser import CHROMIUM, browser_page, serve_app
from tests.presentation.explorer_helpers import ingest

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)")

HOSTILE = "Does <img src=x onerror=alert(3)> beat BERT?"
GOOD_ROWS = [
    {"id": "mnli", "question": "What accuracy does BERT reach on MultiNLI?", "answers": ["86.7"],
     "evidence": ["BERT reaches an accuracy of 86.7 on MultiNLI and improves the GLUE score by seven points."]},
    {"id": "hostile", "question": HOSTILE, "answers": ["<script>alert(4)</script>"]},
]


@pytest.mark.slow
def test_upload_a_question_set_run_it_and_read_the_scores(tmp_path):
    from playwright.sync_api import expect

    root = tmp_path / "ws"
    lib = open_library(fast_workspace(root))
    ingest(lib, make_bert_pdf(tmp_path))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "fine?", "answers": ["yes"]}\n{"question": ""}\nnot json\n'
                   '{"question": "x", "answers": {"a": 1}}\n')
    good = tmp_path / "bert-questions.jsonl"
    good.write_text("".join(json.dumps(r) + "\n" for r in GOOD_ROWS))
    shot = tmp_path / "failure.png"
    dialogs: list[str] = []
    with serve_app(root, tmp_path / "streamlit.log") as url, browser_page(shot) as page:
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(f"{url}/evaluate")
        expect(page.get_by_role("heading", name="Evaluate")).to_be_visible(timeout=60_000)
        expect(page.get_by_text("No LLM is set").first).to_be_visible(timeout=30_000)

        uploader = page.locator('input[type="file"]').first
        uploader.set_input_files(str(bad))
        expect(page.get_by_text("bad.jsonl").first).to_be_visible(timeout=30_000)
        page.get_by_role("button", name="Add the question set").click()
        expect(page.get_by_text("Nothing was saved").first).to_be_visible(timeout=30_000)
        assert lib.eval_store.sets() == []

        uploader.set_input_files(str(good))
        expect(page.get_by_text("bert-questions.jsonl").first).to_be_visible(timeout=30_000)
        page.wait_for_timeout(1000)  # the upload must reach the server before the form is submitted
        page.get_by_role("button", name="Add the question set").click()
        expect(page.get_by_text("2 questions").first).to_be_visible(timeout=30_000)
        assert [len(s.questions) for s in lib.eval_store.sets()] == [2]

        page.get_by_role("tab", name="Run").click()
        page.get_by_role("button", name="Start the run").click()
        page.get_by_role("tab", name="Results").click()
        # The Results tab's caption ("… answers scored · done"), not the Run tab's hidden notice of the same run.
        expect(page.get_by_text("10 of 10 answers scored ·").first).to_be_visible(timeout=180_000)
        expect(page.get_by_role("heading", name="Per mode")).to_be_visible()
        expect(page.get_by_test_id("stVegaLiteChart").first).to_be_visible(timeout=30_000)

        page.get_by_test_id("stSelectbox").filter(has=page.get_by_text("Question", exact=True)).click()
        page.keyboard.type("hostile")
        page.keyboard.press("Enter")
        expect(page.get_by_text(HOSTILE).first).to_be_visible(timeout=30_000)
        expect(page.get_by_text("<script>alert(4)</script>").first).to_be_visible()
        assert page.locator("img[src='x']").count() == 0
        assert not dialogs, dialogs
