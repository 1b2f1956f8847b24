"""Leaderboards across the library (core.service.results) over real SQLite: grouped by dataset and metric, ranked
by the metric's direction, each row cited to its paper, year, page and cell; filters; pickers; exports that keep
the papers' text inert; the CLI."""
from __future__ import annotations

import csv
import io
import json

import pytest

from core.cli import main as cli_main
from core.library import open_library
from core.service import results as service
from core.service.errors import ServiceError
from core.service.results_export import md_cell, to_csv, to_latex, to_markdown
from tests.graph_papers import fast_workspace
from tests.results_records import HOSTILE, SCIBERT, SPECTER, add_papers


@pytest.fixture
def lib(tmp_path):
    lib = open_library(fast_workspace(tmp_path / "ws"))
    add_papers(lib, hostile=True)
    return lib


def test_a_leaderboard_ranks_across_papers_and_cites_each_cell(lib):
    view = service.leaderboard(lib, dataset="scidocs", metric="avg.")
    (board,) = view.boards
    assert board.dataset == "SciDocs" and board.direction == "higher"
    assert [(r.method, r.value_text) for r in board.rows] == [("SPECTER", "80.0"), ("=HYPERLINK(\"http://x\")|*b*",
                                                                 "70.0"), ("SciBERT", "61.0"),
                                                                ("SciBERT", "59.6")]
    top = board.rows[0]
    assert (top.rank, top.paper_id, top.year, top.page, top.table, top.cell) == (
        1, SPECTER, 2020, 4, "Table 1", "Table 1, row 8, column 6")
    assert top.paper.startswith("SPECTER") and top.best and top.box == [100.0, 200.0, 900.0, 500.0]
    # a cell's escape sequence is gone whole, for every face: "70.0 \x1b]0;pwned\x07" as stored


def test_a_lower_is_better_metric_ranks_the_smallest_first(lib):
    (board,) = service.leaderboard(lib, dataset="ChemProt", metric="error").boards
    assert board.direction == "lower" and [r.method for r in board.rows] == ["SciBERT", "BioBERT"]


def test_names_are_read_as_typed_and_an_unknown_one_is_said(lib):
    assert service.leaderboard(lib, dataset="Sci-Docs ").boards[0].dataset_key == "scidocs"
    view = service.leaderboard(lib, dataset="ImageNet")
    assert view.boards == [] and "no dataset named 'ImageNet'" in view.note


def test_filters_by_method_paper_year_setting_and_words(lib):
    def methods(**kw):
        return sorted((r.method, r.paper_id[:1]) for b in service.leaderboard(lib, **kw).boards for r in b.rows)

    assert methods(method="scibert", dataset="scidocs") == [("SciBERT", "a"), ("SciBERT", "a"), ("SciBERT", "b")]
    assert {p for _, p in methods(paper="scibert pretrained")} == {"b"}
    assert {p for _, p in methods(paper=SPECTER[:8])} == {"a"}
    assert {p for _, p in methods(year="2019")} == {"b"} and {p for _, p in methods(year="2020-2021")} == {"a", "c"}
    assert methods(setting="DEV") == [("Citeomatic", "a")]
    assert methods(query="chemprot bio") == [("BioBERT", "b"), ("BioBERT", "b")]
    with pytest.raises(ServiceError):
        service.leaderboard(lib, year="last year")


def test_pickers_list_datasets_and_a_datasets_metrics(lib):
    assert [(n.name, n.records, n.papers) for n in service.names(lib, "dataset")][:2] == [("SciDocs", 7, 3),
                                                                                           ("ChemProt", 4, 1)]
    assert {n.name for n in service.names(lib, "metric", dataset="chemprot")} == {"F1", "Error"}


def test_a_papers_own_results_in_table_order(lib):
    rows = service.paper_results(lib, SCIBERT[:10])
    assert [(r.row, r.col) for r in rows] == sorted((r.row, r.col) for r in rows) and len(rows) == 5


def test_exports_keep_the_papers_text_inert(lib):
    view = service.leaderboard(lib, dataset="scidocs", metric="avg.")
    rows = list(csv.reader(io.StringIO(to_csv(view))))
    hostile = next(r for r in rows[1:] if r[-1] == HOSTILE)
    assert hostile[3].startswith("'=HYPERLINK") and "\x1b" not in hostile[5] and hostile[4] == "70.0"
    md = to_markdown(view)
    line = next(x for x in md.splitlines() if "HYPERLINK" in x)
    assert line.count(" | ") == 6 and "\\|\\*b\\*" in line and "\\<b\\>" in line and "\x1b" not in md
    assert md_cell("a|b") == "a\\|b"
    tex = to_latex(view)
    assert r"\textbackslash{}input\{/etc/passwd\}" in tex and r"\$" in tex and r"\&" in tex
    assert "\\input{" not in tex and "\x07" not in tex


def test_the_cli_prints_the_leaderboard_and_its_formats(lib, monkeypatch, capsys):
    monkeypatch.setenv("PAPERGRAPH_WORKSPACE", str(lib.workspace.root))
    assert cli_main(["results", "--dataset", "SciDocs"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "SPECTER " in x and "80.0" in x)
    assert "p. 4, Table 1, row 8, column 6" in line and "2020" in line
    assert "\x1b" not in out and "\x07" not in out
    assert cli_main(["results", "--dataset", "scidocs", "--metric", "MAP", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["method"] for r in data["boards"][0]["rows"]] == ["Citeomatic", "SPECTER", "SciBERT"]
    assert cli_main(["results", "datasets"]) == 0 and "SciDocs" in capsys.readouterr().out
    assert cli_main(["results", "--dataset", "nothing"]) == 0 and "no dataset named" in capsys.readouterr().out
