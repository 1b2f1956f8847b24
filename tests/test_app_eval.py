"""The Evaluate page through AppTest over a real workspace (builtin parser, Chroma, SQLite, the embedding model,
the LLM-free graph): a run started from the page goes on in the background, its progress shows, it can be
cancelled and resumed, and its per-mode table, charts and drill-down are drawn from what was really scored."""
from __future__ import annotations

import time

import pytest

from core.eval.records import EvalQuestion
from core.eval.store import EvalStore
from core.library import open_library
from tests.graph_papers import fast_workspace, make_bert_pdf, make_roberta_pdf
from tests.test_app_pages import run_app, texts
from tests.test_graph_explorer import ingest

QUESTIONS = [
    EvalQuestion("mnli", "What accuracy does BERT reach on MultiNLI?", ["86.7"],
                 ["BERT reaches an accuracy of 86.7 on MultiNLI and improves the GLUE score by seven points."]),
    EvalQuestion("corpus", "Which dataset is BERT pre-trained on?", ["the BooksCorpus dataset"],
                 ["BERT is pre-trained with a masked language model objective on the BooksCorpus dataset."]),
    EvalQuestion("absent", "Which telescope observed the comet?", ["Hubble"],
                 ["The Hubble telescope observed the comet in 1994."]),  # evidence that is in no paper
    EvalQuestion("noref", "What does RoBERTa change in BERT's pre-training?", []),  # no reference at all
]


@pytest.fixture(scope="module")
def eval_ws(tmp_path_factory):
    folder = tmp_path_factory.mktemp("eval-pdfs")
    root = tmp_path_factory.mktemp("eval-app") / "ws"
    lib = open_library(fast_workspace(root))
    ingest(lib, make_bert_pdf(folder), make_roberta_pdf(folder))
    return root, lib


def _wait(store: EvalStore, run_id: str, status: str = "done", timeout: float = 180):
    deadline = time.time() + timeout
    while time.time() < deadline:
        run = store.get_run(run_id)
        if run.status == status:
            return run
        time.sleep(0.3)
    raise AssertionError(f"run {run_id} is {store.get_run(run_id).status}, not {status}, after {timeout} s")


def _start(at, modes):
    at.multiselect(key="eval_run_modes").set_value(modes)
    next(b for b in at.button if b.label == "Start the run").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at.session_state["eval_run_id"]


def test_a_run_started_on_the_page_scores_every_mode_and_shows_the_table(monkeypatch, eval_ws):
    root, lib = eval_ws
    store = EvalStore(lib.db)
    store.save_set("bert questions", QUESTIONS, source="test")
    at = run_app(monkeypatch, root, "views/evaluate.py")
    assert "No LLM is set" in texts(at.info)
    run_id = _start(at, ["naive", "mix"])
    run = _wait(store, run_id)
    assert (run.done, run.total) == (8, 8)
    at.run()
    assert not at.exception, [e.value for e in at.exception]

    table = next(df.value for df in at.dataframe if "recall@10" in getattr(df.value, "columns", []))
    assert list(table.index) == ["naive", "mix"]
    # Both found questions have their evidence in the top 10 of both modes, the absent one never: 2 of 3.
    assert table.loc["naive", "recall@10"] == pytest.approx(2 / 3)
    assert table.loc["mix", "complete@10"] == pytest.approx(2 / 3)
    assert {"em", "f1", "mrr", "ndcg@10", "evidence_in_context", "bleu", "rouge", "string_similarity",
            "non_llm_context_recall", "seconds"} <= set(table.columns)
    assert "faithfulness" not in table.columns  # no judge: the judged metrics are absent, never 0
    # The question without a reference is left out of EM's mean and said so.
    assert "em: 1 of 4" in texts(at.caption).replace("\\", "")
    # Drill-down: the first question's answers per mode, with their scores and contexts.
    assert "What accuracy does BERT reach on MultiNLI?" in texts(at.markdown)
    assert any(e.label.startswith("Contexts (") for e in at.expander)
    assert len(at.get("download_button")) >= 2  # CSV and JSON of the run

    # The leaderboard lists the run once per mode.
    board = next(df.value for df in at.dataframe if "run" in getattr(df.value, "columns", [])
                 and "status" in df.value.columns)
    assert sorted(board[board["run"] == run_id]["mode"]) == ["mix", "naive"]


def test_cancel_from_the_page_keeps_what_was_scored_and_resume_finishes(monkeypatch, eval_ws):
    root, lib = eval_ws
    store = EvalStore(lib.db)
    many = [EvalQuestion(f"q{i}", f"What does BERT report on benchmark number {i}?", ["GLUE"],
                         ["BERT obtains new state-of-the-art results on the GLUE benchmark."]) for i in range(20)]
    store.save_set("twenty questions", many, source="test")
    at = run_app(monkeypatch, root, "views/evaluate.py")
    run_id = _start(at, ["naive", "local", "global", "hybrid", "mix"])
    at.run()
    assert any(p.proto.text.startswith(run_id) or run_id in p.proto.text for p in at.get("progress"))
    at.button(key=f"eval_cancel_{run_id}").click()
    at.run()
    run = _wait(store, run_id, "cancelled")
    kept = len(store.results(run_id))
    assert 0 < kept < 100 and run.done == kept

    at.run()
    at.selectbox(key="eval_results_run").set_value(run)
    at.run()
    next(b for b in at.button if b.label == "Resume this run").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    run = _wait(store, run_id)
    results = store.results(run_id)
    assert run.done == len(results) == 100  # each question × mode once: nothing scored twice
    assert len({(r.question_id, r.mode) for r in results}) == 100

