"""A table cell read as a reported number: "85.3 ± 0.2", "92.1*", "80.0%", "$\\mathbf{80.0}$", "12 ms".

Emphasis is read before the HTML is flattened: <b>, <strong>, <u> and LaTeX \\textbf / \\mathbf / \\underline /
\\bm become a private-use mark (BEST_MARK) in the cell's text, which table_grid keeps like any character; a cell
holding the mark was marked by the paper. A cell with two numbers that are not value and spread ("0.965 0.969",
two rows a parser merged) is not read: no number is better than a wrong one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

BEST_MARK = "\ue000"

_EMPHASIS_TAG = re.compile(r"<\s*(?:b|strong|u|em)\b[^>]*>", re.IGNORECASE)
_EMPHASIS_END = re.compile(r"<\s*/\s*(?:b|strong|u|em)\s*>", re.IGNORECASE)
_LATEX_EMPHASIS = re.compile(r"\\(?:textbf|mathbf|boldsymbol|bm|underline|uline|textit)\s*\{")

_NUM = r"[-+−–]?\s?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d*\.\d+|\d+)(?:[eE][-+−]?\d{1,3})?"
_UNITS = (r"%|pp|ms|s|sec|secs|min|h|hrs|x|×|k|K|M|B|G|GB|MB|KB|TB|TFLOPs|GFLOPs|FLOPs|params|nM|µM|μM|mM|pM|"
          r"kcal/mol|Å|dB|Hz|ppm|mg|kg|g|mm|cm|m")
_VALUE = re.compile(
    rf"^\(?\s*(?P<num>{_NUM})\s*(?P<unit>{_UNITS})?\s*"
    rf"(?:(?:±|\+/-|\+-|∓)\s*(?P<spread>{_NUM})\s*(?:%|{_UNITS})?|\(\s*(?:±\s*)?(?P<paren>{_NUM})\s*%?\s*\))?\s*\)?$"
)
_TRAILING_MARKS = re.compile(r"[\s*†‡§¶#⋆★∗'′ᵃᵇᶜᵈ]+$|(?<=\d)[a-e]$")
_LEADING_MARKS = re.compile(r"^[\s*†‡§¶#⋆★∗]+")
_LATEX_NOISE = re.compile(r"\\(?:textbf|mathbf|boldsymbol|bm|underline|uline|textit|mathrm|text|textrm|mathit|small|"
                          r"scriptsize|footnotesize|tiny)\s*|[{}$~]|\\,|\\ |\\!|\\;")
_ARROWS = re.compile(r"[↑↓⇑⇓▲▼△▽]")


@dataclass(frozen=True)
class CellValue:
    value: float
    text: str  # the cell as printed, marks kept, emphasis mark out
    unit: str = ""
    spread: float | None = None  # the ± part
    marked: bool = False  # bold / underlined by the paper


def mark_emphasis(table_html: str) -> str:
    """The table's HTML with each emphasised run's start replaced by BEST_MARK (read by `read_value`)."""
    if not table_html:
        return ""
    html = _EMPHASIS_TAG.sub(BEST_MARK, table_html)
    html = _EMPHASIS_END.sub("", html)
    return _LATEX_EMPHASIS.sub(BEST_MARK + "{", html)


def clean_text(cell: str) -> str:
    """A cell's text without the emphasis mark and LaTeX wrapping: "$\\mathbf{80.0}$" → "80.0"."""
    text = (cell or "").replace(BEST_MARK, "")
    if "\\" in text or "$" in text:
        text = text.replace("\\pm", "±").replace("\\%", "%").replace("\\times", "×").replace("^", "")
        text = _LATEX_NOISE.sub("", text).replace("_", " ")
    return " ".join(text.split())


def _number(text: str) -> float:
    return float(text.replace(" ", "").replace(",", "").replace("−", "-").replace("–", "-"))


@lru_cache(maxsize=8192)  # a cell is read by the header, label-column and kind checks, then for its record
def read_value(cell: str) -> CellValue | None:
    """The cell's number, unit, spread and emphasis; None when the cell is not one reported number."""
    if not cell or len(cell) > 80 or not any(ch.isdigit() for ch in cell):
        return None
    marked = BEST_MARK in cell or bool(_LATEX_EMPHASIS.search(cell))
    text = clean_text(cell)
    core = _ARROWS.sub("", _TRAILING_MARKS.sub("", _LEADING_MARKS.sub("", text))).strip()
    m = _VALUE.match(core)
    if not m:
        return None
    try:
        value = _number(m.group("num"))
        spread_text = m.group("spread") or m.group("paren")
        spread = _number(spread_text) if spread_text else None
    except ValueError:
        return None
    unit = m.group("unit") or ("%" if "%" in core else "")
    return CellValue(value=value, text=text, unit=unit, spread=spread, marked=marked)


def read_pair(cell: str) -> list[CellValue] | None:
    """"84.6/83.4" under "MNLI-m/mm" or "EM/F1": two numbers in one cell, read apart; None otherwise."""
    if not cell or cell.count("/") != 1 or len(cell) > 60:
        return None
    parts = [read_value(p) for p in cell.split("/")]
    return parts if all(parts) else None  # type: ignore[return-value]


_MISSING = {"-", "–", "—", "−", "n/a", "N/A", "NA", "n.a.", "N.A.", "?", "×", "✗", "/", "--", "---", "∅", "x"}


def is_number_cell(cell: str) -> bool:
    return read_value(cell) is not None or read_pair(cell) is not None


def is_missing(cell: str) -> bool:
    """"-", "–", "n/a": a value the paper does not report, neither a number nor a name."""
    text = clean_text(cell)
    return not text or text in _MISSING
