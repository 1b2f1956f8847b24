"""What an answer costs the researcher's browser: each element a rerun sends is a message the browser decodes and a
re-render of the page (bench/load_ask.py). The retrieval options are drawn only while open, outside the question's
form, and keep their values closed; they apply to the next question."""
from __future__ import annotations

import pytest

from tests.pages.app_helpers import ask, run_app

pytestmark = pytest.mark.slow  # each asks real questions through AppTest (10-30 s on a busy machine)

QUESTION = "What does the purple walrus hypothesis predict for coherent lattices?"
OPTION_KEYS = ("top_k", "chunk_top_k", "ent", "rel", "chk", "rerank", "bm25", "use_llm", "vlm_images", "papers")


def _elements(node) -> int:
    """Elements and blocks under `node` in AppTest's tree: one delta message each."""
    children = getattr(node, "children", None) or {}
    return sum(1 + _elements(child) for child in children.values())




def test_an_answer_sends_no_retrieval_option_while_they_are_closed(monkeypatch, ready_workspace):
    at = ask(run_app(monkeypatch, ready_workspace.root, "pages/ask.py"), QUESTION)
    assert at.session_state["ask_result"].answer is not None
    assert any(e.label.startswith("Retrieval options") for e in at.expander)
    widget_keys = {w.key for kind in ("number_input", "toggle", "multiselect") for w in at.get(kind)}
    assert not widget_keys & {f"ask_{k}" for k in OPTION_KEYS}, widget_keys
    # The page's main area after an answer: title, form, options, the answer, its sources' labels (~35). With the
    # options in the form it was ~55, each re-sent with every answer.
    assert _elements(at._tree[0]) <= 45, _elements(at._tree[0])


def test_retrieval_options_keep_their_values_closed_and_apply_to_the_next_question(monkeypatch, ready_workspace):
    at = run_app(monkeypatch, ready_workspace.root, "pages/ask.py")
    at.session_state["ask_options"] = True  # the expander opened
    at.run()
    assert at.number_input(key="ask_chunk_top_k").value > 1
    at.number_input(key="ask_chunk_top_k").set_value(1)
    at.session_state["ask_options"] = False  # closed again before asking
    at.run()
    assert not at.number_input
    ask(at, QUESTION)
    assert len(at.session_state["ask_result"].context.sources) == 1
    at.session_state["ask_options"] = True
    at.run()
    assert at.number_input(key="ask_chunk_top_k").value == 1


def test_compare_sends_no_retrieval_option_while_they_are_closed(monkeypatch, ready_workspace):
    at = run_app(monkeypatch, ready_workspace.root, "pages/compare.py")
    at.text_input(key="compare_question").input(QUESTION)
    at.multiselect(key="compare_modes").set_value(["naive", "mix"])
    at.button[0].click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert set(at.session_state["compare_results"]) == {"naive", "mix"}
    assert not at.number_input
