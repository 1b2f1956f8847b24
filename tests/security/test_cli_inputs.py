"""Issue 26, the command line: links in a folder are never followed, arguments that are not text are refused with
the byte that is wrong, a reader that goes away ends the command quietly, a zip whose entries clash is named, and
a command that only reads never creates a workspace."""
import json
import os
import signal
import subprocess
import sys
import zipfile

from core.library import open_library
from core.pipeline.documents import add_document, add_mineru_output
from core.pipeline.ingest import process_queue
from core.schema.records import DocStatus
from tests.paths import REPO
from tests.security.helpers import CONTENT, cli, snapshot, workspace

SECRET = "SECRET-CREDENTIAL-do-not-index-7731"


def test_ingesting_a_folder_skips_linked_files_and_linked_folders_and_says_why(tmp_path):
    ws = workspace(tmp_path / "ws")
    outside = tmp_path / "outside"
    (outside / "keys").mkdir(parents=True)
    (outside / "credentials.txt").write_text(f"api_key = {SECRET}\n", encoding="utf-8")
    (outside / "keys" / "more.txt").write_text(f"token = {SECRET}\n", encoding="utf-8")
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "notes.txt").write_text("A short note about lattices and the solvers that use them.\n", encoding="utf-8")
    os.symlink("/etc/passwd", folder / "passwd.txt")
    os.symlink(outside / "credentials.txt", folder / "credentials.txt")
    os.symlink(outside / "keys", folder / "keys")

    out = cli(ws.root, "ingest", "--no-graph", "-q", str(folder))

    assert out.returncode == 0, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    for name in ("passwd.txt", "credentials.txt", "keys"):
        assert f"skipped   {folder / name}: a symbolic link" in out.stderr, out.stderr
    assert "links in a folder are not followed" in out.stderr
    lib = open_library(ws)
    assert [d.filename for d in lib.documents.list()] == ["notes.txt"]
    stored = " ".join(p.read_text(errors="replace") for p in ws.root.rglob("*") if p.is_file() and
                      p.suffix in (".txt", ".md", ".json"))
    assert SECRET not in stored and "root:x:0" not in stored


def _no_traceback(out: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in out.stderr and "Error:" not in out.stderr.replace("error:", ""), out.stderr


def test_search_with_a_lone_surrogate_is_refused_with_the_byte(tmp_path):
    lib = open_library(workspace(tmp_path / "ws"))
    add_document(lib, "note.txt", b"Lattices are searched by solvers.\n")
    process_queue(lib)

    out = cli(lib.workspace.root, "search", "lattice \udcff")

    assert out.returncode == 2, out.stdout + out.stderr
    assert "the query argument is not valid UTF-8 text: byte 0xff at character 9" in out.stderr
    _no_traceback(out)


def test_ask_with_invalid_utf8_bytes_is_refused_with_the_byte(tmp_path):
    ws = workspace(tmp_path / "ws")
    open_library(ws)
    env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(ws.root))
    out = subprocess.run([sys.executable, "-m", "core", "ask", b"which solver\xc3(", "--no-llm"], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=300)

    assert out.returncode == 2, out.stdout + out.stderr
    assert "the question argument is not valid UTF-8 text: byte 0xc3 at character 13" in out.stderr
    _no_traceback(out)


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path):
    """`python -m core settings presets | head -0`: the pipe is closed before the command writes a line."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(tmp_path / "ws"))
    out = subprocess.run([sys.executable, "-m", "core", "settings", "presets"], cwd=REPO, env=env, stdout=write_end,
                         stderr=subprocess.PIPE, text=True, timeout=300)
    os.close(write_end)

    assert out.stderr == ""
    assert out.returncode == 128 + signal.SIGPIPE


def test_zip_holding_a_file_and_a_folder_of_one_name_fails_with_a_specific_message(tmp_path):
    lib = open_library(workspace(tmp_path / "ws"))
    archive = tmp_path / "clash.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("paper_content_list.json", json.dumps(CONTENT))
        zf.writestr("images", b"not a folder")
        zf.writestr("images/x.jpg", b"\xff\xd8\xff")

    add_mineru_output(lib, archive)
    (doc,) = process_queue(lib)

    assert doc.status == DocStatus.FAILED
    assert doc.message == ("the archive holds both a file 'images' and a folder of that name (with 'images/x.jpg'); "
                           "a folder cannot hold both: rename one of them and zip it again")


def test_docs_without_a_workspace_says_so_and_creates_nothing(tmp_path):
    missing = tmp_path / "never-made"
    out = cli(missing, "docs")
    assert out.returncode == 0, out.stderr
    assert f"no workspace at {missing} yet" in out.stderr
    assert not missing.exists()
    for command in (["search", "x"], ["gc"], ["graph", "stats"], ["delete", "3f2a"]):
        out = cli(missing, *command)
        assert out.returncode == 2 and "no workspace at" in out.stderr, (command, out.stderr)
        assert not missing.exists(), command
    out = cli(missing, "settings", "show")  # the defaults, read: nothing written
    assert out.returncode == 0 and '"backend": "mineru"' in out.stdout, out.stderr
    assert snapshot(tmp_path) == {}


def test_zip_holding_a_symbolic_link_is_still_refused(tmp_path):
    """Zips and MinerU folders already refused links (test_import_links.py for folders); the zip, kept here."""
    lib = open_library(workspace(tmp_path / "ws"))
    archive = tmp_path / "linked.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("paper_content_list.json", json.dumps(CONTENT))
        link = zipfile.ZipInfo("images/passwd.jpg")
        link.external_attr = 0o120777 << 16  # S_IFLNK: unpacked by some tools as a link to its content
        zf.writestr(link, "/etc/passwd")

    add_mineru_output(lib, archive)
    (doc,) = process_queue(lib)

    assert doc.status == DocStatus.FAILED
    assert doc.message == ("the archive holds an unsafe entry 'images/passwd.jpg' (it is a symbolic link); "
                           "refusing to import")
