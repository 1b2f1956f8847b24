"""Attack 4: hostile PDFs, content lists and question sets end in a specific message, never "internal error" or
a traceback, and leave nothing behind but the document's own row and upload."""
import json

import pytest

from core.eval.questions import MAX_SET_CHARS, QuestionSetError, parse_question_set
from core.library import open_library
from core.pipeline.documents import add_mineru_output, add_pdf
from core.pipeline.ingest import process_queue
from core.pipeline.parsing import import_mineru_output
from core.schema.records import DocStatus
from core.text.questions import MAX_QUESTION_CHARS
from tests.openai_server import OpenAIReplayServer, Reply
from tests.security.helpers import CONTENT, cli, mineru_folder, snapshot, workspace


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF written byte by byte: MuPDF reads exactly the page tree given, however broken."""
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    return out + f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()


TWO_BILLION_PAGES = _pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                          b"<< /Type /Pages /Kids [3 0 R] /Count 2000000000 >>",
                          b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"])
PAGE_TREE_CYCLE = _pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                        b"<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 1 >>"])


def _only_added(before: dict, after: dict, doc_id: str, kept: str) -> None:
    """Nothing but the document's folder and the upload it keeps for Retry: no parse output, no staging."""
    added = set(after) - set(before)
    assert added <= {"docs", f"docs/{doc_id}", f"docs/{doc_id}/{kept}"} | \
        {p for p in after if p.startswith(f"docs/{doc_id}/{kept}/")}, added
    assert all(after[p] == before[p] for p in before), "a file that was there changed"
    assert not [p for p in after if p.startswith("staging/") and p not in before]


@pytest.mark.parametrize("data, message", [
    (TWO_BILLION_PAGES, "the PDF's page tree is broken (Invalid number of pages); it cannot be parsed"),
    (PAGE_TREE_CYCLE, "the PDF's page tree is broken at page 1 (cycle in page tree); it cannot be parsed"),
], ids=["two-billion-pages", "page-tree-cycle"])
def test_broken_page_tree_fails_with_a_specific_message(tmp_path, data, message):
    lib = open_library(workspace(tmp_path / "ws"))
    before = snapshot(lib.workspace.root)
    added = add_pdf(lib, "hostile.pdf", data)
    (doc,) = process_queue(lib)
    assert doc.status == DocStatus.FAILED and doc.message == message
    _only_added(before, snapshot(lib.workspace.root), added.doc_id, "source.pdf")


@pytest.mark.parametrize("page_idx, shown", [("1e12", "1000000000000"), ("1e30", "1e+30"), ("Infinity", None)],
                         ids=["1e12", "1e30", "infinity"])
def test_absurd_page_idx_fails_with_a_specific_message(tmp_path, page_idx, shown):
    lib = open_library(workspace(tmp_path / "ws"))
    items = json.dumps(CONTENT)[:-1] + f', {{"type": "text", "text": "x", "page_idx": {page_idx}}}]'
    src = mineru_folder(tmp_path / "hostile", items)
    before = snapshot(lib.workspace.root)
    added = add_mineru_output(lib, src)
    (doc,) = process_queue(lib)
    assert doc.status == DocStatus.FAILED, doc.message
    expected = (f"paper_content_list.json: item 2 has page_idx {shown}, but the document has at most 2000 pages"
                if shown else "paper_content_list.json is not valid JSON: Infinity is not a JSON number at line 1")
    assert doc.message == expected
    assert doc.pages == 0
    _only_added(before, snapshot(lib.workspace.root), added.doc_id, "import")


def test_deeply_nested_content_list_fails_with_a_specific_message(tmp_path):
    lib = open_library(workspace(tmp_path / "ws"))
    src = mineru_folder(tmp_path / "hostile", "[" * 100_000 + "]" * 100_000)
    before = snapshot(lib.workspace.root)
    added = add_mineru_output(lib, src)
    (doc,) = process_queue(lib)
    assert doc.message == "paper_content_list.json cannot be read: it is nested more than 64 levels deep"
    _only_added(before, snapshot(lib.workspace.root), added.doc_id, "import")


def test_lone_surrogate_in_a_content_list_becomes_valid_text(tmp_path):
    src = mineru_folder(tmp_path / "hostile", '[{"type": "text", "text": "Broken \\ud800 title", "text_level": 1,'
                                              ' "page_idx": 0}, {"type": "text", "text": "ok \\ud83d\\ude00",'
                                              ' "page_idx": 0}]')
    output = import_mineru_output(src, tmp_path / "out")
    assert [i.text for i in output.items] == ["Broken \ufffd title", "ok \U0001f600"]
    (tmp_path / "out" / "content_list.json").read_text(encoding="utf-8")  # written as valid UTF-8


def test_cli_eval_refuses_a_deeply_nested_question_set(tmp_path):
    ws = workspace(tmp_path / "ws")
    path = tmp_path / "set.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    before = snapshot(ws.root)
    out = cli(ws.root, "eval", str(path))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "error: the file cannot be read: it is nested more than 64 levels deep" in out.stderr, out.stderr
    assert snapshot(ws.root) == before


def test_cli_eval_reports_an_unterminated_quote_by_row(tmp_path):
    ws = workspace(tmp_path / "ws")
    path = tmp_path / "set.csv"
    path.write_text('question,answers\nWhat is BERT?,a model\n"What is GPT?,a model\nWhat is T5?,a model\n')
    out = cli(ws.root, "eval", str(path))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "row 3: not valid CSV (a quoted cell opened on this row is never closed)" in out.stderr, out.stderr


def test_cli_eval_refuses_a_question_longer_than_the_limit(tmp_path):
    ws = workspace(tmp_path / "ws")
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps({"question": "why " * 30_000, "answers": ["x"]}) + "\n")
    out = cli(ws.root, "eval", str(path))
    assert out.returncode == 2
    assert (f"row 1: the question is 119,999 characters long; the limit is {MAX_QUESTION_CHARS:,}"
            in out.stderr), out.stderr


def test_cli_ask_refuses_a_long_question_before_any_llm_call(tmp_path):
    with OpenAIReplayServer(default=Reply(content="an answer"), model="replay") as server:
        ws = workspace(tmp_path / "ws", provider="openai", base_url=server.url, model=server.model)
        out = cli(ws.root, "ask", "x" * 120_000)
        assert out.returncode == 2 and server.chat_requests == []
    assert f"error: the question is 120,000 characters long; the limit is {MAX_QUESTION_CHARS:,}" in out.stderr


def test_question_sets_are_bounded_and_their_text_valid(tmp_path):
    lib = open_library(workspace(tmp_path / "ws"))
    questions = parse_question_set(b'{"question": "What is \\udc80 here?", "answers": ["\\ud800"]}\n', "q.jsonl")
    assert questions[0].question == "What is \ufffd here?" and questions[0].answers == ["\ufffd"]
    lib.eval_store.save_set("surrogates", questions, source="q.jsonl")  # storable: valid UTF-8
    with pytest.raises(QuestionSetError, match="a question set may be at most"):
        parse_question_set("question\n" + "x" * MAX_SET_CHARS, "big.csv")
