"""`python -m core eval` over the shared eval workspace (tests/eval/conftest.py): the table it prints, the run it
writes for the Evaluate page, and the inputs it refuses with exit 2."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli import main as cli_main
from core.eval.questions import questions_to_jsonl
from core.library import open_library
from core.schema.eval import DONE
from core.settings.workspace import Workspace
from tests.eval.eval_helpers import make_questions
from tests.paths import REPO


def test_cli_eval_refuses_k_below_one_with_exit_2(workspace, tmp_path, monkeypatch, capsys):
    qfile = tmp_path / "qa.jsonl"
    qfile.write_text(json.dumps({"question": "Which dataset is BERT pre-trained on?", "answers": ["BooksCorpus"],
                                 "evidence": ["BooksCorpus"]}) + "\n", encoding="utf-8")
    monkeypatch.setenv("PAPERGRAPH_WORKSPACE", str(workspace.root))
    code = cli_main(["eval", str(qfile), "--modes", "naive", "--k", "0", "--no-ragas", "--no-judge", "-q"])
    err = capsys.readouterr().err
    assert code == 2 and "error: k (of Recall@k, complete@k, NDCG@k) must be at least 1 (got 0)\n" in err, err


def run_cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PAPERGRAPH_WORKSPACE": str(root)}
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=240)


@pytest.mark.slow
def test_cli_eval_prints_a_row_per_mode_and_writes_the_run(workspace, tmp_path):
    lib = open_library(Workspace(workspace.root))
    questions = [q for q in make_questions(lib) if q.id in ("books", "nowhere")]
    qfile = tmp_path / "qa.jsonl"
    qfile.write_text(questions_to_jsonl(questions), encoding="utf-8")
    out = tmp_path / "out.json"
    done = run_cli(workspace.root, "eval", str(qfile), "--modes", "naive,mix", "--no-ragas", "--no-judge",
                   "--out", str(out), "--label", "from the CLI")
    assert done.returncode == 0, done.stderr
    table = [line for line in done.stdout.splitlines() if line.startswith("|")]
    assert table[0].startswith("| mode | em | f1 |") and [line.split("|")[1].strip() for line in table[2:]] == [
        "naive", "mix"]
    data = json.loads(out.read_text(encoding="utf-8"))
    assert set(data["summary"]) == {"naive", "mix"} and data["run"]["status"] == DONE
    assert sorted((r["question_id"], r["mode"]) for r in data["results"]) == [
        ("books", "mix"), ("books", "naive"), ("nowhere", "mix"), ("nowhere", "naive")]
    # naive: books found (1), nowhere not (0) → recall@10 mean 0.5, as the table says.
    assert data["summary"]["naive"]["recall@10"]["mean"] == 0.5
    assert "| naive | " in done.stdout and " 0.500 " in table[2]
    # The run is in the workspace, under the file's name, for the Evaluate page.
    store = lib.eval_store
    (run,) = [r for r in store.runs() if r.label == "from the CLI"]
    assert run.set_name == "qa" and run.id == data["run"]["id"] and len(store.results(run.id)) == 4


@pytest.mark.slow
def test_cli_eval_refuses_bad_rows_and_unknown_modes_with_exit_2(workspace, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"question": "Fine?", "answers": ["x"]}) + "\n{not json\n", encoding="utf-8")
    refused = run_cli(workspace.root, "eval", str(bad), "--modes", "naive", "--no-ragas", "--no-judge")
    assert refused.returncode == 2 and "row 2: not valid JSON" in refused.stderr and refused.stdout == ""
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"question": "Fine?", "answers": ["x"]}) + "\n", encoding="utf-8")
    unknown = run_cli(workspace.root, "eval", str(good), "--modes", "naive,bogus", "--no-ragas", "--no-judge")
    assert unknown.returncode == 2 and "unknown mode(s) bogus" in unknown.stderr
    missing = run_cli(workspace.root, "eval", str(tmp_path / "absent.jsonl"), "--no-ragas", "--no-judge")
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    empty_ws = run_cli(tmp_path / "empty-ws", "eval", str(good), "--modes", "naive", "--no-ragas", "--no-judge")
    assert empty_ws.returncode == 2 and "no workspace at" in empty_ws.stderr  # and none was made for the question
    assert not (tmp_path / "empty-ws").exists()
