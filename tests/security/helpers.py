"""What the security tests share: a fast workspace, the CLI as a subprocess, and a snapshot of a workspace's
files so a test can say "nothing else changed"."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from core.settings.workspace import Workspace
from tests import graph_papers
from tests.paths import REPO

# Written by opening the stores (SQLite journal, Chroma's files, the graph's lock): not what an attack changes.
_VOLATILE = ("papergraph.sqlite", "chroma", "graph.lock")


def workspace(root: Path, **llm) -> Workspace:
    return graph_papers.fast_workspace(root, **llm)


def cli(ws: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(ws))
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)


def snapshot(root: Path) -> dict[str, str]:
    """relative path → sha256 (or "dir" / "link -> target") of everything under `root` but the stores."""
    out = {}
    for path in sorted(Path(root).rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.split("/")[0].startswith(_VOLATILE):
            continue
        if path.is_symlink():
            out[rel] = f"link -> {os.readlink(path)}"
        elif path.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def mineru_folder(root: Path, content: list | str, markdown: str = "# Title\n\nBody.\n") -> Path:
    """A MinerU output folder as MinerU writes it: <name>_content_list.json, <name>.md, images/."""
    root.mkdir(parents=True)
    (root / "images").mkdir()
    text = content if isinstance(content, str) else json.dumps(content)
    (root / "paper_content_list.json").write_text(text, encoding="utf-8")
    (root / "paper.md").write_text(markdown, encoding="utf-8")
    return root


CONTENT = [{"type": "text", "text": "A Safe Paper About Lattices", "text_level": 1, "page_idx": 0},
           {"type": "text", "text": "The body of the paper talks about lattices and solvers.", "page_idx": 0}]
