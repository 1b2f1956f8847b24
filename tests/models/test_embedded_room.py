"""`make llm` asks the disk first: the embedded LLM costs ~3.5 GB while it installs (a CI run once filled its disk
half-way through pip, and every test after it failed)."""
from __future__ import annotations

import shutil
import subprocess
import sys

from core.models.llm import embedded, embedded_room


def test_an_unassembled_model_needs_its_size_in_the_models_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERGRAPH_MODELS_DIR", str(tmp_path / "models"))
    assert not embedded.is_installed()
    assert embedded_room.room_needed()[tmp_path / "models"] >= embedded.MODEL_SIZE


def test_a_disk_without_room_is_named_with_what_it_lacks(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERGRAPH_MODELS_DIR", str(tmp_path / "not" / "yet" / "made"))
    free = shutil.disk_usage(tmp_path).free
    monkeypatch.setattr(embedded_room, "SPARE_BYTES", free + 1)  # whatever is free, it is one byte short
    problem = embedded_room.short_of_room()
    assert problem is not None and "needs" in problem and f"{free / 1e9:.1f} GB" in problem
    monkeypatch.setattr(embedded_room, "SPARE_BYTES", 0)
    if free > 3 * embedded_room.WHEEL_BYTES + embedded.MODEL_SIZE:
        assert embedded_room.short_of_room() is None


def test_the_command_exits_1_with_the_reason_when_short(tmp_path):
    script = ("import sys; from core.models.llm import embedded_room as r; r.SPARE_BYTES = 10**18; "
              "sys.exit(r.main())")
    env = {"PATH": "/usr/bin:/bin", "PAPERGRAPH_MODELS_DIR": str(tmp_path / "m"), "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1 and done.stdout.startswith("error: the embedded LLM needs")
