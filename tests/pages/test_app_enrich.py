"""The Document page's online-enrichment button (AppTest over a real workspace parsed with the builtin parser, a
local Crossref/OpenAlex double): off by default it is a caption and nothing is sent; on, a click fills the missing
authors' venue and DOI from a close title match, with their source shown."""
from __future__ import annotations

import pytest

from core.library import open_library
from core.pipeline.documents import add_pdf
from core.pipeline.ingest import process_queue
from pages.widgets import state
from tests import pdfs
from tests.graph_papers import fast_workspace
from tests.pages.app_helpers import run_app, texts
from tests.scholarly_server import ScholarlyServer, crossref_work

pytestmark = pytest.mark.slow

TITLE = "Heliotrope Solvers for Sparse Zebrafish Migration Lattices"
DOI = "10.5555/heliotrope.2019"


def test_the_button_fills_fields_only_once_enrichment_is_on(monkeypatch, tmp_path):
    ws = fast_workspace(tmp_path / "ws")
    lib = open_library(ws)
    pdf = pdfs.make_paper_pdf(tmp_path / "heliotrope.pdf", title=TITLE, authors="Ada Lovelace and Alan Turing",
                              sections=[("Abstract", ["We study migration graphs of zebrafish larvae."])], pages=1,
                              with_table=False, with_figure=False)
    doc_id = add_pdf(lib, pdf.name, pdf.read_bytes()).doc_id
    assert all(d.status == "ready" for d in process_queue(lib))
    with ScholarlyServer() as server:
        server.crossref[DOI] = crossref_work(DOI, TITLE, [("Ada", "Lovelace"), ("Alan", "Turing")], 2019,
                                             "Journal of Imaginary Lattices")
        settings = ws.settings()
        settings.metadata.crossref_url, settings.metadata.services = server.url + "/crossref", "crossref"
        ws.save_settings(settings)
        at = run_app(monkeypatch, ws.root, "pages/document.py", {"doc": doc_id})
        assert "Online enrichment is off" in texts(at.caption) and server.requests == []

        settings.metadata.online_enrichment = True
        ws.save_settings(settings)
        state._library.clear()  # what the Settings page's save does (state.reload_library)
        at = run_app(monkeypatch, ws.root, "pages/document.py", {"doc": doc_id})
        at.button(key=f"enrich_{doc_id[:16]}").click().run()
        assert not at.exception, [e.value for e in at.exception]
        meta = open_library(ws).metadata.get(doc_id)
        assert (meta.doi, meta.venue, meta.sources["doi"]) == (DOI, "Journal of Imaginary Lattices", "crossref")
        assert "filled" in texts(at.warning) and len(server.requests) == 1
