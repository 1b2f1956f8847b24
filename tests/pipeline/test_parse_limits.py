"""A parser child never takes the machine down: over its memory cap, past its deadline or stuck on a page it is
stopped by us, the document is parsed with PyMuPDF and says why; pages too dense for MinerU never reach it.

Real MinerU children on a generated page drawn with 90,000 vector marks (tests/pdfs.make_dense_vector_pdf), which
makes MinerU's flash tier grow without bound like page 6 of ../shared/corpus/stress does."""
import os
import subprocess
import sys

import pytest

from core.library import open_library
from core.pipeline.documents import add_pdf, parse_memory_override, retry_document
from core.pipeline.ingest import process_queue
from core.pipeline.ingest_writer import make_task
from core.pipeline.parsing import parse_pdf
from core.pipeline.parsing.budget import GB, child_memory_bytes
from core.pipeline.parsing.memory_watch import MemoryWatch
from core.schema.records import DocStatus
from core.settings.config import ParsingConfig
from core.settings.workspace import Workspace
from tests import pdfs
from tests.paths import REPO

APPROXIMATE = "parsed with PyMuPDF, tables and formulas are approximate"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dense_pdf(tmp_path_factory):
    return pdfs.make_dense_vector_pdf(tmp_path_factory.mktemp("dense") / "dense.pdf")


def test_a_child_over_its_memory_cap_is_stopped_and_pymupdf_parses_the_document(dense_pdf, tmp_path):
    config = ParsingConfig(dense_page_paths=0, memory_gb=1.0)
    output = parse_pdf(dense_pdf, tmp_path / "out", config, mineru_home=tmp_path / "home")
    assert output.backend == "builtin"
    assert output.warnings == [f"MinerU stopped at 1 GB on page 1 of 1; {APPROXIMATE}"]
    assert output.memory_cap == 1 * GB and 0 < output.child_peak_rss <= output.memory_cap
    assert "small filled square" in output.markdown


def test_a_page_that_takes_longer_than_the_stuck_limit_stops_mineru(dense_pdf, tmp_path):
    config = ParsingConfig(dense_page_paths=0, memory_gb=2.0, stall_s=3)
    output = parse_pdf(dense_pdf, tmp_path / "out", config, mineru_home=tmp_path / "home")
    assert output.backend == "builtin"
    assert output.warnings == [f"MinerU was stuck on page 1 of 1 for 3 s; {APPROXIMATE}"]


def test_a_page_too_dense_for_mineru_goes_to_pymupdf_and_the_others_to_mineru(tmp_path):
    pdf = pdfs.make_dense_vector_pdf(tmp_path / "two.pdf", pages_before=1)
    output = parse_pdf(pdf, tmp_path / "out", ParsingConfig(), mineru_home=tmp_path / "home")
    assert output.backend == "mineru-flash+builtin"
    assert output.warnings == ["page 2 draws 90,000 vector marks, more than MinerU can lay out in bounded memory: "
                               "parsed there with PyMuPDF, tables and formulas are approximate"]
    assert {i.source for i in output.items if i.page_idx == 0} == {"mineru"}
    assert {i.source for i in output.items if i.page_idx == 1} == {"builtin"}
    assert output.child_peak_rss < 1 * GB


def test_the_watch_kills_a_process_group_over_its_cap():
    # A real process that holds 400 MB and would sleep on: the watch, capped at 150 MB, ends it.
    proc = subprocess.Popen([sys.executable, "-c", "import time; x = bytearray(400 << 20); time.sleep(60)"],
                            start_new_session=True)
    with MemoryWatch(proc.pid, 150 << 20) as watch:
        returncode = proc.wait(timeout=60)
    assert watch.tripped.is_set() and returncode == -9 and watch.peak > 150 << 20


def test_retry_with_a_larger_budget_gives_the_document_its_own_cap_and_every_page_to_mineru(tmp_path):
    lib = open_library(Workspace(tmp_path / "ws"))
    doc_id = add_pdf(lib, "empty.pdf", b"").doc_id  # fails at once: a document a retry applies to
    process_queue(lib)
    plain = make_task(lib, lib.documents.get(doc_id), 0, tmp_path / "work", ships_files=False, workers=2)
    assert plain.parse_memory == child_memory_bytes(lib.settings.parsing, 2) and not plain.every_page_to_mineru
    retry_document(lib, doc_id, memory_gb=4.0)
    assert lib.documents.get(doc_id).status == DocStatus.QUEUED
    assert parse_memory_override(lib, doc_id) == 4.0
    retried = make_task(lib, lib.documents.get(doc_id), 0, tmp_path / "work", ships_files=False, workers=2)
    assert retried.parse_memory == child_memory_bytes(lib.settings.parsing, 2, override_gb=4.0)
    assert retried.parse_memory > plain.parse_memory and retried.every_page_to_mineru


def test_cli_retry_with_memory_gb_gives_the_document_that_budget_and_states_the_cap(tmp_path):
    root = tmp_path / "ws"
    lib = open_library(Workspace(root))
    doc_id = add_pdf(lib, "empty.pdf", b"").doc_id
    process_queue(lib)
    env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(root))
    out = subprocess.run([sys.executable, "-m", "core", "retry", doc_id[:12], "--memory-gb", "2.5"], cwd=REPO,
                         env=env, capture_output=True, text=True, timeout=300)
    assert parse_memory_override(lib, doc_id) == 2.5
    assert "parse memory budget " in out.stderr and "failed" in out.stdout  # still empty, with its cap stated


def test_cli_retry_with_less_memory_than_the_share_says_it_gets_it_and_a_cut_ask_says_so(tmp_path):
    # Issue 36: `core retry --memory-gb 1.5` ran under the 3 GB share without a word. Now the cap is the one asked
    # (said by the CLI and in the document's message), and one the machine cannot give is said, with what it gets.
    from tests import graph_papers
    from tests.presentation.explorer_helpers import ingest

    ws = graph_papers.fast_workspace(tmp_path / "ws")  # the builtin parser: the retries parse in a second
    settings = ws.settings(apply_environment=False)
    settings.parsing.memory_gb, settings.compute.workers = 6.0, 2  # a 3 GB share per child
    ws.save_settings(settings)
    lib = open_library(ws)
    (doc_id,) = ingest(lib, graph_papers.make_bert_pdf(tmp_path))
    env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(ws.root))
    out = subprocess.run([sys.executable, "-m", "core", "retry", doc_id[:12], "--memory-gb", "1.5"], cwd=REPO,
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert f"retry     {doc_id[:12]}  parse memory: MinerU's child gets 1.5 GB, as asked" in out.stderr
    assert make_task(lib, lib.documents.get(doc_id), 0, tmp_path / "w", ships_files=False,
                     workers=2).parse_memory == int(1.5 * GB)
    cap = retry_document(lib, doc_id, memory_gb=10_000)
    assert "not the 10000 GB asked" in cap and lib.documents.get(doc_id).message == f"queued again; {cap}"
    (doc,) = process_queue(lib)
    assert doc.status == DocStatus.READY and cap in doc.message, doc.message
