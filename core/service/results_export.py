"""Leaderboards (core.service.results) written out: CSV, Markdown, LaTeX and JSON. Every name, setting, title and
printed value comes from a paper's table and is untrusted: CSV cells that a spreadsheet would run as a formula
are written as text (core.text.csv_safe), Markdown cells have every character that could make markup or break the
table escaped, LaTeX cells have its specials escaped (core.text.latex: `\\input{…}` stays those characters)."""
from __future__ import annotations

import csv
import io
import json
import re

from core.service.records import Leaderboard, ResultRow, ResultsView
from core.text.csv_safe import csv_row
from core.text.latex import latex_escape
from core.text.terminal import for_terminal

FORMATS = ("csv", "markdown", "latex", "json")
COLUMNS = ("dataset", "metric", "rank", "method", "value", "printed", "unit", "setting", "paper", "year", "page",
           "table", "cell", "paper_id")
_MD_CELL = re.compile(r"([\\`*_{}\[\]<>#|~$!&])")
_DIRECTION = {"higher": "higher is better", "lower": "lower is better", "": "direction not stated"}


def _plain(text: object) -> str:
    """One line without control characters or escape sequences, whatever the output."""
    return for_terminal(text, one_line=True).strip()


def _values(board: Leaderboard, row: ResultRow) -> list:
    return [board.dataset, board.metric, row.rank, row.method, row.value, row.value_text, row.unit, row.setting,
            row.paper, row.year if row.year is not None else "", row.page, row.table, row.cell, row.paper_id]


def to_csv(view: ResultsView) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    for board in view.boards:
        for row in board.rows:
            writer.writerow(csv_row(_plain(v) if isinstance(v, str) else v for v in _values(board, row)))
    return out.getvalue()


def md_cell(text: object) -> str:
    """A Markdown table cell that reads as the literal text: no markup, no HTML, no `|` ending the cell early."""
    return _MD_CELL.sub(r"\\\1", _plain(text))


def to_markdown(view: ResultsView) -> str:
    parts = []
    for board in view.boards:
        parts.append(f"### {md_cell(board.dataset or board.dataset_key or 'dataset not named')} — "
                     f"{md_cell(board.metric)} ({_DIRECTION.get(board.direction, '')})\n")
        parts.append("| # | Method | Value | Setting | Paper | Year | Where |\n|---:|---|---:|---|---|---:|---|")
        for row in board.rows:
            parts.append(f"| {row.rank} | {md_cell(row.method)} | {md_cell(row.value_text)} | {md_cell(row.setting)} | "
                         f"{md_cell(row.paper)} | {row.year or ''} | {md_cell(f'p. {row.page}, {row.cell}')} |")
        if board.more_rows:
            parts.append(f"\n{board.more_rows} more rows not shown.")
        parts.append("")
    return "\n".join(parts)


def to_latex(view: ResultsView) -> str:
    """One `table` per leaderboard (booktabs rules; needs \\usepackage{booktabs})."""
    parts = []
    for board in view.boards:
        title = latex_escape(_plain(f"{board.dataset or board.dataset_key} — {board.metric}"))
        parts += [r"\begin{table}[ht]", r"\centering",
                  rf"\caption{{{title} ({_DIRECTION.get(board.direction, '')})}}",
                  r"\begin{tabular}{rllllrl}", r"\toprule",
                  r"\# & Method & Value & Setting & Paper & Year & Where \\", r"\midrule"]
        for row in board.rows:
            cells = [str(row.rank), row.method, row.value_text, row.setting, row.paper, str(row.year or ""),
                     f"p. {row.page}, {row.cell}"]
            parts.append(" & ".join(latex_escape(_plain(c)) for c in cells) + r" \\")
        parts += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(parts)


def to_json(view: ResultsView) -> str:
    return json.dumps(view.to_dict(), ensure_ascii=False, indent=2)


def export(view: ResultsView, fmt: str) -> str:
    writers = {"csv": to_csv, "markdown": to_markdown, "latex": to_latex, "json": to_json}
    if fmt not in writers:
        raise ValueError(f"format is one of {', '.join(FORMATS)}")
    return writers[fmt](view)
