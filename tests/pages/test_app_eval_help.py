"""The Evaluate page explains itself: an example question set to download in JSONL and CSV (read back by the same
parser as an upload) with its fields explained, and under the per-mode table what each metric shown measures."""
from __future__ import annotations

import shutil
from dataclasses import fields

from core.eval.questions import parse_question_set
from core.eval.runner import EvalOptions, run_eval
from core.library import open_library
from core.presentation.eval_help import EXAMPLE_QUESTIONS, FIELDS, example_csv, example_jsonl, metric_glossary
from core.schema.eval import EvalQuestion
from core.settings.workspace import Workspace
from tests.pages.app_helpers import run_app, texts

PAGE = "pages/evaluate.py"


def test_the_example_sets_read_back_as_the_example_questions_and_every_field_is_explained():
    assert parse_question_set(example_jsonl(), "example.jsonl") == EXAMPLE_QUESTIONS
    assert parse_question_set(example_csv(), "example.csv") == EXAMPLE_QUESTIONS
    assert [name for name, _, _ in FIELDS] == [f.name for f in fields(EvalQuestion)]
    assert any(q.answers and q.evidence for q in EXAMPLE_QUESTIONS) and any(not q.answers for q in EXAMPLE_QUESTIONS)


def test_the_glossary_names_each_metric_family_once_in_the_tables_order():
    shown = ["em", "f1", "contains_reference", "recall@5", "recall@10", "complete@10", "mrr", "ndcg@10",
             "evidence_in_context", "faithfulness", "non_llm_context_recall", "bleu", "rouge", "seconds"]
    names = [name for name, _ in metric_glossary(shown)]
    assert names == ["em", "f1", "contains_reference", "recall@K", "complete@K", "mrr", "ndcg@K",
                     "evidence_in_context", "faithfulness", "non_llm_context_recall", "bleu", "rouge", "seconds"]
    assert all(text for _, text in metric_glossary(shown))


def test_the_question_sets_tab_offers_example_sets_and_explains_their_fields(monkeypatch, tmp_path):
    at = run_app(monkeypatch, tmp_path / "ws", PAGE)
    buttons = {b.proto.label: b for b in at.get("download_button")}
    assert {"Example set (JSONL)", "Example set (CSV)"} <= set(buttons)  # their files: the test above
    box = next(e for e in at.expander if e.label == "The fields of a question set")
    explained = box.markdown[0].value
    names = [line.split("`")[1] for line in explained.splitlines()]
    assert names == ["id", "question", "answers", "evidence", "doc_id"]
    assert "- `question` (required) — " in explained


def test_the_results_explain_every_metric_of_the_per_mode_table(monkeypatch, ready_workspace, tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(ready_workspace.root, root)  # the run is saved in the copy, not in the shared workspace
    lib = open_library(Workspace(root))
    qset = lib.eval_store.save_set("walrus", [EvalQuestion(
        "w", "What does the purple walrus hypothesis predict?", ["coherent lattices"],
        ["The purple walrus hypothesis predicts exactly this behaviour"])], source="test")
    run_eval(lib, qset, EvalOptions(modes=["naive"], ragas=False, ragas_judge=False))
    at = run_app(monkeypatch, root, PAGE)
    table = next(df.value for df in at.dataframe if "mrr" in getattr(df.value, "columns", []))
    box = next(e for e in at.expander if e.label == "What the metrics mean")
    explained = texts(box.markdown).replace("\\", "")
    for column in table.columns:
        family, _, k = column.partition("@")
        assert f"**{family}@K** — " in explained if k else f"**{family}** — " in explained, (column, explained)
    assert "Exact match" in explained and "mean reciprocal rank" in explained
