"""The Graph page shows a biology paper's field types (disease, gene_or_protein, assay …) among its type filters, and
filtering by one keeps its entities; the graph itself is an iframe AppTest cannot see into, its colours are checked
in tests/graph/test_fields.py."""
from __future__ import annotations

import pytest

from core.library import open_library
from core.pipeline.documents import add_document
from core.pipeline.graph.stage import process_graph_queue
from core.pipeline.ingest import process_queue
from tests.graph.test_fields import BIO_ABSTRACT
from tests.graph_papers import fast_workspace
from tests.pages.app_helpers import run_app, texts

PAGE = "pages/graph.py"


@pytest.fixture(scope="module")
def bio_ws(tmp_path_factory):
    root = tmp_path_factory.mktemp("app-graph-fields") / "ws"
    lib = open_library(fast_workspace(root))
    text = "# Retinal markers of AMD\n\n" + BIO_ABSTRACT.replace("\nMETHODS", "\n\nMETHODS").replace(
        "\nRESULTS", "\n\nRESULTS").replace("\nCONCLUSIONS", "\n\nCONCLUSIONS")
    add_document(lib, "amd.md", text.encode("utf-8"))
    for doc in process_queue(lib):
        assert doc.status == "ready", doc.message
    for doc in process_graph_queue(lib):
        assert doc.graph_status == "done", doc.graph_message
    return root


def test_the_type_filter_lists_the_field_types_and_filters_by_them(monkeypatch, bio_ws):
    at = run_app(monkeypatch, bio_ws, PAGE)
    assert not at.exception, [e.value for e in at.exception]
    options = at.multiselect(key="g_types").options
    assert {"disease", "gene_or_protein", "assay"} <= set(options), options
    assert "model" not in options and "task" not in options, options
    at.multiselect(key="g_types").set_value(["disease"]).run()
    assert not at.exception, [e.value for e in at.exception]
    (box,) = [e for e in at.expander if e.label.startswith("Filters")]
    assert box.label == "Filters · 1 entity type"
    assert "disease" in texts(at.caption).lower() or at.multiselect(key="g_types").value == ["disease"]
