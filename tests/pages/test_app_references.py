"""The Document page's references panel through AppTest, over a real workspace of two papers citing each other
(tests/references_papers.py): cites and cited by, in your library, each with its sentence and a link to the other
paper; the references not in the library, with their BibTeX export; a hostile entry shown as text."""
from __future__ import annotations

import pytest

from core.library import open_library
from core.pipeline.documents import add_pdf
from core.pipeline.ingest import process_queue
from tests.graph_papers import fast_workspace
from tests.pages.app_helpers import _unescaped_markup, run_app, texts
from tests.references_papers import heliotrope_pdf, marigold_pdf


@pytest.fixture(scope="module")
def cited_pair(tmp_path_factory):
    root = tmp_path_factory.mktemp("refs-ws")
    lib = open_library(fast_workspace(root / "ws"))
    ids = [add_pdf(lib, pdf.name, pdf.read_bytes()).doc_id
           for pdf in (marigold_pdf(root / "pdfs"), heliotrope_pdf(root / "pdfs"))]
    assert all(d.status == "ready" for d in process_queue(lib))
    return root / "ws", ids


def test_document_page_shows_cites_and_cited_by_in_the_library_with_sentences(monkeypatch, cited_pair):
    root, (marigold, heliotrope) = cited_pair
    at = run_app(monkeypatch, root, "pages/document.py", {"doc": heliotrope[:12]})
    panel = next(e for e in at.expander if e.label.startswith("References"))
    assert panel.label == "References · cites 1 and cited by 1 in your library · 2 not in your library"
    shown = texts(panel.markdown)
    assert "Cites, in your library" in shown and "Cited by, in your library" in shown
    # Its own sentence citing the other paper, and the other paper's sentence citing it, escaped as text.
    assert "> Marigold lattices \\[1\\] stall on dense graphs" in shown
    assert "> Heliotrope solvers were introduced by Lovelace et al\\. \\(2021\\)" in shown
    labels = {p.proto.label for p in panel.get("page_link")}
    assert "Page 1 · [1]" in labels and "Page 1 · Lovelace et al. (2021)" in labels, "each sentence opens its page"
    assert any("Marigold Lattices Revisited" in label for label in labels), "a link to the other paper"
    outside = panel.dataframe[0].value.to_string()
    assert "Okapi sampling for lattices" in outside and "Marigold" not in outside
    assert "<script>alert('refs')</script>" in outside, "a hostile entry is a cell of text, shown as printed"
    assert not _unescaped_markup(texts(at.markdown)) and not _unescaped_markup(texts(at.caption))
    assert any(b.proto.label == "Export BibTeX (2 references)" for b in panel.get("download_button"))
