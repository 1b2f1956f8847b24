"""The layers of core/ (docs/architecture.md): import-linter's contracts in pyproject.toml hold on the code as it
is, and an import that points up — or at Streamlit, or across the two wings — breaks them. Also: no module of
core/ or pages/, and no test file, over 400 lines."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.paths import REPO

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
MAX_LINES = 400


def _lint(root: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(root))
    return subprocess.run([str(LINT_IMPORTS), "--config", str(root / "pyproject.toml"), "--no-cache"], cwd=root,
                          env=env, capture_output=True, text=True, timeout=300)


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(REPO / "core", root / "core", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def _lint_with(tmp_path: Path, module: str, added: str) -> subprocess.CompletedProcess:
    """lint-imports on a copy of core/ whose `module` (a path under core/) has `added` appended: a deliberate
    violation."""
    root = _copy(tmp_path)
    path = root / "core" / module
    path.write_text(path.read_text() + "\n\n" + added + "\n")
    return _lint(root)


def test_the_layer_contracts_hold_and_an_upward_import_breaks_them(tmp_path):
    root = _copy(tmp_path)
    kept = _lint(root)
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert "Contracts: 5 kept, 0 broken." in kept.stdout

    broken = _lint_with(tmp_path / "broken", "schema/records.py",
                        "def _upward():\n    from core.query import engine  # noqa")
    assert broken.returncode == 1
    assert "core.schema is not allowed to import core.query" in broken.stdout
    assert "core.schema.records -> core.query.engine" in broken.stdout


def test_the_read_side_and_the_write_side_are_independent(tmp_path):
    """core.query and core.pipeline share a layer: neither imports the other, either way round."""
    broken = _lint_with(tmp_path, "query/reading/extractive.py",
                        "def _write_side():\n    from core.pipeline import chunking  # noqa")
    assert broken.returncode == 1
    assert "core.query is not allowed to import core.pipeline" in broken.stdout
    assert "core.query.reading.extractive -> core.pipeline.chunking" in broken.stdout

    broken = _lint_with(tmp_path / "again", "pipeline/ingest.py",
                        "def _read_side():\n    from core.query import engine  # noqa")
    assert broken.returncode == 1 and "core.pipeline is not allowed to import core.query" in broken.stdout


def test_presentation_never_imports_the_write_side(tmp_path):
    broken = _lint_with(tmp_path, "presentation/gallery.py", "from core.pipeline import chunking  # noqa")
    assert broken.returncode == 1
    assert "core.presentation never imports the write side (core.pipeline) BROKEN" in broken.stdout


def test_the_remote_faces_reach_the_workspace_through_the_service_only(tmp_path):
    broken = _lint_with(tmp_path, "api/rest.py", "from core.query import engine  # noqa")
    assert broken.returncode == 1
    assert "core.api reaches the workspace through core.service only BROKEN" in broken.stdout
    assert "core.api.rest -> core.query.engine" in broken.stdout


def test_core_never_imports_streamlit(tmp_path):
    broken = _lint_with(tmp_path, "query/search.py", "import streamlit  # noqa")
    assert broken.returncode == 1 and "core never imports Streamlit" in broken.stdout


def test_only_the_library_imports_a_store_backend(tmp_path):
    broken = _lint_with(tmp_path, "pipeline/gc.py",
                        "from core.store.sqlite_media import SQLiteDescriptionStore  # noqa")
    assert broken.returncode == 1
    assert "only core.library (and core.store) import the store backends BROKEN" in broken.stdout
    assert "core.pipeline.gc -> core.store.sqlite_media" in broken.stdout


def test_the_store_contract_lists_every_backend_and_every_package_of_core():
    """import-linter's wildcards replace whole module names only, so the contract lists its modules: a new backend
    file or a new package of core must be added to it, or it would be outside the contract unnoticed."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"]
                   if c["id"] == "store-backends-behind-the-library"]
    backends = {f"core.store.{p.stem}" for p in (REPO / "core" / "store").glob("*.py")
                if p.stem.startswith(("sqlite_", "chroma_", "neo4j_"))}
    assert set(contract["forbidden_modules"]) == backends
    packages = {f"core.{p.stem}" for p in (REPO / "core").iterdir()
                if (p.suffix == ".py" or (p / "__init__.py").exists()) and p.stem != "__init__"}
    assert set(contract["source_modules"]) == packages - {"core.library", "core.store"}


def test_no_module_of_core_or_pages_and_no_test_file_is_over_400_lines():
    long = {str(p.relative_to(REPO)): n for folder in ("core", "pages", "tests") for p in (REPO / folder).rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}, f"split these by concern: {long}"
