"""MinerU's table HTML as data: a grid with row and column spans expanded, flattened text for search,
"column: value" rows for descriptions, a DataFrame for display and CSV for download.

The HTML is parsed with the standard library's tolerant HTMLParser into a grid of strings; nothing is ever
rendered as HTML. Parsers' tables are often malformed (unclosed cells, spans past the edge): every path keeps
what it can read rather than failing.
"""
from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser

from core.text.csv_safe import csv_cell

MAX_TABLE_HTML = 400_000
MAX_SPAN = 200  # a rowspan="100000" in a broken table must not allocate a huge grid


@dataclass
class _Cell:
    text: str
    rowspan: int = 1
    colspan: int = 1
    header: bool = False


@dataclass
class TableGrid:
    """A table's cells after span expansion: every row has the same width; a spanned cell's text is repeated
    in each position it covers. `header_rows` leading rows are the header (th cells, thead, or a first row of
    td cells over data, as MinerU writes them)."""

    rows: list[list[str]] = field(default_factory=list)
    header_rows: int = 0

    @property
    def width(self) -> int:
        return max((len(r) for r in self.rows), default=0)

    def columns(self) -> list[str]:
        """One name per column: its header cells top to bottom, a value repeated by a span said once."""
        names = []
        for c in range(self.width):
            parts: list[str] = []
            for row in self.rows[:self.header_rows]:
                cell = row[c] if c < len(row) else ""
                if cell and (not parts or parts[-1] != cell):
                    parts.append(cell)
            names.append(" / ".join(parts))
        return _unique_names(names)

    def body(self) -> list[list[str]]:
        return [r + [""] * (self.width - len(r)) for r in self.rows[self.header_rows:]]


def _unique_names(names: list[str]) -> list[str]:
    # Duplicate or empty column names trip Arrow (st.dataframe) and confuse CSV readers: unique and visible.
    seen: Counter = Counter()
    out = []
    for i, name in enumerate(names):
        name = name or f"col {i + 1}"
        seen[name] += 1
        out.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return out


def _span(value: str | None) -> int:
    try:
        return min(max(int(str(value).strip() or 1), 1), MAX_SPAN)
    except ValueError:
        return 1


class _TableCells(HTMLParser):
    """Rows of cells with their spans, from the first <table> (or from bare <tr>s); nested tables are read as
    text of the cell they sit in."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows: list[list[_Cell]] = []
        self.thead_rows = 0
        self._cell: _Cell | None = None
        self._parts: list[str] = []
        self._depth = 0  # table nesting
        self._in_thead = False
        self._skip = 0  # inside <script> / <style>: not table content

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
            return
        if tag == "table":
            self._depth += 1
            if self._depth > 1 and self._cell is not None:
                self._parts.append(" ")
            return
        if self._depth > 1:
            if tag in ("td", "th", "tr", "br"):
                self._parts.append(" ")
            return
        if tag == "thead":
            self._in_thead = True
        elif tag == "tr":
            self._close_cell()
            self.rows.append([])
            if self._in_thead:
                self.thead_rows = len(self.rows)
        elif tag in ("td", "th"):
            self._close_cell()
            a = dict(attrs)
            self._cell = _Cell("", _span(a.get("rowspan")), _span(a.get("colspan")), tag == "th" or self._in_thead)
            self._parts = []
        elif tag == "br" and self._cell is not None:
            self._parts.append(" ")

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip = max(0, self._skip - 1)
            return
        if tag == "table":
            self._depth = max(0, self._depth - 1)
            if self._depth == 0:
                self._close_cell()
            return
        if self._depth > 1:
            return
        if tag in ("td", "th"):
            self._close_cell()
        elif tag == "thead":
            self._close_cell()
            self._in_thead = False

    def handle_data(self, data):
        if self._cell is not None and not self._skip:
            self._parts.append(data)

    def _close_cell(self):
        if self._cell is None:
            return
        self._cell.text = " ".join("".join(self._parts).split())
        if not self.rows:
            self.rows.append([])
        self.rows[-1].append(self._cell)
        self._cell, self._parts = None, []

    def close(self):
        super().close()
        self._close_cell()


def table_grid(table_html: str) -> TableGrid:
    """The table as a grid with spans expanded; an empty grid when there is no table in it."""
    if not table_html or len(table_html) > MAX_TABLE_HTML:
        return TableGrid()
    parser = _TableCells()
    try:
        parser.feed(table_html)
        parser.close()
    except Exception:  # HTMLParser is tolerant; this guards against the unexpected, never to lose indexing
        pass
    grid: list[list[str | None]] = []
    header_flags: list[bool] = []
    for r, cells in enumerate(parser.rows):
        while len(grid) <= r:
            grid.append([])
            header_flags.append(True)
        row = grid[r]
        c = 0
        for cell in cells:
            while c < len(row) and row[c] is not None:
                c += 1  # positions taken by a rowspan from above
            for dr in range(cell.rowspan):
                target = r + dr
                if dr and target >= len(parser.rows):
                    break  # a span past the last row covers nothing
                while len(grid) <= target:
                    grid.append([])
                    header_flags.append(True)
                line = grid[target]
                while len(line) < c + cell.colspan:
                    line.append(None)
                for dc in range(cell.colspan):
                    line[c + dc] = cell.text
            header_flags[r] = header_flags[r] and cell.header
            c += cell.colspan
        if not cells:
            header_flags[r] = False
    rows = [[v or "" for v in row] for row in grid]
    keep = [i for i, row in enumerate(rows) if any(row)]
    rows = [rows[i] for i in keep]
    flags = [header_flags[i] for i in keep]
    header = parser.thead_rows or next((i for i, f in enumerate(flags) if not f), len(flags))
    if header == 0 and len(rows) > 1 and all(rows[0]):
        header = 1  # MinerU writes header cells as <td>: a full first row over data is the header
    header = min(header, max(len(rows) - 1, 0)) if len(rows) > 1 else header
    return TableGrid(rows=rows, header_rows=header)


def table_text(table_html: str) -> str:
    """One line per row, cells joined by ' | ': the table's words, for search. A value spread over several
    columns by a colspan is said once."""
    grid = table_grid(table_html)
    if not grid.rows:
        # Not a table after all (or nothing parseable): keep its visible text.
        return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", table_html or "")).split())
    lines = []
    for row in grid.rows:
        cells = [v for i, v in enumerate(row) if v and (i == 0 or row[i - 1] != v)]
        if cells:
            lines.append(" | ".join(cells))
    return "\n".join(lines)


def table_records(table_html: str) -> list[str]:
    """Each body row as "column: value; column: value", the form a description or an LLM reads best."""
    grid = table_grid(table_html)
    if not grid.rows:
        return []
    if grid.header_rows == 0:
        return [" | ".join(v for v in row if v) for row in grid.rows]
    names = grid.columns()
    out = []
    for row in grid.body():
        pairs = [f"{name}: {value}" for name, value in zip(names, row) if value]
        if pairs:
            out.append("; ".join(pairs))
    return out


def table_frame(table_html: str):
    """The table as a pandas DataFrame of strings (spans expanded, header rows as column names), or None."""
    grid = table_grid(table_html)
    if not grid.rows or grid.width == 0:
        return None
    import pandas as pd

    if grid.header_rows == 0:
        return pd.DataFrame(grid.body(), columns=_unique_names([""] * grid.width))
    return pd.DataFrame(grid.body(), columns=grid.columns())


def table_csv(table_html: str) -> str:
    """The table as CSV text (UTF-8, header row first); empty when there is no table. Cells a spreadsheet would
    run as a formula are written as text (core.text.csv_safe): the table comes from a paper."""
    frame = table_frame(table_html)
    return "" if frame is None else frame_csv(frame)


def frame_csv(frame) -> str:
    """A pandas frame as CSV text (header row first, no index) with every cell and column name a spreadsheet would
    run as a formula written as text (core.text.csv_safe). The one CSV writer behind the app's table downloads:
    Streamlit's own table download writes cells as they are (`=HYPERLINK(…)` in a paper's title runs)."""
    frame = frame.map(csv_cell)
    frame.columns = [csv_cell(str(c)) for c in frame.columns]
    return frame.to_csv(index=False)
