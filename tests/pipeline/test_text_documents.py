"""Markdown, plain text and HTML documents: the readers, the decoding rules, and the product path end to end
(CLI ingest → parse → chunks → search → graph → retry → delete) through real SQLite, Chroma, the embedding model
and spaCy."""
import codecs
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli.common import input_paths
from core.content.pages import PageImageUnavailable, load_items, page_image_path
from core.library import open_library
from core.pipeline.documents import add_document, delete_document, retry_document
from core.pipeline.graph.stage import process_graph_queue
from core.pipeline.ingest import process_queue
from core.pipeline.parsing.result import ParseError
from core.pipeline.parsing.text_decode import MAX_TEXT_BYTES, decode_text
from core.pipeline.parsing.text_documents import paginate, plain_items, read_text_items
from core.pipeline.parsing.text_html import html_items
from core.pipeline.parsing.text_markdown import drop_raw_blocks, markdown_items
from core.query.search import search
from core.schema.records import DocStatus, GraphStatus
from core.settings.workspace import Workspace
from tests.paths import REPO


def kinds(items):
    return [(i.type, i.text_level, i.text or i.list_items or i.table_body) for i in items]


# ---------------------------------------------------------------------------------------------- Markdown
def test_markdown_headings_lists_code_and_pipe_tables_become_items():
    md = ("---\ntitle: Front matter title\nauthor: x\n---\n# Walrus notes\n\nIntro *text*\nwith a [link](http://e.x)"
          " and ![a chart](c.png).\n\nMethods\n-------\n\n- dense windows\n- BM25\n  over chunks\n\n1. one\n2) two\n\n"
          "| model | recall |\n|:--|--:|\n| MiniLM | 0.81 |\n\n```python\nprint('<b>')\n```\n\n    indented code\n\n"
          "> a quote\n\n***\n\n### Deep heading ###\ntail")
    assert kinds(markdown_items(md)) == [
        ("text", 1, "Front matter title"), ("text", 1, "Walrus notes"),
        ("text", 0, "Intro *text*\nwith a link and a chart."), ("text", 2, "Methods"),
        ("list", 0, ["dense windows", "BM25 over chunks", "one", "two"]),
        ("table", 0, "<table><tr><th>model</th><th>recall</th></tr><tr><td>MiniLM</td><td>0.81</td></tr></table>"),
        ("code", 0, "print('<b>')"), ("code", 0, "indented code"), ("text", 0, "a quote"),
        ("text", 3, "Deep heading"), ("text", 0, "tail")]


def test_markdown_ragged_table_stays_text_and_top_headings_become_level_one():
    items = markdown_items("## Only sections\n\n| a | b |\n|---|---|\n| 1 | 2 | 3 |\n\n### Sub")
    assert kinds(items) == [("text", 1, "Only sections"), ("text", 0, "| a | b |\n| 1 | 2 | 3 |"), ("text", 2, "Sub")]


def test_markdown_drops_scripts_styles_comments_and_tags_but_keeps_prose_that_mentions_them():
    md = ("Before <script>alert(1)</script> after <!-- hidden --> <img src=x onerror=alert(1)> end\n\n"
          "<style>p{}</style>Say <script> to inject.\n\nLast words")
    text = " ".join(i.text for i in markdown_items(md))
    assert "alert" not in text and "hidden" not in text and "<" not in text and "onerror" not in text
    assert "Before" in text and "after" in text and "end" in text and "to inject." in text and "Last words" in text


def test_dropping_raw_blocks_is_linear_on_hostile_input():
    """Eight times the input takes about eight times as long (64 times if it were quadratic): a ratio of two runs
    side by side, the best of three each, so a loaded machine slows both alike."""
    import time

    def best(n: int) -> float:
        hostile = "<script>" * n + "<!--" * n + "<style " * n
        runs = []
        for _ in range(3):
            started = time.perf_counter()
            drop_raw_blocks(hostile)
            runs.append(time.perf_counter() - started)
        return min(runs)

    small, large = best(12_500), best(100_000)
    assert large / max(small, 1e-4) < 24, (small, large)


# ---------------------------------------------------------------------------------------------- HTML
def test_html_keeps_text_structure_and_drops_every_piece_of_markup_and_script():
    page = ("<html><head><title>Tab title</title><script>steal()</script><style>p{color:red}</style></head><body>"
            "<h2>Leiden &amp; Louvain</h2><p onclick='x()'>Leiden <b>refines</b><br>partitions.</p>"
            "<ul><li>igraph</li><li>networkx<ul><li>nested</li></ul></li></ul><pre>a  b\n c</pre>"
            "<table><tr><th>k</th><th>v</th></tr><tr><td>&lt;script&gt;</td><td>1</td></tr></table>"
            "<svg><text>svg text</text></svg><iframe src=http://evil>frame</iframe><p>end <img alt='alt words'>")
    items = html_items(page)
    assert kinds(items) == [
        ("text", 1, "Leiden & Louvain"), ("text", 0, "Leiden refines partitions."),
        ("list", 0, ["igraph", "networkx", "nested"]), ("code", 0, "a  b\n c"),
        ("table", 0, "<table><tr><th>k</th><th>v</th></tr><tr><td>&lt;script&gt;</td><td>1</td></tr></table>"),
        ("text", 0, "end alt words")]


def test_html_without_headings_takes_its_title_element_as_the_title():
    assert kinds(html_items("<title>My page</title><p>Body text.</p>")) == [
        ("text", 1, "My page"), ("text", 0, "Body text.")]


def test_html_of_only_scripts_is_refused_with_a_reason():
    with pytest.raises(ParseError, match="no text found in this HTML file"):
        read_text_items(b"<script>only()</script><style>x{}</style>", "html")


# ---------------------------------------------------------------------------------------------- plain text
def test_plain_text_splits_at_blank_lines_and_finds_only_safe_headings():
    text = ("A short title\n\nFirst paragraph line one\nline two.\n\n2.1 Results\n\nRESULTS AND DISCUSSION\n\n"
            "Underlined\n==========\n\nThis is a sentence.\n\nshort line without stop\n\n"
            "A line that is a sentence of more than twelve words and therefore cannot be a heading at all")
    assert kinds(plain_items(text)) == [
        ("text", 1, "A short title"), ("text", 0, "First paragraph line one\nline two."), ("text", 2, "2.1 Results"),
        ("text", 2, "RESULTS AND DISCUSSION"), ("text", 1, "Underlined"), ("text", 0, "This is a sentence."),
        ("text", 0, "short line without stop"),
        ("text", 0, "A line that is a sentence of more than twelve words and therefore cannot be a heading at all")]


def test_plain_text_whose_first_line_is_a_sentence_has_no_title_heading():
    assert kinds(plain_items("This is a sentence.\n\nMore.")) == [("text", 0, "This is a sentence."),
                                                                  ("text", 0, "More.")]


# ---------------------------------------------------------------------------------------------- decoding
def test_decoding_utf8_with_bom_utf16_and_the_stated_cp1252_fallback():
    assert decode_text(codecs.BOM_UTF8 + "naïve\r\ntext".encode(), "text") == ("naïve\ntext", [])
    assert decode_text(codecs.BOM_UTF16_LE + "ünï".encode("utf-16-le"), "text") == ("ünï", [])
    text, warnings = decode_text("café – “quoted”".encode("cp1252"), "text")
    assert text == "café – “quoted”" and "Windows-1252" in warnings[0]


@pytest.mark.parametrize("data, reason", [
    (b"", "empty"), (b"  \n\t ", "empty"), (b"%PDF-1.7 ...", "it is a PDF"), (b"PK\x03\x04abc", "ZIP"),
    (b"text\x00\x01\x02binary", "NUL bytes"), (b"\x89PNG\r\n", "PNG image"),
    (bytes(range(1, 32)) * 10 + b"abc", "control characters"), (b"ok \x81\x8d\x8f\x90\x9d", "neither UTF-8 nor"),
])
def test_binary_garbage_and_empty_files_are_refused_with_a_reason(data, reason):
    with pytest.raises(ParseError, match=reason):
        decode_text(data, "plain text")


def test_a_text_file_over_the_limit_is_refused_by_size():
    with pytest.raises(ParseError, match="limited to"):
        decode_text(b"a" * (MAX_TEXT_BYTES + 1), "plain text")


def test_pages_break_between_items_and_never_right_after_a_heading():
    items = plain_items("\n\n".join(["Title", *(["word " * 200] * 7), "2 Next section", "word " * 10]))
    assert paginate(items) == 3 and [i.page_idx for i in items] == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]
    # A heading that fills a page keeps the paragraph it introduces on its page.
    items = plain_items("\n\n".join(["Title", "x" * 2990, "2 Next section", "y" * 100, "z"]))
    assert paginate(items) == 2 and [i.page_idx for i in items] == [0, 0, 0, 0, 1]


# ---------------------------------------------------------------------------------------------- end to end
def cli(workspace: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(workspace))
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def text_workspace(tmp_path_factory):
    """Markdown, text and HTML files and a binary file named .txt, ingested with the CLI (and the LLM-free graph)."""
    root = tmp_path_factory.mktemp("textws")
    src = root.parent / f"{root.name}-src"
    (src / "sub").mkdir(parents=True)
    (src / "notes.md").write_text("# Walrus notes\n\nThe purple walrus hypothesis predicts coherent lattices.\n\n"
                                  "## Methods\n\n| model | recall |\n|---|---|\n| MiniLM | 0.81 |\n", encoding="utf-8")
    (src / "paper.txt").write_bytes("Ocelot survey\n\nOcelots in Belize prefer riverine forest at night – near "
                                    "the café.\n".encode("cp1252"))
    (src / "sub" / "page.html").write_text(
        "<title>t</title><script>document.title='pwned'</script><h1>Leiden page</h1>"
        "<p>Leiden refines Louvain communities with a guarantee of connectedness.</p>", encoding="utf-8")
    (src / "sub" / "garbage.txt").write_bytes(b"\x00\x01binary" * 100)
    (src / "sub" / "ignored.docx").write_bytes(b"PK\x03\x04")
    out = cli(root, "ingest", str(src))
    assert out.returncode == 1, out.stdout + out.stderr  # the binary file fails; the others are ready
    return root, out


@pytest.mark.slow
def test_cli_ingests_a_folder_of_text_documents_into_ready_searchable_papers(text_workspace):
    root, out = text_workspace
    lib = open_library(Workspace(root))
    docs = {d.filename: d for d in lib.documents.list()}
    assert set(docs) == {"notes.md", "paper.txt", "page.html", "garbage.txt"}, out.stdout
    assert [docs[n].status for n in ("notes.md", "paper.txt", "page.html")] == [DocStatus.READY] * 3
    assert (docs["notes.md"].title, docs["paper.txt"].title, docs["page.html"].title) == (
        "Walrus notes", "Ocelot survey", "Leiden page")
    assert docs["notes.md"].backend == "text-markdown" and docs["notes.md"].pages == 1
    assert docs["notes.md"].item_counts == {"text": 3, "table": 1}
    assert "Windows-1252" in docs["paper.txt"].warnings[0]
    assert all(docs[n].graph_status == GraphStatus.DONE for n in ("notes.md", "paper.txt", "page.html"))
    (hit,) = search(lib, "purple walrus hypothesis", top_k=1)
    assert hit.doc_title == "Walrus notes" and hit.page == 0 and hit.bbox is None and "walrus" in hit.chunk.text
    (hit,) = search(lib, "where do ocelots live at night", top_k=1)
    assert hit.doc_title == "Ocelot survey"
    html_doc = docs["page.html"]
    chunks = lib.chunks.by_doc(html_doc.id)
    assert chunks and not any("pwned" in c.text or "<" in c.text for c in chunks)
    assert (lib.workspace.doc_dir(html_doc.id) / "source.html").exists()
    assert lib.graph.counts()[0] > 0  # (nodes, edges)


@pytest.mark.slow
def test_binary_text_file_fails_with_a_reason_keeps_its_source_and_retries(text_workspace):
    root, out = text_workspace
    lib = open_library(Workspace(root))
    (bad,) = [d for d in lib.documents.list() if d.filename == "garbage.txt"]
    assert bad.status == DocStatus.FAILED and "binary data (NUL bytes)" in bad.message
    assert "binary data" in out.stdout
    assert (lib.workspace.doc_dir(bad.id) / "source.txt").exists()
    retry_document(lib, bad.id)
    (again,) = process_queue(lib)
    assert again.status == DocStatus.FAILED and "NUL bytes" in again.message


@pytest.mark.slow
def test_text_document_pages_have_items_but_no_page_image_and_delete_purges(text_workspace):
    root, _ = text_workspace
    lib = open_library(Workspace(root))
    (doc,) = [d for d in lib.documents.list() if d.filename == "notes.md"]
    assert {i.page_idx for i in load_items(lib, doc.id)} == {0}
    with pytest.raises(PageImageUnavailable, match="text document"):
        page_image_path(lib, doc.id, 0)
    again = add_document(lib, "renamed.md", (lib.workspace.doc_dir(doc.id) / "source.md").read_bytes())
    assert again.outcome == "duplicate" and again.doc_id == doc.id
    delete_document(lib, doc.id)
    assert not lib.workspace.doc_dir(doc.id).exists() and not lib.chunks.by_doc(doc.id)
    assert doc.id not in lib.windows.doc_ids()
    assert not search(lib, "purple walrus hypothesis", top_k=3) or all(
        h.chunk.doc_id != doc.id for h in search(lib, "purple walrus hypothesis", top_k=3))


def test_input_paths_take_text_documents_from_folders(tmp_path):
    for name in ("a.pdf", "b.md", "c.MARKDOWN", "d.txt", "e.html", "f.htm", "g.docx", "h.png"):
        (tmp_path / name).write_bytes(b"x")
    assert [p.name for p in input_paths([str(tmp_path)])] == ["a.pdf", "b.md", "c.MARKDOWN", "d.txt", "e.html",
                                                              "f.htm"]


@pytest.mark.slow
def test_a_long_text_document_spans_pages_and_its_hits_cite_the_right_page(tmp_path):
    lib = open_library(Workspace(tmp_path / "ws").ensure())
    filler = [f"Paragraph {n} is about ordinary lattice vibrations and nothing else of note." * 8
              for n in range(20)]
    filler[15] = "The zebra finch sings a courtship song of distinctive syllables learned from its father."
    result = add_document(lib, "long.txt", b"Long report\n\n" + "\n\n".join(filler).encode())
    (doc,) = process_queue(lib)
    assert doc.status == DocStatus.READY and doc.pages > 3 and result.outcome == "added"
    items = load_items(lib, doc.id)
    finch_page = next(i.page_idx for i in items if "zebra finch" in i.text)
    (hit,) = search(lib, "zebra finch courtship song", top_k=1)
    assert finch_page > 0 and hit.page == finch_page
    process_graph_queue(lib)
    assert lib.documents.get(doc.id).graph_status == GraphStatus.DONE


@pytest.mark.slow
def test_document_page_shows_a_text_document_without_page_images(monkeypatch, text_workspace):
    from tests.pages.app_helpers import open_tab, run_app, texts

    root, _ = text_workspace
    lib = open_library(Workspace(root))
    (doc,) = [d for d in lib.documents.list() if d.filename == "page.html"]
    at = run_app(monkeypatch, root, "pages/document.py", {"doc": doc.id[:12]})
    assert "Leiden refines Louvain" in texts(at.tabs[0].markdown) and "pwned" not in texts(at.tabs[0].markdown)
    pages_tab = open_tab(at, "Pages")
    assert not at.exception, [e.value for e in at.exception]
    assert "text document" in texts(pages_tab.info)
    assert "Leiden refines" in "".join(d.value.to_string() for d in pages_tab.dataframe)
