"""Attack 1: a MinerU output folder holding symlinks must never bring a file from outside it into the workspace."""
import os

from core.library import open_library
from core.pipeline.parsing import import_mineru_output
from tests.security.helpers import CONTENT, cli, mineru_folder, snapshot, workspace


def test_cli_refuses_a_mineru_folder_holding_symlinks_and_changes_nothing(tmp_path):
    ws = workspace(tmp_path / "ws")
    open_library(ws)  # the workspace exists before the attack, as it would
    src = mineru_folder(tmp_path / "hostile", CONTENT)
    (src / "paper.md").unlink()
    os.symlink("/etc/passwd", src / "paper.md")
    os.symlink("/etc", src / "images" / "etc")
    before = snapshot(ws.root)

    out = cli(ws.root, "ingest", "--no-graph", str(src))

    assert out.returncode == 1, out.stdout + out.stderr
    assert "refused" in out.stderr and "the folder holds a symbolic link" in out.stderr, out.stderr
    assert "an import copies regular files only" in out.stderr and "Traceback" not in out.stderr
    assert snapshot(ws.root) == before  # no document folder, no staging leftover, no link
    assert open_library(ws).documents.list() == []
    assert not any(p.is_symlink() for p in ws.root.rglob("*"))


def test_importer_never_reads_a_linked_markdown_file(tmp_path):
    """The importer itself (run on a folder it was handed) skips links instead of following them."""
    src = mineru_folder(tmp_path / "hostile", CONTENT)
    (src / "paper.md").unlink()
    os.symlink("/etc/passwd", src / "paper.md")
    output = import_mineru_output(src, tmp_path / "out")
    assert "root:" not in output.markdown and "A Safe Paper About Lattices" in output.markdown
    assert not any("root:" in p.read_text(errors="replace") for p in (tmp_path / "out").rglob("*") if p.is_file())
