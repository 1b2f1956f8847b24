"""What a finished evaluation run exports, read from the shared five-mode run (tests/eval/conftest.py): the
results CSV, the run JSON and the leaderboard."""
from __future__ import annotations

import csv
import io
import json
import re

import pytest

from core.eval.report import leaderboard_rows, results_csv, run_json
from core.eval.runner import EvalOptions, run_eval
from core.schema.eval import DONE, QuestionResult
from tests.eval.eval_helpers import FIVE_MODES, NO_RAGAS


def test_results_csv_and_run_json_hold_every_row(full_run):
    _, store, qset, outcome, _ = full_run
    rows = list(csv.DictReader(io.StringIO(results_csv(outcome.results))))
    assert len(rows) == 25
    assert sorted((r["question_id"], r["mode"]) for r in rows) == sorted(
        (q.id, mode) for q in qset.questions for mode in FIVE_MODES)
    by_pair = {(r["question_id"], r["mode"]): r for r in rows}
    stored = {(r.question_id, r.mode): r for r in outcome.results}
    for pair, row in by_pair.items():
        assert row["answer"] == stored[pair].answer  # multi-line answers survive the CSV quoting
    assert float(by_pair[("books", "naive")]["recall@10"]) == 1.0
    assert by_pair[("noref", "naive")]["recall@10"] == ""
    assert by_pair[("noref", "naive")]["recall@10 (why missing)"] == "no reference passages"
    assert by_pair[("noref", "naive")]["em (why missing)"] == "no reference answer"

    data = json.loads(json.dumps(run_json(store, outcome.run)))
    assert data["run"]["id"] == outcome.run.id and data["run"]["status"] == DONE
    assert len(data["results"]) == 25 and data["pairwise"] == []
    assert [QuestionResult.from_dict(r) for r in data["results"]] == outcome.results
    assert data["summary"]["naive"]["recall@10"] == {"mean": pytest.approx(0.75), "n": 4, "missing": 1}


def test_the_leaderboard_has_a_row_per_run_and_mode(full_run):
    lib, store, qset, outcome, _ = full_run
    second = run_eval(lib, qset, EvalOptions(modes=["naive"], limit=1, **NO_RAGAS), label="naive, one", store=store)
    rows = leaderboard_rows(store, qset.id)
    # Runs are named by their label and start time, never by their hex id.
    assert sorted((r["run"].split(" · ")[0], r["mode"]) for r in rows) == sorted(
        [("five modes", mode) for mode in FIVE_MODES] + [("naive, one", "naive")])
    assert all(re.fullmatch(r".+ · \d{4}-\d\d-\d\d \d\d:\d\d", r["run"]) and r["run_id"] not in r["run"]
               for r in rows)
    by_key = {(r["run_id"], r["mode"]): r for r in rows}
    assert by_key[(outcome.run.id, "naive")]["questions"] == 5
    assert by_key[(outcome.run.id, "naive")]["recall@10"] == pytest.approx(0.75)
    assert by_key[(second.run.id, "naive")]["questions"] == 1
    assert by_key[(second.run.id, "naive")]["recall@10"] == 1.0  # only "books", found
    assert all(r["set"] == "papers" and r["status"] == DONE for r in rows)
