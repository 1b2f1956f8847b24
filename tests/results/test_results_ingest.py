"""A paper's records arrive with it (computed by the worker, stored in the writer's commit), are replaced when it is
parsed again, and `core results rebuild` reads them for a workspace that has none (ingested before results
existed). Real ingest of MinerU output folders (tests/pipeline/test_delete_races.mineru_output: one results
table), SQLite, Chroma and the embedding model."""
from __future__ import annotations

from core.cli import main as cli_main
from core.library import open_library
from core.pipeline.documents import retry_document
from core.pipeline.ingest import process_queue
from core.service import results as service
from tests.graph_papers import fast_workspace
from tests.pipeline.test_delete_races import add_bert, add_roberta


def test_records_arrive_with_the_paper_and_rebuild_restores_them(tmp_path, monkeypatch, capsys):
    lib = open_library(fast_workspace(tmp_path / "ws"))
    bert, roberta = add_bert(lib, tmp_path), add_roberta(lib, tmp_path)
    process_queue(lib)
    stored = {d: lib.results.by_doc(d) for d in (bert, roberta)}
    assert [(r.method, r.value_text, r.page, r.cell_ref) for r in stored[bert]] == [
        ("BERT", "80.5", 0, "Table 1, row 2, column 2"), ("RoBERTa", "88.5", 0, "Table 1, row 3, column 2")]
    (board,) = service.leaderboard(lib, dataset="MNLI").boards
    assert [r.method for r in board.rows][:2] == ["RoBERTa", "RoBERTa"] and board.rows[0].paper

    retry_document(lib, bert)  # parsed again: replaced, not doubled
    process_queue(lib)
    assert lib.results.by_doc(bert) == stored[bert]

    with lib.db.transaction() as conn:  # a workspace from before results were read
        conn.execute("DELETE FROM paper_results")
    monkeypatch.setenv("PAPERGRAPH_WORKSPACE", str(lib.workspace.root))
    assert cli_main(["results", "rebuild"]) == 0
    assert "2 papers read, 4 results stored" in capsys.readouterr().out
    assert {d: lib.results.by_doc(d) for d in (bert, roberta)} == stored
