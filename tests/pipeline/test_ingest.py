"""The ingest journey end to end, through real mineru, SQLite, Chroma and the embedding model."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.library import open_library
from core.pipeline.documents import add_pdf, delete_document, retry_document
from core.pipeline.ingest import process_queue, recover
from core.query.search import SearchFilters, search
from core.schema.records import DocStatus
from core.settings.workspace import Workspace
from tests import pdfs
from tests.paths import REPO

DISTINCTIVE = "The purple walrus hypothesis predicts exactly this behaviour for coherent lattices."


def cli(workspace: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(workspace))
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def paper_workspace(tmp_path_factory):
    """One paper ingested through the CLI, as a user would from a shell."""
    root = tmp_path_factory.mktemp("ws")
    pdf = pdfs.make_paper_pdf(root.parent / f"{root.name}-paper.pdf")
    out = cli(root, "ingest", str(pdf))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "parse memory budget " in out.stderr and " per page, at most 1800 s" in out.stderr  # the cap it uses
    return root


@pytest.mark.slow
def test_cli_ingest_makes_a_ready_document_with_title_and_counts(paper_workspace):
    out = cli(paper_workspace, "docs")
    lib = open_library(Workspace(paper_workspace))
    (doc,) = lib.documents.list()
    assert out.returncode == 0 and f"{doc.id[:12]}  ready        2p  " in out.stdout, out.stdout
    assert f"  {pdfs.DEFAULT_TITLE} — " in out.stdout, out.stdout
    assert doc.status == DocStatus.READY and doc.title == pdfs.DEFAULT_TITLE
    assert doc.pages == 2 and doc.backend.startswith("mineru")
    assert doc.item_counts.get("table") == 1 and doc.item_counts.get("image") == 1
    assert doc.chunk_count >= 3 and doc.timings["parse_s"] > 0
    parsed = lib.workspace.parsed_dir(doc.id)
    assert (parsed / "content_list.json").exists() and (parsed / "markdown.md").exists()
    assert lib.workspace.source_pdf(doc.id).exists()


def test_search_finds_a_sentence_with_its_page_section_and_region(paper_workspace):
    lib = open_library(Workspace(paper_workspace))
    hits = search(lib, "purple walrus hypothesis about coherent lattices", top_k=3)
    assert hits and "purple walrus" in hits[0].chunk.text
    top = hits[0]
    assert top.doc_title == pdfs.DEFAULT_TITLE and top.chunk.section == "1 Introduction"
    assert top.page == 0 and top.bbox and 0 <= top.bbox[0] < top.bbox[2] <= 1000


def test_search_filters_by_item_type_and_paper(paper_workspace):
    lib = open_library(Workspace(paper_workspace))
    tables = search(lib, "accuracy of the lattice solvers on the okapi benchmark", top_k=3,
                    filters=SearchFilters(kinds=["table"]))
    assert tables and all(h.chunk.kind == "table" for h in tables)
    assert "Heliotrope" in tables[0].chunk.text and "91.4" in tables[0].chunk.text
    assert search(lib, "walrus", filters=SearchFilters(doc_ids=["not-a-document"])) == []


@pytest.mark.slow
def test_cli_search_prints_paper_and_page(paper_workspace):
    out = cli(paper_workspace, "search", "heliotrope solver convergence iterations", "-k", "2")
    assert out.returncode == 0 and pdfs.DEFAULT_TITLE in out.stdout and "p. 1" in out.stdout, out.stdout


@pytest.fixture
def lib(tmp_path):
    return open_library(Workspace(tmp_path / "ws"))


def _snapshot(lib):
    """Everything searchable in a workspace: documents with their state, chunk ids, vector count, result records."""
    return ({d.id: (d.status, d.chunk_count) for d in lib.documents.list()},
            sorted(c.id for d in lib.documents.list() for c in lib.chunks.by_doc(d.id)), lib.windows.count(),
            sorted((r.doc_id, r.item_index, r.row, r.col, r.value) for d in lib.documents.list()
                   for r in lib.results.by_doc(d.id)))


@pytest.mark.slow
def test_duplicate_upload_is_a_no_op_that_says_so(lib, tmp_path):
    data = pdfs.make_paper_pdf(tmp_path / "p.pdf", with_figure=False, pages=1).read_bytes()
    first = add_pdf(lib, "p.pdf", data)
    process_queue(lib)
    before = _snapshot(lib)
    again = add_pdf(lib, "renamed copy.pdf", data)
    assert (first.outcome, again.outcome) == ("added", "duplicate")
    assert again.doc_id == first.doc_id and "already in the library" in again.message and "ready" in again.message
    assert process_queue(lib) == [] and _snapshot(lib) == before


@pytest.mark.slow
@pytest.mark.parametrize("make, expected", [
    (pdfs.make_empty_file, "the file is empty (0 bytes)"),
    (lambda p: pdfs.make_fake_pdf(p, "zip"),
     "not a PDF: the file starts with 'PK\\x03\\x04' (looks like a Word document (.docx))"),
    (lambda p: pdfs.make_fake_pdf(p, "html"),
     "not a PDF: the file starts with '<!DO' (looks like an HTML page, e.g. a download error page)"),
    (pdfs.make_encrypted_pdf, "the PDF is password-protected; remove the password and upload it again"),
    (pdfs.make_corrupt_pdf, "the PDF is damaged and cannot be opened: MuPDF cannot read its structure (the file "
                            "may be truncated or not fully uploaded)"),
    (pdfs.make_blank_pdf, "no text found on any of the 2 pages: they are blank"),
], ids=["empty", "zip", "html", "encrypted", "corrupt", "blank"])
def test_bad_files_fail_with_a_specific_message_and_change_nothing_else(lib, tmp_path, make, expected):
    good = add_pdf(lib, "good.pdf", pdfs.make_paper_pdf(tmp_path / "good.pdf", pages=1).read_bytes())
    process_queue(lib)
    before = _snapshot(lib)
    bad = make(tmp_path / "bad.pdf")
    add_pdf(lib, "../../<b>bad</b>.pdf", bad.read_bytes())
    (doc,) = process_queue(lib)
    assert doc.status == DocStatus.FAILED and doc.message == expected, doc.message
    assert "Traceback" not in doc.message and "internal error" not in doc.message
    assert doc.filename == "b_bad_b_.pdf" or "/" not in doc.filename and "<" not in doc.filename
    after = _snapshot(lib)
    assert after[0][good.doc_id] == before[0][good.doc_id] and after[2] == before[2]
    assert search(lib, DISTINCTIVE)[0].chunk.doc_id == good.doc_id


@pytest.mark.slow
def test_a_document_killed_mid_ingest_is_invisible_then_resumed(lib, tmp_path):
    """Simulates a crash after some vectors were written: the dead worker's document must not be searchable,
    and recovery redoes it from its source without leaving duplicates."""
    result = add_pdf(lib, "p.pdf", pdfs.make_paper_pdf(tmp_path / "p.pdf", pages=1).read_bytes())
    (doc,) = process_queue(lib)
    complete = _snapshot(lib)
    assert complete[3], "its results table was read at ingest"
    retry_document(lib, doc.id)
    lib.queue.claim_next("somehost-that-is-gone:999999:1")
    lib.documents.set_status(doc.id, DocStatus.INDEXING)
    lib.chunks.delete_doc(doc.id)  # the crash happened after vectors, before chunks were rewritten
    lib.results.delete_doc(doc.id)  # … and after its result records were cleared
    assert search(lib, DISTINCTIVE) == [], "a document that is not ready is never searched"
    assert recover(lib) == [doc.id]
    assert lib.documents.get(doc.id).status == DocStatus.QUEUED
    (resumed,) = process_queue(lib)
    assert resumed.status == DocStatus.READY and _snapshot(lib) == complete
    assert search(lib, DISTINCTIVE)[0].chunk.doc_id == result.doc_id


@pytest.mark.slow
def test_killing_the_cli_mid_ingest_leaves_nothing_half_written(tmp_path):
    root = tmp_path / "ws"
    pdf = pdfs.make_paper_pdf(tmp_path / "long.pdf", pages=12)
    env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(root))
    proc = subprocess.Popen([sys.executable, "-m", "core", "ingest", "-q", str(pdf)], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    lib = None
    deadline = time.time() + 120
    while time.time() < deadline:
        if (root / "papergraph.sqlite").exists():
            lib = lib or open_library(Workspace(root))
            docs = lib.documents.list()
            if docs and docs[0].status in (DocStatus.PARSING, DocStatus.INDEXING):
                break
        time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("ingest never started")
    os.killpg(proc.pid, 9)  # the CLI and its mineru child, as a power cut would
    proc.wait()
    (doc,) = lib.documents.list()
    assert doc.status in (DocStatus.PARSING, DocStatus.INDEXING)
    assert search(lib, DISTINCTIVE) == []
    # A restart: the same command again. Nothing here recovers the document; the CLI must, on its own, before it
    # looks at its arguments: the paper is then queued again (not stuck in parsing), so the re-upload says so.
    out = cli(root, "ingest", str(pdf))
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"duplicate {doc.id[:12]}  long.pdf: already in the library as " in out.stdout, out.stdout
    assert "status queued" in out.stdout and f"ready     {doc.id[:12]}" in out.stdout, out.stdout
    lib = open_library(Workspace(root))
    (doc,) = lib.documents.list()
    assert doc.status == DocStatus.READY and doc.pages >= 12
    assert len({w for w in lib.windows.collection.get()["ids"]}) == lib.windows.count()
    assert search(lib, DISTINCTIVE)[0].chunk.doc_id == doc.id


@pytest.mark.slow
def test_delete_removes_everything_derived_from_a_document(lib, tmp_path):
    keep = add_pdf(lib, "keep.pdf", pdfs.make_paper_pdf(tmp_path / "k.pdf", pages=1).read_bytes())
    gone = add_pdf(lib, "gone.pdf", pdfs.make_text_pdf(tmp_path / "g.pdf", 2, "Delete me {page} please, "
                                                       "about ocelots and their winter coats.").read_bytes())
    process_queue(lib)
    delete_document(lib, gone.doc_id)
    assert lib.documents.get(gone.doc_id) is None and lib.chunks.by_doc(gone.doc_id) == []
    assert lib.windows.doc_ids() == {keep.doc_id}
    assert not lib.workspace.doc_dir(gone.doc_id).exists()
    assert all(h.chunk.doc_id == keep.doc_id for h in search(lib, "ocelots winter coats"))
    delete_document(lib, gone.doc_id)  # repeating a delete is harmless


    assert lib.descriptions.by_doc(keep.doc_id)  # its table and figure were described at ingest
    assert lib.results.by_doc(keep.doc_id)  # and its results table read
    delete_document(lib, keep.doc_id)
    assert lib.descriptions.by_doc(keep.doc_id) == {} and lib.results.by_doc(keep.doc_id) == []


def test_retry_requeues_a_failed_document(lib, tmp_path):
    result = add_pdf(lib, "empty.pdf", b"")
    (doc,) = process_queue(lib)
    assert doc.status == DocStatus.FAILED
    retry_document(lib, result.doc_id)
    assert lib.documents.get(result.doc_id).status == DocStatus.QUEUED
    (doc,) = process_queue(lib)
    assert doc.status == DocStatus.FAILED and doc.message == "the file is empty (0 bytes)"


@pytest.mark.slow
def test_a_300_page_pdf_is_ingested_and_its_last_page_is_searchable(lib, tmp_path):
    sections = [(f"{n} Appendix on quarry {n}", [f"Quarry {n} holds basalt columns catalogued under the code "
                                                 f"QX-{n:03d} by the survey team."]) for n in range(1, 301)]
    pdf = pdfs.make_paper_pdf(tmp_path / "big.pdf", sections=sections, pages=300, with_figure=False)
    add_pdf(lib, "big.pdf", pdf.read_bytes())
    (doc,) = process_queue(lib)
    assert doc.status == DocStatus.READY and doc.pages == 300, doc.message
    hits = search(lib, "Quarry 300 holds basalt columns catalogued under the code QX-300", top_k=3)
    assert any(h.page == 299 and "QX-300" in h.window_text for h in hits), [(h.page, h.window_text) for h in hits]


def test_recovery_tells_a_live_worker_from_a_reused_pid(lib, tmp_path):
    from core.pipeline.status import worker_id

    add_pdf(lib, "p.pdf", pdfs.make_paper_pdf(tmp_path / "p.pdf", pages=1).read_bytes())
    host, pid, started, thread = worker_id().split(":")
    reused = f"{host}:{pid}:{int(started) - 3600}:{thread}"  # same pid, but a process started an hour earlier
    doc = lib.queue.claim_next(reused)
    assert recover(lib) == [doc.id] and lib.documents.get(doc.id).status == DocStatus.QUEUED
    doc = lib.queue.claim_next(worker_id())  # this very process and thread: alive
    assert recover(lib) == [] and lib.documents.get(doc.id).status == DocStatus.PARSING


def test_recovery_takes_back_a_claim_of_a_thread_of_this_process_that_died(lib, tmp_path):
    # A writer thread that died with an error mid-ingest left its paper parsing under a live pid: the next turn of
    # the app's ingest thread (BackgroundIngestor._ingest recovers first) takes it back, a live thread's claim not.
    import threading

    from core.pipeline.status import worker_id

    for name in ("a.pdf", "b.pdf"):
        add_pdf(lib, name, pdfs.make_paper_pdf(tmp_path / name, pages=1, title=name).read_bytes())
    claimed = []
    thread = threading.Thread(target=lambda: claimed.append(lib.queue.claim_next(worker_id())))
    thread.start()
    thread.join()
    mine = lib.queue.claim_next(worker_id())
    assert recover(lib) == [claimed[0].id] and lib.documents.get(mine.id).status == DocStatus.PARSING


@pytest.mark.slow
def test_parse_progress_moves_while_mineru_runs(lib, tmp_path):
    # Long enough that MinerU runs for several of the ticker's steps even on an idle machine with a warm, kept
    # MinerU child (24 pages once finished between two ticks there).
    add_pdf(lib, "p.pdf", pdfs.make_paper_pdf(tmp_path / "p.pdf", pages=80).read_bytes())
    seen = []
    process_queue(lib, on_progress=lambda doc_id, detail, fraction: seen.append((detail, fraction)))
    parsing = [f for d, f in seen if d.startswith("parsing")]
    assert len(set(parsing)) >= 3, seen[:20]
    assert parsing == sorted(parsing) and max(parsing) <= 0.5
    assert any("s left)" in d for d, _ in seen)
    assert [f for _, f in seen] == sorted(f for _, f in seen), "the bar never moves backwards"
