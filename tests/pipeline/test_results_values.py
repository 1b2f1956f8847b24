"""A table cell read as one reported number: its value, unit, spread and emphasis, or nothing when it is not one
number (a dash, words, two numbers a parser merged)."""
from __future__ import annotations

import pytest

from core.pipeline.results.values import BEST_MARK, mark_emphasis, read_pair, read_value


@pytest.mark.parametrize("cell, value, unit, spread, marked", [
    ("80.0", 80.0, "", None, False),
    ("85.3 ± 0.2", 85.3, "", 0.2, False),
    ("85.3±0.2%", 85.3, "%", 0.2, False),
    ("45.2 (1.3)", 45.2, "", 1.3, False),
    ("92.1*", 92.1, "", None, False),
    ("6.8†", 6.8, "", None, False),
    ("80.0%", 80.0, "%", None, False),
    ("12 ms", 12.0, "ms", None, False),
    ("1,234", 1234.0, "", None, False),
    ("−3.2", -3.2, "", None, False),
    ("1.2e-5", 1.2e-5, "", None, False),
    ("$\\mathbf{80.0}$", 80.0, "", None, True),
    ("$85.3_{\\pm 0.2}$", 85.3, "", 0.2, False),
    (BEST_MARK + "91.5", 91.5, "", None, True),
])
def test_a_number_cell(cell, value, unit, spread, marked):
    v = read_value(cell)
    assert v is not None and (v.value, v.unit, v.spread, v.marked) == (value, unit, spread, marked)


@pytest.mark.parametrize("cell", ["", "-", "–", "n/a", "yes", "full text", "0.965 0.969", "BERT-2", "9" * 100])
def test_not_one_number(cell):
    assert read_value(cell) is None


def test_pairs_and_emphasis():
    assert [v.value for v in read_pair("84.6/83.4")] == [84.6, 83.4]
    assert read_pair("1/2/3") is None and read_pair("a/1") is None
    marked = mark_emphasis("<td><b>80.0</b></td><td><strong>1</strong></td><td><u>2</u></td><td>\\textbf{3}</td>")
    assert marked.count(BEST_MARK) == 4 and "<b>" not in marked
