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
          # One venue as two papers' venue lines give it (pages, a zero-width space): one filter option.
          ("Marigold Sampling of Larval Currents Revisited", "Grace Hopper and Kurt Gödel",
           "Imaginary Conference, pages 1–9"),
          ("Tangled Currents in Shallow Larval Tanks", "Alan Turing", "Imaginary  Conference\u200b, pages 10–19")]


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


def test_an_editor_of_a_loopback_app_imports_a_zotero_folder_by_its_path(monkeypatch, workspace, tmp_path):
    import os

    from core.presentation.citations import papers_metadata
    from tests.zotero_folder import ZoteroFolder

    z = ZoteroFolder(tmp_path / "Zotero")
    item = z.add_item("journalArticle", "ITEM0001", {"title": "Combating Web Spam with TrustRank", "date": "2004"},
                      [("Zoltán", "Gyöngyi")])
    z.add_attachment(item, "AAAA0001", "storage:paper.pdf")
    os.symlink("/etc/passwd", z.storage("AAAA0001") / "paper.pdf")
    z.close()
    at = run_app(monkeypatch, workspace.root)
    at.text_input(key="library_import_path").input(str(z.root)).run()
    at.button(key="library_import_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "0 PDFs, 1 metadata-only entries, 1 skipped" in texts(at.success).replace("\\", "")
    report = at.dataframe[0].value.to_string()
    assert "skipped: a symbolic link: links are not followed" in report
    assert any(m.title == "Combating Web Spam with TrustRank" and m.sources["title"] == "zotero"
               for m in papers_metadata(open_library(workspace)))
    at.text_input(key="library_import_path").input(str(tmp_path / "nothing.bib")).run()
    at.button(key="library_import_run").click().run()
    assert "nothing.bib: no such file or folder" in texts(at.error).replace("\\", "")


def test_served_to_a_network_the_app_reads_no_path_and_points_to_the_command_line(monkeypatch, workspace):
    from streamlit.testing.v1 import AppTest
    from streamlit.testing.v1.util import patch_config_options

    from core.settings import accounts
    from tests.paths import APP

    monkeypatch.setenv("PAPERGRAPH_WORKSPACE", str(workspace.root))
    monkeypatch.setenv(accounts.INSECURE_ENV, "1")  # every visitor an editor: the importer must still be absent
    at = AppTest.from_file(APP, default_timeout=60)
    with patch_config_options({"server.address": "0.0.0.0"}):
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [t for t in at.text_input if t.key == "library_import_path"]
    assert "python -m core import-zotero" in texts(at.caption)
