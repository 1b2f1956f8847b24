"""Fixtures of the evaluation-run tests: `workspace`, a real workspace (two generated papers and a distractor
paper, parsed by the builtin parser, embedded into Chroma, with their LLM-free graph), and `full_run`, every
question of tests/eval/eval_helpers.py through the five modes on it, LLM-free. Both are expensive, so they are
package-scoped: built once for every file of tests/eval that uses them, not once per file."""
from __future__ import annotations

import pytest

from core.eval.runner import EvalOptions, run_eval
from core.library import open_library
from core.settings.workspace import Workspace
from tests import graph_papers
from tests.eval.eval_helpers import FIVE_MODES, NO_RAGAS, make_questions
from tests.query.query_helpers import ingest as _ingest


@pytest.fixture(scope="package")
def workspace(tmp_path_factory) -> Workspace:
    root = tmp_path_factory.mktemp("eval-ws")
    ws = graph_papers.fast_workspace(root / "ws")
    _ingest(open_library(ws), root / "pdfs")
    return ws


@pytest.fixture(scope="package")
def full_run(workspace):
    """Every question through the five modes, LLM-free, without RAGAS: the run most tests of
    test_eval_runs.py, test_eval_reports.py and test_eval_store.py read."""
    lib = open_library(Workspace(workspace.root))
    store = lib.eval_store
    qset = store.save_set("papers", make_questions(lib), source="test")
    progress = []
    outcome = run_eval(lib, qset, EvalOptions(modes=FIVE_MODES, **NO_RAGAS), on_progress=progress.append,
                       label="five modes", store=store)
    return lib, store, qset, outcome, progress
