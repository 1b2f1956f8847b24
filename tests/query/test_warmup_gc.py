"""The app's warm-up freezes what it loaded: Streamlit collects garbage after every script run, and walking the
models' and stores' objects each time cost more CPU than the answer (core/query/warmup.py)."""
from __future__ import annotations

import gc

import pytest

from core.library import open_library
from core.query.warmup import start_warm_up, warm_up_and_freeze
from core.settings.workspace import Workspace


@pytest.mark.slow
def test_after_the_warm_up_a_full_collection_skips_the_loaded_models(ready_workspace):
    lib = open_library(Workspace(ready_workspace.root))
    gc.unfreeze()
    try:
        thread = start_warm_up(lib)
        thread.join(timeout=300)
        assert not thread.is_alive()
        frozen = gc.get_freeze_count()
        assert frozen > 100_000  # the embedding model, spaCy, Chroma's client: far more than a run creates
        tracked = sum(gc.get_count()) + len(gc.get_objects())
        assert tracked < frozen / 4  # what a post-run collection still walks
    finally:
        gc.unfreeze()


def test_an_empty_workspace_freezes_nothing(tmp_path):
    gc.unfreeze()
    assert warm_up_and_freeze(open_library(Workspace(tmp_path / "empty"))) == 0.0
    assert gc.get_freeze_count() == 0
