"""Signs that the parser merged a table's cells (two metrics in one header cell, rows of several numbers in one
cell): past a share of the rows the columns cannot be trusted and the table gives no records
(core.pipeline.results.merged splits the regular cases back first)."""
from __future__ import annotations

import re

from core.pipeline.results.headers import Layout
from core.pipeline.results.values import clean_text, is_number_cell
from core.text.result_names import is_metric_name

_NUMBER_TOKEN = re.compile(r"^[-+−–]?(?:\d+\.\d+|\.\d+|\d+)%?$")


def _numbers_run(text: str) -> int:
    """How many number tokens the text ends with ("First k Sent 30.41 9.67" → 2, "0.65 0.69" → 2)."""
    n = 0
    for token in reversed(text.split()):
        if not _NUMBER_TOKEN.match(token):
            break
        n += 1
    return n


def _two_metrics(text: str) -> bool:
    """"MAP nDCG", "nDCG MAP": two metric names side by side in one header cell, two columns' headers a parser
    merged (a metric's own name of several words, "word error rate", is one)."""
    words = text.split()  # a letter alone ("Spearman ρ", "ROUGE-L F") qualifies the name before it
    return len(words) >= 2 and not is_metric_name(text) and \
        sum(len(w) >= 2 and is_metric_name(w) for w in words) >= 2


MAX_MERGED_ROWS = 1 / 3  # of the body rows: past this the table's columns cannot be trusted


def merged_rows(layout: Layout) -> set[int] | None:
    """Body rows whose cells a parser merged (a cell of several numbers, "21.97 7.17 13.61", or a row label ending
    in them, "BERT-EXT 36.94 10.65": the row's values sit under the wrong headers). None when the whole table lost
    its alignment: a header cell holding two metrics or several numbers, or merged rows past MAX_MERGED_ROWS. A
    value read under the wrong header is worse than none, so the caller gives no records for these rows (or for the
    table) unless merged.split_merged can undo the merge."""
    for path in layout.col_paths.values():
        if any(_two_metrics(text) or _numbers_run(text) >= 2 for text, _ in path):
            return None  # two headers in one cell, or body rows merged into the header ("90.01 77.28 88.57")
    merged = set()
    body = layout.body_rows()
    for r in body:
        cells = [clean_text(c) for c in layout.rows[r]]
        if any(_numbers_run(t) >= 2 and not is_number_cell(t) for t in cells):
            merged.add(r)
    if body and len(merged) > MAX_MERGED_ROWS * len(body):
        return None
    return merged
