"""Header shapes of grids rebuilt from the text layer (parsing/table_grid_repair.py) read for results: rows the
corner names ("Subtask →") keep their names as datasets under a caption naming the suite, and a name the rebuilt
grid put on a row of its own takes the role of the named row it belongs to."""
from __future__ import annotations

from tests.pipeline.results_tables import one, read, table

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
