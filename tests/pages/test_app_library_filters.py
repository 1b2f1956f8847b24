"""The Library page's filters by author and venue beside the one by year (AppTest over a real workspace parsed with
the builtin parser): typing an author or choosing a venue narrows the table, the caption and the BibTeX export."""
from __future__ import annotations

import pytest

from core.library import open_library
from core.pipeline.documents import add_pdf
from core.pipeline.ingest import process_queue
from tests import pdfs
from tests.graph_papers import fast_workspace
from tests.pages.app_helpers import run_app, texts

pytestmark = pytest.mark.slow

PAPERS = [("Heliotrope Solvers for Sparse Zebrafish Migration Lattices", "Ada Lovelace and Alan Turing",
           "Journal of Imaginary Lattices"),
          ("Marigold Sampling of Larval Currents Revisited", "Grace Hopper and Kurt Gödel", "Imaginary Conference"),
          ("Tangled Currents in Shallow Larval Tanks", "Alan Turing", "Imaginary Conference")]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("app-library-filters")
    ws = fast_workspace(root / "ws")
    lib = open_library(ws)
    for n, (title, authors, _) in enumerate(PAPERS):
        pdf = pdfs.make_paper_pdf(root / f"paper-{n}.pdf", title=title, authors=authors, pages=1, with_table=False,
                                  with_figure=False)
        add_pdf(lib, pdf.name, pdf.read_bytes())
    assert all(d.status == "ready" for d in process_queue(lib))
    for doc in lib.documents.list():  # the venue as an editor or an import gives it
        _, authors, venue = next(p for p in PAPERS if p[0] == doc.display_title)
        lib.metadata.set_field(doc.id, "venue", venue, "manual")
        lib.metadata.set_field(doc.id, "authors", authors.split(" and "), "manual")
    return ws


def titles(at) -> set[str]:
    return set(at.dataframe[0].value["title"])


def test_library_filters_by_author_and_by_venue(monkeypatch, workspace):
    at = run_app(monkeypatch, workspace.root)
    assert len(titles(at)) == 3
    assert at.multiselect(key="venue_filter").options == ["Imaginary Conference", "Journal of Imaginary Lattices"]
    at.text_input(key="author_filter").input("turing").run()
    assert not at.exception, [e.value for e in at.exception]
    assert titles(at) == {PAPERS[0][0], PAPERS[2][0]}
    assert "2 of 3 documents by an author matching 'turing'" in texts(at.caption).replace("\\", "")
    at.multiselect(key="venue_filter").select("Imaginary Conference").run()
    assert titles(at) == {PAPERS[2][0]}
    assert next(b for b in at.get("download_button") if b.label.startswith("Export BibTeX")).label == \
        "Export BibTeX (1 listed)"
    at.text_input(key="author_filter").input("godel; hopper").run()  # accents ignored, both authors needed
    assert titles(at) == {PAPERS[1][0]}
    at.text_input(key="author_filter").input("nobody").run()
    assert not at.exception and len(at.dataframe[0].value) == 0
