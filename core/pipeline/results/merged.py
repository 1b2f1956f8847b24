"""A table whose cells a parser merged, split back when the merge can be undone without guessing.

MinerU reads some tables without rules as runs of text: "First k Sent 30.41 9.67 14.50 9.73" is a row label and four
values in one cell, "R-1f1 R-2f1 R-Lf1 BSf1 Words" five headers in one. The columns are lost, but the order is not:
when every body row is a label followed by the same number N of numbers, and the last header row holds exactly N
names after its corner word ("Models"), the i-th number of each row is under the i-th name. Anything less regular
(a label in the middle of a row, rows with different counts, a header with more or fewer names) is not split: the
caller then gives no records for the table, since a value under the wrong header is worse than none.
"""
from __future__ import annotations

import re

from core.pipeline.results.values import clean_text, read_value

_SPREAD = re.compile(r"\s*(±|\+/-|\+-)\s*")  # "85.3 ± 0.2" stays one token
MIN_VALUES = 2  # a row of one number was never merged


def _tokens(cells: list[str]) -> list[tuple[str, int]]:
    """The cells' words, each with the column it was printed in."""
    return [(t, c) for c, cell in enumerate(cells) for t in _SPREAD.sub(r"\1", clean_text(cell)).split()]


def _row(cells: list[str]) -> tuple[str, list[tuple[str, int]]] | None:
    """(label, numbers) of a merged row: label words, then only numbers; None when words follow a number."""
    tokens = _tokens(cells)
    first = next((i for i, (t, _) in enumerate(tokens) if read_value(t) is not None), len(tokens))
    numbers = tokens[first:]
    if any(read_value(t) is None for t, _ in numbers):
        return None
    return " ".join(t for t, _ in tokens[:first]), numbers


def split_merged(rows: list[list[str]], header: int,
                 group_rows: set[int]) -> tuple[list[list[str]], dict[tuple[int, int], tuple[int, int]]] | None:
    """The grid rebuilt as one header row and one cell a value, with each new cell's (row, column) in the parsed
    grid (a record cites the cell the number was printed in); None when the merge cannot be undone. Emphasis
    marks inside a merged cell are lost with its cell boundaries (the marked values are read as unmarked)."""
    if header < 1:
        return None
    body = [r for r in range(header, len(rows)) if r not in group_rows]
    parsed = [_row(rows[r]) for r in body]
    if not parsed or any(p is None or not p[0] for p in parsed):
        return None
    counts = {len(p[1]) for p in parsed if p}
    if len(counts) != 1 or (n := counts.pop()) < MIN_VALUES:
        return None
    for h in reversed(range(header)):  # the header row holding one name a value (a group row above it does not)
        names = [t for t, _ in _tokens(rows[h])]
        if len(names) in (n, n + 1) and not any(read_value(t) is not None for t in names):
            break
    else:
        return None
    corner = names[0] if len(names) == n + 1 else ""
    out = [[corner, *names[-n:]]]
    origin = {(0, c): (h, 0) for c in range(n + 1)}
    for r, p in zip(body, parsed):
        label, numbers = p  # type: ignore[misc]
        origin.update({(len(out), i + 1): (r, c) for i, (_, c) in enumerate(numbers)})
        origin[(len(out), 0)] = (r, 0)
        out.append([label, *(t for t, _ in numbers)])
    return out, origin
