"""A worker process spawned by the app must not run the app: Streamlit leaves app.py in sys.modules["__main__"]
after a run, and multiprocessing's spawn imports the parent's main script again in every new worker."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.paths import REPO

SPAWN_AFTER_A_RUN = textwrap.dedent("""
    import multiprocessing, os, sys, types
    from concurrent.futures import ProcessPoolExecutor

    fake = types.ModuleType("__main__")
    fake.__dict__["__file__"] = os.path.abspath("app.py")
    sys.modules["__main__"] = fake  # as Streamlit's ScriptRunner leaves it
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        print("worker", pool.submit(os.getpid).result())
""")


@pytest.mark.slow
def test_a_worker_spawned_after_a_run_does_not_open_the_workspace(tmp_path):
    workspace = tmp_path / "workspace"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PAPERGRAPH_WORKSPACE": str(workspace),
           "PAPERGRAPH_CONFIG_DIR": str(tmp_path / "config")}
    done = subprocess.run([sys.executable, "-c", SPAWN_AFTER_A_RUN], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("worker ")
    assert not workspace.exists()  # unguarded, the worker ran app.py: it opened (created) the workspace
    assert "ScriptRunContext" not in done.stderr  # nor called Streamlit in bare mode
