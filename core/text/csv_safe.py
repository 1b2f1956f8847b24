"""CSV cells a spreadsheet cannot run. Every CSV PaperGraph writes holds text from papers or LLM replies; a cell
that starts with =, +, -, @ (or a tab / carriage return, which some spreadsheets skip before reading a formula) is
run by Excel or LibreOffice as a formula (CSV injection). Such a cell is written with a leading apostrophe, which
spreadsheets read as "this is text". Plain numbers (-3.5, +2e3) stay as they are: they are not formulas.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?%?")


def csv_cell(value: Any) -> Any:
    """`value` safe for a CSV cell: strings a spreadsheet would read as a formula get a leading apostrophe."""
    if not isinstance(value, str):
        return value
    head = value.lstrip(" ")  # some spreadsheets ignore leading spaces before a formula
    if head.startswith(_FORMULA_START) and not _NUMBER.fullmatch(value.strip()):
        return "'" + value
    return value


def csv_row(values: Iterable[Any]) -> list[Any]:
    return [csv_cell(v) for v in values]


__all__ = ["csv_cell", "csv_row"]
