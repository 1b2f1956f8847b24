"""The Compare page through AppTest over the session's real workspace (MinerU parse, Chroma, SQLite, the embedding
model and its LLM-free graph): every available mode at once opens on a summary table, one row per mode, and the
modes' details in one tab each (only the open one drawn); a few modes stay side by side."""
from __future__ import annotations

from dataclasses import replace

import pytest

from core.library import open_library
from core.presentation.compare import confidence_text, first_words
from core.query.routes import available_modes
from core.settings.workspace import Workspace
from tests.pages.app_helpers import run_app, texts

QUESTION = "What does the purple walrus hypothesis predict for coherent lattices?"
SUMMARY_COLUMNS = ["mode", "answer", "confidence", "latency (s)", "LLM calls", "cached calls", "tokens", "sources",
                   "cited"]


def _compare(at, modes: list[str]):
    at.text_input(key="compare_question").input(QUESTION)
    at.multiselect(key="compare_modes").set_value(modes)
    next(b for b in at.button if b.label == "Compare").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.slow
def test_comparing_every_mode_opens_on_a_summary_table_and_one_tab_per_mode(monkeypatch, ready_workspace):
    modes = [str(m) for m in available_modes(open_library(Workspace(ready_workspace.root)))]
    assert len(modes) >= 6, modes  # naive, local, global, hybrid, mix, ppr (+ community once reports exist)
    at = _compare(run_app(monkeypatch, ready_workspace.root, "pages/compare.py"), modes)

    table = at.dataframe[0].value
    assert list(table.columns) == SUMMARY_COLUMNS
    assert list(table["mode"]) == modes
    assert table["answer"].map(bool).all() and (table["latency (s)"] >= 0).all()
    assert (table["LLM calls"] == 0).all() and (table["sources"] > 0).all()  # no LLM set: LLM-free everywhere

    assert [t.label for t in at.tabs] == modes
    md = texts(at.markdown)
    assert f"### {modes[0]}" in md  # the open tab is drawn ...
    assert not any(f"### {m}" in md for m in modes[1:])  # ... the others only once opened


@pytest.mark.slow
def test_comparing_three_modes_keeps_them_side_by_side_under_the_summary(monkeypatch, ready_workspace):
    at = _compare(run_app(monkeypatch, ready_workspace.root, "pages/compare.py"), ["naive", "local", "mix"])
    assert list(at.dataframe[0].value["mode"]) == ["naive", "local", "mix"]
    assert not at.tabs
    md = texts(at.markdown)
    assert all(f"### {m}" in md for m in ("naive", "local", "mix"))


def test_a_summary_cell_holds_the_first_words_without_citation_markers():
    assert first_words("The walrus [1] predicts lattices [2, 3].", limit=12) == "The walrus predicts lattices."
    assert first_words(" ".join(f"w{i}" for i in range(20)), limit=3) == "w0 w1 w2 …"
    assert first_words("") == ""


def test_the_summary_shows_each_modes_answer_confidence_as_a_percentage(monkeypatch, ready_workspace):
    at = _compare(run_app(monkeypatch, ready_workspace.root, "pages/compare.py"), ["naive", "mix"])
    table = at.dataframe[0].value
    assert list(table.columns) == SUMMARY_COLUMNS
    results = at.session_state["compare_results"]
    for mode, shown in zip(table["mode"], table["confidence"]):
        confidence = results[mode].answer.confidence
        assert shown == ("–" if confidence is None else f"{round(confidence * 100)}%"), (mode, shown, confidence)
    # Whatever the reader states: a float in 0–1 as a percentage, anything else (none, not a number) as "–".
    result = results["naive"]
    for confidence, text in ((0.834, "83%"), (0.0, "0%"), (1.0, "100%"), (None, "–"), (float("nan"), "–")):
        assert confidence_text(replace(result, answer=replace(result.answer, confidence=confidence))) == text
    assert confidence_text(replace(result, answer=None)) == "–"  # context only
