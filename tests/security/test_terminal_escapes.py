"""Attack 3: paper titles, messages and passages holding terminal escape sequences are printed by the CLI without
them (a title could retitle the window, clear the screen or forge lines); --json stays JSON."""
import json

import pytest

from core.library import open_library
from core.schema.records import DocStatus, Document
from core.text.terminal import for_terminal
from tests.security.helpers import cli, mineru_folder, snapshot, workspace

HOSTILE_TITLE = "\x1b]0;pwned\x07Evil\x1b[2J Title\x9b31m\x1b[3J"
SEEN_TITLE = "Evil Title"
_CONTROL = [chr(c) for c in range(0x20) if chr(c) not in "\n\t"] + [chr(c) for c in range(0x7f, 0xa0)]


def _clean(text: str) -> bool:
    return not any(c in text for c in _CONTROL)


def test_cli_docs_prints_titles_without_escape_sequences(tmp_path):
    ws = workspace(tmp_path / "ws")
    lib = open_library(ws)
    lib.documents.insert(Document(id="e" * 64, filename="evil\x1b[2J.pdf", size_bytes=1))
    lib.documents.set_status("e" * 64, DocStatus.PARSING)
    lib.documents.set_status("e" * 64, DocStatus.FAILED, "bad\x1b]8;;http://evil.example\x07link\nready  fake",
                             title=HOSTILE_TITLE)
    before = snapshot(ws.root)

    out = cli(ws.root, "docs")

    assert out.returncode == 0 and _clean(out.stdout), repr(out.stdout)
    assert f"{SEEN_TITLE} — badlink ready  fake" in out.stdout, repr(out.stdout)  # one line: no forged line
    assert len(out.stdout.splitlines()) == 1
    shown = json.loads(cli(ws.root, "docs", "--json").stdout)
    assert shown[0]["title"] == HOSTILE_TITLE  # JSON keeps the data, escaped by JSON itself
    assert snapshot(ws.root) == before


def test_for_terminal_keeps_text_and_layout():
    assert for_terminal("a\tb\nc\x1b[1;31md\x1b[0m\u202eevil\x00") == "a\tb\ncdevil"
    assert for_terminal("line\none", one_line=True) == "line one"
    assert for_terminal("lone \ud800") == "lone \ufffd"


@pytest.mark.slow
def test_cli_ingest_search_and_ask_print_paper_text_without_escape_sequences(tmp_path):
    ws = workspace(tmp_path / "ws")
    content = [{"type": "text", "text": HOSTILE_TITLE, "text_level": 1, "page_idx": 0},
               {"type": "text", "text": "Okapi lattices \x1b]0;retitled\x07converge \x1b[2Jquickly in the heliotrope "
                                        "solver.", "page_idx": 0}]
    src = mineru_folder(tmp_path / "paper", content)

    outputs = [cli(ws.root, "ingest", "--no-graph", str(src)),
               cli(ws.root, "search", "okapi lattices heliotrope solver"),
               cli(ws.root, "ask", "--no-llm", "How do okapi lattices converge?")]

    for out in outputs:
        assert out.returncode == 0, out.stdout + out.stderr
        assert _clean(out.stdout) and _clean(out.stderr), repr(out.stdout + out.stderr)
    assert "ready     " in outputs[0].stdout and SEEN_TITLE in outputs[0].stdout
    assert SEEN_TITLE in outputs[1].stdout and "Okapi lattices converge quickly" in outputs[1].stdout
    assert "converge" in outputs[2].stdout
