"""Results read from a paper's tables: one record per reported number, as method × dataset × metric.

A record points at its table cell (the paper, the table's item index in the content list, the cell's row and
column in the span-expanded grid of core.text.tables.table_grid) and at the table's page and box, so every
leaderboard line and computed answer cites the cell it came from. Names are kept as the paper prints them;
their `*_key`s are the normalised forms used to group records across papers (core.text.result_names), so
"SQuAD 1.1" and "SQuAD v1.1" share a key while "SQuAD 2.0" keeps its own.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class ResultSource(str, Enum):
    RULES = "rules"  # read LLM-free from the table, its caption and the sentences citing it
    LLM = "llm"  # a name the rules could not read, filled by an LLM and copied from the paper's text


class Direction(str, Enum):
    """Whether a larger value of the metric is better, where known (the metric's lexicon, or an arrow in the
    header such as "Error ↓")."""

    HIGHER = "higher"
    LOWER = "lower"
    UNKNOWN = ""


@dataclass(frozen=True)
class ResultRecord:
    doc_id: str
    item_index: int  # the table's index in the paper's content list
    row: int  # the cell in the span-expanded grid (header rows included)
    col: int
    method: str  # the row's (or column's) label: the method, system or model the number is for
    dataset: str  # "" when neither the table, its caption nor its citing sentences name it
    metric: str
    value: float
    value_text: str  # the cell as printed: "80.0", "85.3 ± 0.2", "92.1*"
    unit: str = ""  # "%", "ms", "" …
    setting: str = ""  # split or setting where stated: "dev", "test", "zero-shot", "5-shot" …
    direction: Direction = Direction.UNKNOWN
    best: bool = False  # marked best by the paper (bold or underlined), or the column's best where marking is absent
    page: int = 0  # 0-based page of the table
    bbox: tuple[float, ...] = ()  # the table's box, 0–1000 page coordinates
    table_label: str = ""  # "Table 1"
    caption: str = ""
    method_key: str = ""
    dataset_key: str = ""
    metric_key: str = ""
    source: ResultSource = ResultSource.RULES
    extra: dict[str, str] = field(default_factory=dict, hash=False, compare=False)

    @property
    def cell_ref(self) -> str:
        """Where the number is, for citations: "Table 1, row 3, column 2"."""
        label = self.table_label or f"table {self.item_index}"
        return f"{label}, row {self.row + 1}, column {self.col + 1}"
