"""BibTeX in (core/pipeline/metadata/bib_import.py): a Zotero-style .bib whose `file` fields name PDFs is ingested
with the entries' metadata, and exported again it gives the same metadata; links, paths outside the folder and
files that are not PDFs are skipped with the reason; hostile fields are cut and stay text."""
from __future__ import annotations

import os

import bibtexparser
import pytest

from core.cli import main as cli_main
from core.library import open_library
from core.pipeline.gc import collect_garbage
from core.pipeline.ingest import process_queue
from core.pipeline.metadata.bib_import import entry_metadata, file_paths, import_bibtex
from core.pipeline.metadata.fields import clean_field
from core.presentation.bibtex import to_bibtex
from core.presentation.citations import papers_metadata
from core.schema.records import DocStatus
from tests import pdfs
from tests.graph_papers import fast_workspace

BIB = r"""
@inproceedings{cohan2020specter,
  title = {{SPECTER}: Document-level Representation Learning using Citation-informed Transformers},
  author = {Cohan, Arman and Feldman, Sergey and Beltagy, Iz and Downey, Doug and Weld, Daniel S.},
  year = {2020},
  booktitle = {Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics},
  doi = {10.18653/v1/2020.acl-main.207},
  abstract = {We propose SPECTER, trained on 100\% of the citation graph \& more.},
  file = {Full Text PDF:papers/specter.pdf:application/pdf}
}
@article{lo2020s2orc,
  title = {S2ORC: The Semantic Scholar Open Research Corpus},
  author = {Kyle Lo and Lucy Lu Wang},
  year = {2020},
  journal = {Journal of Open Corpora},
  eprint = {2004.12345}, archiveprefix = {arXiv},
  abstract = {A corpus of 81.1M papers.},
  file = {papers/s2orc.pdf}
}
@misc{gyongyi2004trustrank,
  title = {Combating Web Spam with {TrustRank}},
  author = {Gy{\"o}ngyi, Zolt{\'a}n and Garcia-Molina, Hector},
  year = {2004},
  abstract = {No PDF: a metadata-only entry.}
}
@article{linked, title = {A Linked Paper}, author = {Ann Link}, year = {2019}, file = {papers/link.pdf}}
@article{outside, title = {Outside Paper}, author = {Out Side}, year = {2018},
  file = {Outside:../secret.pdf:application/pdf;Abs:/etc/passwd:text/plain}}
@article{notpdf, title = {Notes Not A Paper}, author = {Not Pdf}, year = {2017}, file = {papers/notes.txt}}
"""


def metadata_of(bib_text: str) -> dict[str, dict]:
    """title → every field as the import reads it (the same reader for the original and the export)."""
    out = {}
    for entry in bibtexparser.parse_string(bib_text).entries:
        fields = {f.key.lower(): str(f.value) for f in entry.fields}
        values = {name: clean_field(name, value)[0] for name, value in entry_metadata(fields).items()}
        out[values["title"]] = values
    return out


@pytest.fixture
def zotero_folder(tmp_path):
    folder = tmp_path / "zotero"
    papers = folder / "papers"
    papers.mkdir(parents=True)
    pdfs.make_paper_pdf(papers / "specter.pdf", title="A Title The Bib Overrides", pages=1, with_table=False,
                        with_figure=False)
    pdfs.make_paper_pdf(papers / "s2orc.pdf", title="Another Title The Bib Overrides", pages=1, with_table=False,
                        with_figure=False, authors="Someone Else, Nowhere University")
    pdfs.make_text_pdf(tmp_path / "secret.pdf", text_per_page="outside the folder")
    os.symlink(tmp_path / "secret.pdf", papers / "link.pdf")
    (papers / "notes.txt").write_text("not a pdf")
    (folder / "library.bib").write_text(BIB, encoding="utf-8")
    return folder


@pytest.mark.slow
def test_a_zotero_bib_is_ingested_with_its_metadata_and_exports_unchanged(tmp_path, zotero_folder):
    lib = open_library(fast_workspace(tmp_path / "ws"))
    report = import_bibtex(lib, zotero_folder / "library.bib")
    assert [key for key, _, _ in report.added] == ["cohan2020specter", "lo2020s2orc"]
    assert [key for key, _ in report.entries] == ["gyongyi2004trustrank", "linked", "outside", "notpdf"]
    reasons = dict(report.skipped)
    assert reasons["linked: papers/link.pdf"] == "a symbolic link: links are not followed"
    assert reasons["outside: ../secret.pdf"].startswith("outside the folder")
    assert reasons["outside: /etc/passwd"].startswith("outside the folder")
    assert reasons["notpdf: papers/notes.txt"].startswith("not a PDF")
    assert all(d.status == DocStatus.READY for d in process_queue(lib))
    specter = lib.metadata.get(report.added[0][1])
    assert specter.title.startswith("SPECTER: Document-level") and specter.sources["title"] == "bibtex"
    assert specter.authors[0] == "Arman Cohan" and specter.year == 2020
    assert lib.documents.get(report.added[0][1]).display_title == specter.title  # not the PDF's own title
    exported = metadata_of(to_bibtex(papers_metadata(lib)))
    original = metadata_of(BIB)
    for title, values in original.items():
        assert exported[title] == values, title  # title, authors, year, venue, DOI, arXiv id, abstract
    assert exported["Combating Web Spam with TrustRank"]["authors"] == ["Zoltán Gyöngyi", "Hector Garcia-Molina"]
    collect_garbage(lib, min_age_s=0)  # metadata-only entries are no orphans
    assert len(papers_metadata(lib)) == 6


def test_hostile_bib_fields_are_cut_and_stay_text(tmp_path):
    lib = open_library(fast_workspace(tmp_path / "ws"))
    bib = tmp_path / "hostile.bib"
    bib.write_text("@article{evil, title = {\\input{/etc/passwd} <script>alert(1)</script> " + "x" * 100_000 + "},\n"
                   "  author = {Evil\x1b[2J, Eve}, year = {MMXX}, file = {C\\:\\\\Windows\\\\evil.pdf}}\n"
                   "@article{broken, title = {unclosed\n", encoding="utf-8")
    report = import_bibtex(lib, bib)
    (key, entry), = report.entries
    meta = lib.metadata.get(entry)
    assert len(meta.title) == 500 and "<script>" in meta.title and "\x1b" not in meta.authors[0]
    assert any("title cut to 500 characters" in n for n in report.notes)
    assert any("year must be four digits" in n for n in report.notes) and meta.year is None
    assert any(why.startswith("outside the folder") for _, why in report.skipped)
    assert ("line 3", "not a BibTeX entry bibtexparser can read") in report.skipped  # the unclosed one
    exported = to_bibtex([meta])
    # a .bib's LaTeX is read as LaTeX: the \input command is dropped, the rest is text, and the export escapes it
    assert "passwd" not in meta.title and "\\input{" not in exported and "<script>alert(1)</script>" in exported


def test_zotero_file_fields_name_their_paths():
    assert file_paths("Full Text:files/a b.pdf:application/pdf;Snapshot:files/s.html:text/html") == \
        ["files/a b.pdf", "files/s.html"]
    assert file_paths("files/plain.pdf") == ["files/plain.pdf"]
    assert file_paths(r"PDF:C\:\\Users\\x.pdf:application/pdf") == [r"C:\\Users\\x.pdf"]


@pytest.mark.slow
def test_core_import_bib_reports_what_it_skipped(tmp_path, zotero_folder, monkeypatch, capsys):
    monkeypatch.setenv("PAPERGRAPH_WORKSPACE", str(fast_workspace(tmp_path / "ws").root))
    assert cli_main(["import-bib", str(zotero_folder / "library.bib"), "--no-ingest", "-q"]) == 0
    out = capsys.readouterr()
    assert "2 PDFs, 4 metadata-only entries, 4 skipped" in out.out
    assert "skipped   linked: papers/link.pdf: a symbolic link" in out.err
    assert cli_main(["cite", "--format", "csl"]) == 0
    assert "Combating Web Spam with TrustRank" in capsys.readouterr().out
