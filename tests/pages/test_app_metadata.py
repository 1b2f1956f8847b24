"""Papers named as papers in the app (AppTest over a real workspace parsed with the builtin parser): the Library's
authors, year and venue columns, its filter by year and its BibTeX export; the Document page's metadata panel,
where a correction is saved as "manual" and a hostile value is cut with a reason."""
from __future__ import annotations

import bibtexparser
import pytest

from core.library import open_library
from core.pipeline.documents import add_pdf
from core.pipeline.ingest import process_queue
from tests import pdfs
from tests.graph_papers import fast_workspace
from tests.pages.app_helpers import run_app, texts

pytestmark = pytest.mark.slow

PAPERS = [("Heliotrope Solvers for Sparse Zebrafish Migration Lattices", "Ada Lovelace and Alan Turing", 2019),
          ("Marigold Sampling of Larval Currents Revisited", "Grace Hopper, Institute of Imaginary Studies", 2021)]


def _sections(year: int) -> list[pdfs.Section]:
    return [("Abstract", [f"Published in the Proceedings of the Imaginary Conference on Lattices {year}. We study "
                          "migration graphs of zebrafish larvae and the solvers that sample them."]),
            ("1 Introduction", ["Each larva wanders through a tangle of currents, which makes sampling hard."])]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("app-metadata")
    ws = fast_workspace(root / "ws")
    lib = open_library(ws)
    for n, (title, authors, year) in enumerate(PAPERS):
        pdf = pdfs.make_paper_pdf(root / f"upload-{n}.pdf", title=title, authors=authors, sections=_sections(year),
                                  pages=1, with_table=False, with_figure=False)
        add_pdf(lib, pdf.name, pdf.read_bytes())
    assert all(d.status == "ready" for d in process_queue(lib))
    return ws


def test_library_shows_authors_year_venue_filters_by_year_and_exports_bibtex(monkeypatch, workspace):
    at = run_app(monkeypatch, workspace.root)
    table = at.dataframe[0].value
    assert {"authors", "year", "venue"} <= set(table.columns)
    assert sorted(table["year"].dropna().astype(int)) == [2019, 2021]
    assert "Ada Lovelace, Alan Turing" in set(table["authors"]) and "Grace Hopper" in set(table["authors"])
    export = next(b for b in at.get("download_button") if b.label.startswith("Export BibTeX"))
    assert export.label == "Export BibTeX (2 listed)"
    at.slider(key="year_filter_2019_2021").set_value((2021, 2021)).run()
    at.checkbox(key="year_filter_unknown").uncheck().run()
    assert not at.exception, [e.value for e in at.exception]
    assert list(at.dataframe[0].value["year"]) == [2021]
    assert "1 of 2 documents published 2021–2021" in texts(at.caption)
    assert next(b for b in at.get("download_button") if b.label.startswith("Export BibTeX")).label == \
        "Export BibTeX (1 listed)"


def test_library_bibtex_parses_back_with_one_entry_per_paper(workspace):
    from core.presentation.bibtex import to_bibtex
    from core.presentation.citations import papers_metadata

    text = to_bibtex(papers_metadata(open_library(workspace)))
    keys = {e.key for e in bibtexparser.parse_string(text).entries}
    assert keys == {"lovelace2019heliotrope", "hopper2021marigold"}


def test_document_page_shows_the_metadata_and_saves_a_correction_as_manual(monkeypatch, workspace):
    lib = open_library(workspace)
    doc = next(d for d in lib.documents.list() if d.display_title == PAPERS[0][0])
    at = run_app(monkeypatch, workspace.root, "pages/document.py", {"doc": doc.id})
    box = next(e for e in at.expander if e.label.startswith("Bibliographic metadata"))
    assert "Lovelace and Turing 2019" in box.label
    assert "first page" in box.dataframe[0].value.to_string()
    at.text_input(key=f"meta_title_{doc.id[:16]}").input("Heliotrope <script>alert(1)</script> solvers")
    at.text_input(key=f"meta_venue_{doc.id[:16]}").input("v" * 10_000)
    at.button[[b.label for b in at.button].index("Save corrections")].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "venue cut to 300 characters (it had 10,000)" in texts(at.warning).replace("\\", "")
    meta = lib.metadata.get(doc.id)
    assert meta.title == "Heliotrope <script>alert(1)</script> solvers" and meta.sources["title"] == "manual"
    assert lib.documents.get(doc.id).display_title == meta.title
    assert "<script>" not in at.header[0].value  # the header renders it as text
