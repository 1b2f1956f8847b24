"""Header shapes of grids rebuilt from the text layer (parsing/table_grid_repair.py) read for results: rows the
corner names ("Subtask →") keep their names as datasets under a caption naming the suite, and a name the rebuilt
grid put on a row of its own takes the role of the named row it belongs to."""
from __future__ import annotations

from core.pipeline.results.records import table_records
from tests.pipeline.results_tables import one, read, table


def _own(item, paper_dataset):
    """Records of one table of a dataset paper (its own dataset given, as context.paper_dataset finds it)."""
    return table_records("doc", item, "Table", item.captions[0], [], paper_dataset=paper_dataset)

SUITE = ("<table>"
         "<tr><th>Task →</th><th colspan=2>Classification</th><th colspan=2>Citation prediction</th><th></th>"
         "<th></th><th></th></tr>"
         "<tr><th></th><th></th><th></th><th></th><th></th><th colspan=2>Recomm.</th><th></th></tr>"
         "<tr><th></th><th></th><th></th><th></th><th></th><th></th><th></th><th>Avg.</th></tr>"
         "<tr><th>Subtask →</th><th>MAG</th><th>MeSH</th><th>Cite</th><th>Co-Cite</th><th></th><th></th><th></th></tr>"
         "<tr><th>Model ↓/ Metric →</th><th>F1</th><th>F1</th><th>MAP</th><th>MAP</th><th>nDCG</th><th>P@1</th>"
         "<th></th></tr>"
         "<tr><td>SciBERT</td><td>79.7</td><td>80.7</td><td>48.3</td><td>49.7</td><td>52.1</td><td>17.9</td>"
         "<td>59.6</td></tr>"
         "<tr><td>SPECTER</td><td>82.0</td><td>86.4</td><td>88.3</td><td>88.1</td><td>53.9</td><td>20.0</td>"
         "<td>80.0</td></tr></table>")


def test_subtask_row_named_by_the_corner_gives_datasets_under_a_suite_caption():
    records = read(table(SUITE, caption="Table 1: Results on the SCIDOCS evaluation suite consisting of 7 tasks."))
    assert one(records, "SPECTER", metric="MAP", dataset="Cite").value == 88.3  # not a setting of "SCIDOCS"
    assert one(records, "SPECTER", metric="MAP", dataset="Co-Cite").value == 88.1
    assert one(records, "SciBERT", metric="F1", dataset="MAG").value == 79.7
    r = one(records, "SPECTER", metric="P@1")
    assert r.dataset == "Recomm." and r.value == 20.0  # printed above the subtask row, over the columns it leaves blank
    avg = one(records, "SPECTER", metric="Avg.")
    assert avg.value == 80.0 and avg.dataset == "SCIDOCS"
    assert r.extra.get("caption_dataset") == "SCIDOCS"  # the suite kept for a question naming it


def _rows(*rows):
    return "<table>" + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows) + "</table>"


SIDE_BY_SIDE = _rows(["Models", "R-1", "R-2", "Target", "R-1", "R-2"],
                     ["", "L →S Fine-tuning", "L →S Fine-tuning", "", "{L, D} →S", "{L, D} →S"],
                     ["PEGASUS", "54.32", "35.62", "Gold L", "54.99", "36.42"],
                     ["BART", "56.04", "37.02", "Predicted L′", "41.41", "18.24"],
                     ["", "", "L →T Fine-tuning", "", "", "{L, D} →T"],
                     ["PEGASUS", "32.86", "14.44", "Gold L", "34.07", "14.84"],
                     ["BART", "31.65", "13.05", "Predicted L′", "23.63", "7.98"])


def test_group_rows_under_the_metric_row_and_a_second_label_column_of_side_by_side_tables():
    """A number-less row under the metric row is the body's first group row, never a header; a text column among
    the value columns labels the columns right of it; each block takes its own group label; the labels do not look
    like names, so they are settings of the paper's own dataset."""
    records = _own(table(SIDE_BY_SIDE, caption="Table 4: Model performance on SDS tasks."), "Multi-LexSum")
    assert len(records) == 16
    r = one(records, "BART", metric="R-2", setting="L →T Fine-tuning")
    assert r.value == 13.05 and r.dataset == "Multi-LexSum"
    r = one(records, "Predicted L′", metric="R-1", setting="{L, D} →S")
    assert r.value == 41.41 and r.dataset == "Multi-LexSum"
    assert one(records, "Gold L", metric="R-2", setting="{L, D} →T").value == 14.84


def test_a_group_row_opening_with_a_name_the_caption_compares_is_the_method():
    body = _rows(["Lengths", "R-1", "R-2", "R-1", "R-2"],
                 ["", "BART, Multitask: D →{L, S}", "BART, Multitask: D →{L, S}", "BART, Single-task: D →L, D →S",
                  "BART, Single-task: D →L, D →S"],
                 ["L", "47.89", "23.24", "40.79", "20.01"],
                 ["S", "43.80", "20.14", "43.35", "19.91"],
                 ["", "BART, Multitask: L →{S}", "", "", "BART, Single-task: L →S"],
                 ["S", "55.20", "36.11", "56.04", "37.02"])
    records = _own(table(body, caption="Table 5: Comparing BART performance under multitask and single-task "
                                       "scenarios."), "Multi-LexSum")
    r = one(records, "BART, Single-task: D →L, D →S", metric="R-1", setting="S")
    assert r.value == 43.35 and r.dataset == "Multi-LexSum"
    assert one(records, "BART, Single-task: L →S", metric="R-2", setting="S").value == 37.02
    assert one(records, "BART, Multitask: L →{S}", metric="R-2", setting="S").value == 36.11


def test_a_row_of_merged_numbers_is_no_group_row():
    body = _rows(["Model", "R-1", "R-2"], ["K-fold", "47.00(0.13) 47.25(0.02)", "22.89(0.13) 23.00(0.08)"],
                 ["Hold-out", "47.21", "23.05"])
    records = read(table(body, caption="Table 9: Results on Multi-LexSum."))
    assert {r.method for r in records} <= {"Hold-out", "K-fold"} and not any("(" in r.dataset for r in records)
