"""The Results page (AppTest): pick a dataset and a metric or search, the leaderboard across the library with its
paper, year, page and cell; a selected row shows its table cropped from the page; filters; exports; hostile cells
shown as text. And the Document page's Results section. Real ingest of a generated paper (its results table read
at ingest) plus hand-made records of two more papers (tests/results_records.py)."""
from __future__ import annotations

import pytest

from core.library import open_library
from core.pipeline.documents import add_pdf
from core.pipeline.graph.stage import process_graph_queue
from core.pipeline.ingest import process_queue
from tests import pdfs
from tests.graph_papers import fast_workspace
from tests.pages.app_helpers import _unescaped_markup, run_app, texts
from tests.results_records import add_papers


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("results-page")
    lib = open_library(fast_workspace(root / "ws"))
    pdf = pdfs.make_paper_pdf(root / "paper.pdf", pages=1)
    doc_id = add_pdf(lib, "paper.pdf", pdf.read_bytes()).doc_id
    process_queue(lib)
    process_graph_queue(lib, communities=False)  # nothing left for the app's background stage to do
    add_papers(lib, hostile=True)
    return lib, doc_id


def shown(at) -> str:
    return "\n".join([texts(at.markdown), texts(at.caption), texts(at.subheader), texts(at.info)])


def select(at, n: int, row: int) -> None:
    """Select a row of the n-th leaderboard as a click would (its key names the filters it was drawn for)."""
    key = next(k for k in at.session_state if k.startswith("results_table_") and k.endswith(f"_{n}"))
    at.session_state[key] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    at.run()
    assert not at.exception, [e.value for e in at.exception]


@pytest.mark.slow
def test_a_dataset_and_metric_give_the_leaderboard_and_a_row_its_table(monkeypatch, workspace):
    lib, _ = workspace
    at = run_app(monkeypatch, lib.workspace.root, page="pages/results.py")
    assert "Pick a dataset" in shown(at)
    at.selectbox(key="results_dataset").set_value("scidocs").run()
    assert {"SciDocs — Avg\\.", "SciDocs — MAP"} <= set(texts(at.subheader).splitlines())  # Markdown-escaped
    at.selectbox(key="results_metric_scidocs").set_value("avg.").run()
    assert not at.exception
    (frame,) = at.dataframe
    table = frame.value
    assert table["Method"].tolist()[0] == "SPECTER" and table["Value"].tolist()[0] == "80.0"
    assert table.iloc[0]["Page"] == 4 and table.iloc[0]["Cell"] == "Table 1, row 8, column 6"
    assert table.iloc[0]["Year"] == 2020 and table.iloc[0]["Paper"].startswith("SPECTER")
    assert "higher is better" in texts(at.caption)
    assert len(at.get("download_button")) == 3  # CSV, Markdown, LaTeX
    at.text_input(key="results_year").input("2019").run()
    assert at.dataframe[0].value["Method"].tolist() == ["SciBERT"]
    at.text_input(key="results_year").input("").run()
    select(at, 0, 0)
    assert "**SPECTER**: Avg\\. 80\\.0 on SciDocs" in texts(at.markdown)
    assert "No image of this table" in texts(at.caption)  # a hand-made paper has no parse to crop from
    select(at, 0, 1)  # the hostile paper's row: its cells shown as text
    assert "HYPERLINK" in texts(at.markdown) and "\x1b" not in shown(at)
    assert not _unescaped_markup(shown(at))


@pytest.mark.slow
def test_a_search_finds_a_tables_results_and_shows_its_crop(monkeypatch, workspace):
    lib, _ = workspace
    at = run_app(monkeypatch, lib.workspace.root, page="pages/results.py")
    at.text_input(key="results_query").input("Heliotrope").run()
    assert "Dataset not named — Accuracy" in texts(at.subheader)
    select(at, 0, 0)
    assert len(at.get("image")) == 1, "the table cropped from its page"
    assert [p.proto.label for p in at.get("page_link")] == ["Open the paper at this page"]


@pytest.mark.slow
def test_the_document_page_lists_the_papers_results(monkeypatch, workspace):
    lib, doc_id = workspace
    at = run_app(monkeypatch, lib.workspace.root, page="pages/document.py", query_params={"doc": doc_id})
    expander = next(e for e in at.expander if e.label.startswith("Results · "))
    assert expander.label == "Results · 6 read from its tables"
    frame = next(d for d in at.dataframe if "Metric" in d.value.columns).value
    assert ("Heliotrope", "Accuracy", "91.4") in set(zip(frame["Method"], frame["Metric"], frame["Value"]))
