"""Bibliographic metadata, offline (core/pipeline/metadata): read from generated PDFs' first pages, stored at
ingest, kept through a re-parse when corrected by hand, gone with the paper, backfilled by `core meta refresh`."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pymupdf
import pytest

from core.cli import main as cli_main
from core.library import open_library
from core.pipeline.documents import add_pdf, delete_document, retry_document
from core.pipeline.gc import footprint
from core.pipeline.ingest import process_queue
from core.pipeline.metadata.extract import extract_metadata
from core.pipeline.metadata.refresh import correct_field
from core.pipeline.parsing.builtin import parse_builtin
from core.schema.records import DocStatus
from tests import pdfs
from tests.graph_papers import fast_workspace

TITLE = "Heliotrope Solvers for Sparse Zebrafish Migration Lattices"
AUTHORS = "Ada Lovelace, Alan Turing and Grace Hopper, Institute of Imaginary Studies"
SECTIONS: list[pdfs.Section] = [
    ("Abstract", ["Published in the Proceedings of the Imaginary Conference on Lattices 2021, doi:10.5555/imag."
                  "2021.042. We present the heliotrope solver, which converges after seventeen iterations on every "
                  "migration graph we tried."]),
    ("1 Introduction", ["Migration graphs of zebrafish larvae are hard to sample because each larva wanders "
                        "through a tangle of currents; earlier work relied on marigold sampling."]),
]


def paper(folder: Path, name: str = "2107.00001v2-upload.pdf", **kw) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return pdfs.make_paper_pdf(folder / name, **{"title": TITLE, "authors": AUTHORS, "sections": SECTIONS,
                                                 "pages": 1, "with_table": False, "with_figure": False, **kw})


def extract(pdf: Path, tmp_path: Path):
    items = parse_builtin(pdf, tmp_path / "parsed", progress=lambda _: None)
    return extract_metadata(items, pdf, pdf.name)


def test_title_authors_year_venue_doi_and_abstract_come_from_the_first_page(tmp_path):
    meta = extract(paper(tmp_path), tmp_path)
    assert meta.title == TITLE and meta.sources["title"] == "first page"
    assert meta.authors == ["Ada Lovelace", "Alan Turing", "Grace Hopper"]  # the affiliation is no person
    assert meta.year == 2021 and meta.doi == "10.5555/imag.2021.042" and meta.sources["doi"] == "doi pattern"
    assert meta.venue.startswith("Proceedings of the Imaginary Conference on Lattices 2021")
    assert meta.abstract.startswith("Published in the Proceedings") and meta.arxiv == ""


def test_an_arxiv_stamp_gives_the_id_and_the_year(tmp_path):
    sections = [("Abstract", ["Preprint arXiv:1906.01234v3 [cs.CL]. We present the heliotrope solver for lattices "
                              "of migrating larvae."])] + SECTIONS[1:]
    meta = extract(paper(tmp_path, sections=sections), tmp_path)
    assert (meta.arxiv, meta.year, meta.sources["year"]) == ("1906.01234", 2019, "arxiv pattern")


def test_the_pdf_title_field_counts_only_when_the_page_prints_it(tmp_path):
    pdf = paper(tmp_path)
    doc = pymupdf.open(pdf)
    doc.set_metadata({"title": "Microsoft Word - draft7.docx", "author": "admin"})
    junk = tmp_path / "junk.pdf"
    doc.save(junk)
    meta = extract(junk, tmp_path)
    assert meta.title == TITLE and meta.authors[0] == "Ada Lovelace"
    doc.set_metadata({"title": TITLE, "author": "Ada Lovelace; Alan Turing; Grace Hopper"})
    good = tmp_path / "good.pdf"
    doc.save(good)
    meta = extract(good, tmp_path)
    assert meta.sources["title"] == meta.sources["authors"] == "pdf metadata"
    assert meta.authors == ["Ada Lovelace", "Alan Turing", "Grace Hopper"]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("metadata-ws")
    ws = fast_workspace(root / "ws")
    lib = open_library(ws)
    pdf = paper(root / "pdfs")
    doc_id = add_pdf(lib, pdf.name, pdf.read_bytes()).doc_id
    (doc,) = process_queue(lib)
    assert doc.status == DocStatus.READY, doc.message
    return ws, doc_id


@pytest.mark.slow
def test_ingest_stores_the_metadata_and_titles_the_paper_by_it_not_by_its_file_name(workspace):
    ws, doc_id = workspace
    lib = open_library(ws)
    meta = lib.metadata.get(doc_id)
    assert meta.title == TITLE and meta.authors[0] == "Ada Lovelace" and meta.year == 2021
    assert lib.documents.get(doc_id).display_title == TITLE


@pytest.mark.slow
def test_a_hand_correction_survives_a_reparse_and_clearing_it_brings_the_extracted_value_back(workspace):
    ws, doc_id = workspace
    lib = open_library(ws)
    correct_field(lib, doc_id, "title", "Heliotrope Solvers (corrected)")
    correct_field(lib, doc_id, "authors", "Ada King; Alan Turing")
    retry_document(lib, doc_id)
    (doc,) = process_queue(lib)
    assert doc.status == DocStatus.READY
    meta = lib.metadata.get(doc_id)
    assert meta.title == "Heliotrope Solvers (corrected)" and meta.sources["title"] == "manual"
    assert meta.authors == ["Ada King", "Alan Turing"] and meta.sources["year"] != "manual"
    assert lib.documents.get(doc_id).display_title == "Heliotrope Solvers (corrected)"
    correct_field(lib, doc_id, "title", "")
    correct_field(lib, doc_id, "authors", "")
    assert lib.metadata.get(doc_id).title == TITLE and lib.documents.get(doc_id).display_title == TITLE


@pytest.mark.slow
def test_meta_refresh_backfills_a_paper_ingested_without_metadata_and_meta_set_reports_cuts(workspace, monkeypatch,
                                                                                            capsys):
    ws, doc_id = workspace
    lib = open_library(ws)
    with lib.db.connect() as conn:  # as a workspace built before metadata existed
        conn.execute("DELETE FROM paper_metadata")
    monkeypatch.setenv("PAPERGRAPH_WORKSPACE", str(ws.root))
    assert cli_main(["meta", "refresh"]) == 0
    assert "Lovelace et al. 2021" in capsys.readouterr().out and lib.metadata.get(doc_id).title == TITLE
    hostile = "V\x1b]0;pwned\x07" + "x" * 100_000
    assert cli_main(["meta", "set", doc_id[:10], "--field", "venue", "--value", hostile]) == 0
    out = capsys.readouterr()
    assert "venue cut to 300 characters (it had 100,0" in out.err and "\x1b" not in out.out
    assert "\x1b" not in lib.metadata.get(doc_id).venue and len(lib.metadata.get(doc_id).venue) == 300
    assert cli_main(["meta", "set", doc_id[:10], "--field", "year", "--value", "MMXXI"]) == 2
    assert "year must be four digits" in capsys.readouterr().err
    correct_field(lib, doc_id, "venue", "")


@pytest.mark.slow
def test_deleting_a_paper_removes_its_metadata_hand_corrections_included(workspace, tmp_path):
    ws, _ = workspace
    lib = open_library(ws)
    pdf = paper(tmp_path, name="other.pdf", title="A Second Paper on Marigold Sampling of Larvae")
    doc_id = add_pdf(lib, pdf.name, pdf.read_bytes()).doc_id
    process_queue(lib)
    correct_field(lib, doc_id, "year", "1999")
    assert footprint(lib, [doc_id])["metadata"] > 0
    delete_document(lib, doc_id)
    assert +footprint(lib, [doc_id]) == Counter() and lib.metadata.get(doc_id) is None
