"""Tables that a parser wrote as laid-out plain text, read back into HTML rows and columns.

MinerU's flash tier writes some tables (those without ruling lines, or with wrapped cells) as the page's text
with its spacing kept, not as HTML. Read as HTML they have no rows, so the table's chunk said "the parser read no
text in it" and questions about their numbers could not be answered. Here the columns are found where every line
(nearly) has a space at the same position, wrapped cells are joined to the row above, and the header is the line
just above the first row of numbers; the result is the HTML the rest of the pipeline already reads.
"""
from __future__ import annotations

import html
import re

MAX_LINES = 400  # a longer "table" is a page of text: leave it alone
MAX_WIDTH = 1000  # characters per line; column finding costs lines x width
MIN_GAP = 2  # columns of laid-out text are at least two spaces apart
GAP_SHARE = 0.85  # a position blank on this share of the lines separates columns (headers rarely line up)
_NUMBER = re.compile(r"^[~≈<>±+\-−]?\(?\d[\d.,]*\)?\s*(%|[kKMBx×])?\s*[\dˆ†∗*]*$")


def is_html(body: str) -> bool:
    return "<" in body[:200] and re.search(r"<\s*(table|tr|td|th)\b", body, re.IGNORECASE) is not None


def _gaps(lines: list[str]) -> list[tuple[int, int]]:
    """Runs of positions that are blank on most lines and at least MIN_GAP wide, inside the text."""
    width = max(len(line) for line in lines)
    blank = []
    for pos in range(width):
        spaces = sum(1 for line in lines if pos >= len(line) or line[pos] == " ")
        blank.append(spaces >= GAP_SHARE * len(lines))
    runs, start = [], None
    for pos, is_blank in enumerate(blank + [False]):
        if is_blank and start is None:
            start = pos
        elif not is_blank and start is not None:
            if pos - start >= MIN_GAP and start > 0 and pos < width:
                runs.append((start, pos))
            start = None
    return runs


def _tokens(line: str) -> list[tuple[int, str]]:
    """The line's words with their centre positions."""
    return [((m.start() + m.end()) // 2, m.group()) for m in re.finditer(r"\S+", line)]


def _cells(line: str, cuts: list[int]) -> list[str]:
    """The line's words put in the column their centre falls in: a header word that sticks out over a column
    edge (headers rarely line up with the numbers under them) still lands in one column, whole."""
    cells: list[list[str]] = [[] for _ in range(len(cuts) + 1)]
    for centre, word in _tokens(line):
        column = sum(1 for cut in cuts if centre >= cut)
        cells[column].append(word)
    return [" ".join(words) for words in cells]


def _numeric(line: str) -> bool:
    values = re.split(r"\s{2,}", line.strip())[1:]
    return len(values) >= 2 and sum(bool(_NUMBER.match(v.replace(" ", ""))) for v in values) >= len(values) / 2


def text_table_rows(text: str) -> tuple[list[list[str]], int]:
    """The rows of a laid-out text table and how many of them are header rows; ([], 0) when there is no text.
    Text whose columns cannot be found comes back as one column, a line per row, so nothing is lost."""
    lines = [line.expandtabs(4).rstrip() for line in text.splitlines()]
    lines = [line for line in lines if line.strip()]
    if not lines or len(lines) > MAX_LINES:
        return [], 0
    # The header is the line just above the first row of numbers (or the first line): the columns are found on
    # the lines below it, where values line up; header words are then placed by where they sit.
    first_numeric = next((i for i, line in enumerate(lines) if _numeric(line)), None)
    header = first_numeric if first_numeric else 1
    body = lines[header:] if len(lines) - header >= 2 else lines
    wide = max(len(line) for line in lines) > MAX_WIDTH
    cuts = [(a + b) // 2 for a, b in _gaps(body)] if len(lines) >= 2 and not wide else []
    if not cuts:
        return [[" ".join(line.split())] for line in lines], 0
    rows: list[list[str]] = [_cells(line, cuts) for line in lines[:header]]
    for line in lines[header:]:
        cells = _cells(line, cuts)
        if len(rows) > header and not cells[0] and any(cells):
            # A wrapped cell: its words continue the row above, column by column.
            rows[-1] = [f"{a} {c}".strip() for a, c in zip(rows[-1], cells)]
        else:
            rows.append(cells)
    return rows, min(header, len(rows) - 1)


def text_table_html(text: str) -> str:
    """The laid-out text as an HTML table (header rows in <thead>), or "" when no columns are found."""
    rows, header = text_table_rows(text)
    if not rows:
        return ""

    def tr(row: list[str], tag: str) -> str:
        return "<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in row) + "</tr>"

    head = "".join(tr(r, "th") for r in rows[:header])
    body = "".join(tr(r, "td") for r in rows[header:])
    return f"<table><thead>{head}</thead><tbody>{body}</tbody></table>"
