"""The app's warm-up: one throwaway question before the first real one, LLM-free and never saved."""
from __future__ import annotations

import time

from core.graph import mention_index as mi
from core.library import open_library
from core.presentation.display import ModelStatus
from core.query.history import UNKNOWN_OWNER, recent
from core.query.warmup import start_warm_up, warm_up, warming
from core.settings.workspace import Workspace


def test_warm_up_loads_what_a_question_needs_and_saves_nothing(ready_workspace):
    lib = open_library(Workspace(ready_workspace.root))
    before = [e.id for e in recent(lib, UNKNOWN_OWNER)]
    root = str(lib.workspace.root)
    for key in [k for k in mi._INDEXES if root in str(k)]:
        del mi._INDEXES[key]
    seconds = warm_up(lib)
    assert seconds > 0
    assert [e.id for e in recent(lib, UNKNOWN_OWNER)] == before  # the researcher's history holds only their questions
    assert any(root in str(k) for k in mi._INDEXES)  # the default mode walked the graph: its index is loaded


def test_warm_up_of_an_empty_workspace_does_nothing_and_never_raises(tmp_path):
    lib = open_library(Workspace(tmp_path / "empty"))
    assert warm_up(lib) == 0.0
    thread = start_warm_up(lib)
    thread.join(timeout=60)
    assert not thread.is_alive() and thread.daemon


def test_the_sidebar_says_the_model_loads_in_the_background_while_the_warm_up_runs(ready_workspace):
    lib = open_library(Workspace(ready_workspace.root))
    assert not warming(lib)
    thread = start_warm_up(lib)
    seen = False
    while thread.is_alive() and not seen:  # the warm-up asks a whole question: far longer than one poll
        seen = warming(lib)
        time.sleep(0.001)
    thread.join(timeout=120)
    assert seen and not warming(lib)
    states = {ModelStatus("m", False, warming=True).embedding_state, ModelStatus("m", False).embedding_state,
              ModelStatus("m", True, warming=True).embedding_state}
    assert states == {"loading in the background for the first question",
                      "not loaded yet (loads on first search or ingest)", "loaded"}
