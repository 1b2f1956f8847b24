"""A table's shape read for results: which leading rows are the header, which leading columns label the rows,
what each header cell names (a metric, a dataset, a setting, an aggregate such as "Avg."), which body rows only
group the rows below them, and whether the methods run down the rows or across the columns (transposed).

Roles come from, in order: the corner cell's hint ("Model ↓ / Metric →": the row it sits in names metrics, the
column under it methods; "Dataset", "Task", "Setting", "Split"), the metric lexicon (core.text.result_names), the
setting words, and otherwise a name is taken for a dataset (or a task; the two are kept together).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.pipeline.results.values import clean_text, is_number_cell
from core.text.result_names import is_aggregate_name, is_metric_name, setting_words

METRIC, DATASET, SETTING, AGGREGATE, METHOD = "metric", "dataset", "setting", "aggregate", "method"

_HINTS = (
    (METRIC, re.compile(r"\b(?:metrics?|measures?|scores?)\b", re.I)),
    (DATASET, re.compile(r"\b(?:datasets?|data|tasks?|subtasks?|benchmarks?|corpus|corpora|languages?|domains?)\b",
                         re.I)),
    (SETTING, re.compile(r"\b(?:settings?|splits?|shots?|conditions?)\b", re.I)),
    (METHOD, re.compile(r"\b(?:models?|methods?|systems?|approach(?:es)?|baselines?|algorithms?|architectures?)\b",
                        re.I)),
)
_AGGREGATE_WORD = re.compile(r"\b(?:avg\.?|average|mean|overall)(?=\W|$)", re.I)
_GENERIC_GROUP = re.compile(
    r"\b(?:baselines?|ours|our|models?|methods?|approach(?:es)?|systems?|previous|prior|existing|proposed|"
    r"related|work|results?|others?|variants?|ablations?|this paper|reported)\b", re.I)


@dataclass
class Layout:
    rows: list[list[str]]  # the span-expanded grid, cells as parsed (emphasis mark kept)
    header_rows: int
    label_cols: list[int]
    value_cols: list[int]
    label_roles: dict[int, str] = field(default_factory=dict)  # a label column's role from its header
    col_paths: dict[int, list[tuple[str, str]]] = field(default_factory=dict)  # value column → [(text, role)]
    group_rows: dict[int, str] = field(default_factory=dict)  # body row → its group label
    transposed: bool = False  # methods across the columns, metrics or datasets down the rows

    @property
    def method_col(self) -> int:
        for c in self.label_cols:
            if self.label_roles.get(c) == METHOD:
                return c
        free = [c for c in self.label_cols if c not in self.label_roles]
        return free[0] if free else (self.label_cols[0] if self.label_cols else -1)

    def body_rows(self) -> list[int]:
        return [r for r in range(self.header_rows, len(self.rows)) if r not in self.group_rows]


def _numeric_share(cells: list[str]) -> float:
    filled = [c for c in cells if clean_text(c)]
    return sum(is_number_cell(c) for c in filled) / len(filled) if filled else 0.0


def _is_setting(text: str) -> bool:
    low = clean_text(text).casefold()
    if re.fullmatch(r"\d+[- ]?shots?|k[- ]?shot", low):
        return True
    return low.rstrip(".") in setting_words()


def hint_roles(text: str) -> tuple[str, str]:
    """The roles a corner cell gives (to its row, to its column): "Model ↓ / Metric →" → (metric, method)."""
    row_role = col_role = ""
    for part in re.split(r"/|\|", clean_text(text)):
        for role, pattern in _HINTS:
            if pattern.search(part):
                if "→" in part:
                    row_role = row_role or role
                elif "↓" in part:
                    col_role = col_role or role
                else:
                    row_role, col_role = row_role or role, col_role or role
    return row_role, col_role


def cell_role(text: str, hint: str = "") -> str:
    if is_aggregate_name(text):
        return AGGREGATE
    if hint != METRIC and _is_setting(text):
        return SETTING
    if hint in (METRIC, DATASET, SETTING):
        return hint
    if is_metric_name(text):
        return METRIC
    if is_aggregate_name(text):
        return AGGREGATE
    if _is_setting(text):
        return SETTING
    return DATASET


MAX_HEADER_ROWS = 6


def _header_count(rows: list[list[str]], parsed_header: int) -> int:
    """Leading rows with mostly no numbers; the parser's own header (th cells, thead) wins when it says fewer,
    since merged body cells ("0.965 0.969") read as text."""
    n = 0
    for row in rows[:-1]:
        if _numeric_share(row[1:]) >= 0.5:
            break
        n += 1
    if parsed_header and n > parsed_header:
        n = parsed_header
    return min(n, MAX_HEADER_ROWS)


def _label_cols(body: list[list[str]], width: int) -> list[int]:
    cols = []
    for c in range(width):
        if _numeric_share([row[c] for row in body]) >= 0.5:
            break
        cols.append(c)
    return cols or ([0] if width > 1 else [])


def _group_rows(body_start: int, rows: list[list[str]], label_cols: list[int]) -> dict[int, str]:
    groups = {}
    for r in range(body_start, len(rows)):
        row = rows[r]
        texts = [clean_text(c) for c in row]
        label = next((t for t in texts if t), "")
        if not label:
            continue
        values = [t for i, t in enumerate(texts) if i not in label_cols]
        if all(not t or t == label for t in values) and not is_number_cell(label):
            groups[r] = label
    return groups


def _row_role(cells: list[str]) -> str:
    """A header row's names are read together: when at least half are known metrics the row is a metric row
    ("prec. | yield"), else a row of names ("CLS | USR | CITE | REC": "REC" is a task here, not recall)."""
    names = [t for t in (clean_text(c) for c in cells) if t and not is_aggregate_name(t) and not _is_setting(t)]
    if not names:
        return ""
    metrics = sum(is_metric_name(t) for t in dict.fromkeys(names))
    return METRIC if metrics * 2 >= len(dict.fromkeys(names)) else DATASET


def _column_path(rows: list[list[str]], header: int, c: int, row_hints: list[str]) -> list[tuple[str, str]]:
    path: list[tuple[str, str]] = []
    for r in range(header):
        text = clean_text(rows[r][c]).strip(" →↓")
        if text and (not path or path[-1][0] != text):
            path.append((text, cell_role(text, row_hints[r])))
    return path


def _stranded_aggregate(rows: list[list[str]], header: int, layout: Layout) -> None:
    """"Avg." printed in the corner (a parser shifted it there) names the last value column when that column has
    no header of its own: SPECTER's Table 1 prints "Avg. Subtask →" over its row labels."""
    if not layout.value_cols or layout.col_paths.get(layout.value_cols[-1]):
        return
    for r in range(header):
        for c in layout.label_cols:
            m = _AGGREGATE_WORD.search(clean_text(rows[r][c]))
            if m:
                layout.col_paths[layout.value_cols[-1]] = [(m.group(0), AGGREGATE)]
                return


def _is_transposed(layout: Layout) -> bool:
    header_roles = [role for path in layout.col_paths.values() for _, role in path]
    if METRIC in header_roles or not layout.label_cols:
        return False
    if any(role in (DATASET, METRIC) for role in layout.label_roles.values()) and METHOD not in \
            layout.label_roles.values():
        return True  # a "Dataset" / "Metric" column labels the rows: the value columns are methods
    labels = [clean_text(layout.rows[r][c]) for r in layout.body_rows() for c in layout.label_cols]
    labels = [t for t in labels if t]
    metrics = sum(is_metric_name(t) for t in labels)
    return bool(labels) and metrics >= max(1, len(labels) / 2)


def read_layout(rows: list[list[str]], parsed_header: int = 0) -> Layout:
    width = max((len(r) for r in rows), default=0)
    rows = [r + [""] * (width - len(r)) for r in rows]
    header = _header_count(rows, parsed_header)
    body = rows[header:]
    label_cols = _label_cols(body, width)
    value_cols = [c for c in range(width) if c not in label_cols]
    layout = Layout(rows=rows, header_rows=header, label_cols=label_cols, value_cols=value_cols)
    row_hints = []
    for r in range(header):
        row_role = ""
        for c in label_cols:
            rr, cr = hint_roles(rows[r][c])
            row_role = row_role or rr
            if cr and c not in layout.label_roles:
                layout.label_roles[c] = cr
        row_hints.append(row_role or _row_role([rows[r][c] for c in value_cols]))
    for c in label_cols:  # a plain "Dataset" / "Metric" / "Model" over a label column
        for r in range(header):
            text = clean_text(rows[r][c])
            if c not in layout.label_roles and text and not any(ch in text for ch in "→↓"):
                role = hint_roles(text)[1]
                if role:
                    layout.label_roles[c] = role
    for c in value_cols:
        layout.col_paths[c] = _column_path(rows, header, c, row_hints)
    _stranded_aggregate(rows, header, layout)
    layout.group_rows = _group_rows(header, rows, label_cols)
    layout.transposed = _is_transposed(layout)
    return layout


def group_role(label: str) -> str:
    """What a group row names: a setting, a dataset (a name that is not "Baselines" or "Our models"), or ""."""
    if _is_setting(label):
        return SETTING
    if _GENERIC_GROUP.search(label) or not re.search(r"[A-Z].*[A-Z0-9]|\d", label):
        return ""
    return DATASET
