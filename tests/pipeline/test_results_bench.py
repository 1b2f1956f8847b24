"""bench/results_accuracy.py's scope of a judged table: "first N data rows" counts the table's rows holding a number
below its header, group rows left out (the blind judges' convention and the frozen test's)."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

from tests.pipeline.results_tables import paper, read, table

_PATH = Path(__file__).resolve().parents[2] / "bench" / "results_accuracy.py"


def _bench():
    spec = importlib.util.spec_from_file_location("results_accuracy", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_first_n_data_rows_counts_rows_with_numbers_in_order():
    bench = _bench()
    body = ("<table><tr><th>Model</th><th>F1</th></tr><tr><td colspan=2>Baselines</td></tr>"
            "<tr><td>A</td><td>80.0</td></tr><tr><td>B</td><td>81.0</td></tr><tr><td>C</td><td>82.0</td></tr>"
            "</table>")
    item = paper(table(body, caption="Table 1: Results on SQuAD."))[0]
    assert bench._data_rows(item) == [2, 3, 4]
    records = read(table(body, caption="Table 1: Results on SQuAD."))
    fake = SimpleNamespace(data_rows={0: bench._data_rows(item)}, row_labels={})
    assert [r.method for r in records if bench._in_scope(r, "first 2 data rows", fake)] == ["A", "B"]
    assert len([r for r in records if bench._in_scope(r, "all", fake)]) == 3


def test_a_sanitised_file_name_is_found():
    bench = _bench()
    assert bench._file_key("papermage__2206.10883v3.pdf") == bench._file_key("papermage_2206.10883v3.pdf")
