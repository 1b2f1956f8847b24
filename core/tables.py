"""MinerU's table HTML as data: flattened text for search, a DataFrame for display."""
from __future__ import annotations

import html
import io
import re
from collections import Counter
from html.parser import HTMLParser


class _TableText(HTMLParser):
    """Flattens table HTML to one line per row, cells joined by ' | ', so the table's words can be searched."""

    def __init__(self):
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            if not self.rows:
                self.rows.append([])
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def table_text(table_html: str) -> str:
    parser = _TableText()
    try:
        parser.feed(table_html)
        parser.close()
    except Exception:  # malformed HTML from a parser must not stop indexing; keep its visible text
        return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", table_html)).split())
    return "\n".join(" | ".join(row) for row in parser.rows if any(row))


MAX_TABLE_HTML = 400_000


def table_frame(table_html: str):
    """A table's HTML as a pandas DataFrame (lxml parses it; nothing is rendered as HTML), or None."""
    if not table_html or len(table_html) > MAX_TABLE_HTML:
        return None
    import pandas as pd

    try:
        frames = pd.read_html(io.StringIO(table_html), flavor="lxml")
    except Exception:  # malformed or empty tables are common in parser output: the caller shows the text
        return None
    if not frames:
        return None
    frame = frames[0]
    if list(frame.columns) == list(range(frame.shape[1])) and len(frame) > 1 and frame.iloc[0].notna().all():
        # Parsers write header cells as <td> as often as <th>: the first row is then the header.
        frame = frame.iloc[1:].reset_index(drop=True).set_axis([str(v) for v in frame.iloc[0]], axis=1)
    frame.columns = [" ".join(str(c) for c in col if not str(c).startswith("Unnamed"))
                     if isinstance(col, tuple) else ("" if str(col).startswith("Unnamed") else str(col))
                     for col in frame.columns]
    # Duplicate or empty column names trip Arrow: make them unique and visible.
    seen: Counter = Counter()
    names = []
    for i, name in enumerate(frame.columns):
        name = name or f"col {i + 1}"
        seen[name] += 1
        names.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    frame.columns = names
    return frame.astype(str).replace({"nan": ""})
