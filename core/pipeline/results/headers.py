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

from core.pipeline.results.context import datasets_in, setting_in
from core.pipeline.results.values import clean_text, is_missing, is_number_cell
from core.text.result_names import is_aggregate_name, is_attribute_name, is_metric_name, setting_words

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
GENERIC_GROUP = re.compile(
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
    origin: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)  # a split grid's cells → parsed
    hinted_names: set[str] = field(default_factory=set)  # header cells of a row the corner calls datasets
    side_labels: dict[int, int] = field(default_factory=dict)  # value column → a text column left of it labelling it
    block_groups: dict[int, dict[int, str]] = field(default_factory=dict)  # body row → value column → group label

    def method_label(self, r: int, c: int = -1) -> str:
        """Row r's method: its method column, or its label columns that have no other role, joined ("BERT" over
        "Large" in two columns: "BERT Large"); for a value column right of a second label column (two tables side
        by side in one grid), that column's label."""
        if c in self.side_labels:
            return clean_text(self.rows[r][self.side_labels[c]])
        cols = [c for c in self.label_cols if self.label_roles.get(c, METHOD) == METHOD] or self.label_cols[:1]
        texts = [clean_text(self.rows[r][c]) for c in cols]
        return " ".join(dict.fromkeys(t for t in texts if t))

    @property
    def method_col(self) -> int:
        for c in self.label_cols:
            if self.label_roles.get(c) == METHOD:
                return c
        free = [c for c in self.label_cols if c not in self.label_roles]
        return free[0] if free else (self.label_cols[0] if self.label_cols else -1)

    def body_rows(self) -> list[int]:
        return [r for r in range(self.header_rows, len(self.rows))
                if r not in self.group_rows and r not in self.block_groups]


def _numeric_share(cells: list[str]) -> float:
    filled = [c for c in cells if not is_missing(c)]
    return sum(is_number_cell(c) for c in filled) / len(filled) if filled else 0.0


def is_setting_name(text: str) -> bool:
    low = clean_text(text).casefold()
    if re.fullmatch(r"\d+[- ]?shots?|k[- ]?shot", low):
        return True
    return low.rstrip(".") in setting_words()


def hint_roles(text: str) -> tuple[str, str]:
    """The roles a corner cell gives (to its row, to its column): "Model ↓ / Metric →" → (metric, method);
    "Metric" alone → ("", metric)."""
    row_role = col_role = ""
    for part in re.split(r"/|\|", clean_text(text)):
        for role, pattern in _HINTS:
            if pattern.search(part):  # "→" points along its row; "↓", or no arrow, down its column
                if "→" in part:
                    row_role = row_role or role
                else:
                    col_role = col_role or role
    return row_role, col_role


def cell_role(text: str, hint: str = "") -> str:
    """A header cell's role: an aggregate or a setting word whatever the hint (a metric row keeps its "dev"), then
    the row's hint, then the metric lexicon; any other name is a dataset (or task)."""
    if is_aggregate_name(text):
        return AGGREGATE
    if hint != METRIC and is_setting_name(text):
        return SETTING
    if hint in (METRIC, DATASET, SETTING):
        return hint
    return METRIC if is_metric_name(text) else DATASET


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


def _metric_row_last(rows: list[list[str]], header: int) -> int:
    """A header's metric row is its last: a number-less row below it is the body's first group row ("L →S
    Fine-tuning" under "R-1 | R-2 | R-L", more such rows further down), not a header over the columns."""
    for r in range(header - 1):
        names = [clean_text(c) for c in rows[r][1:] if clean_text(c)]
        if len(names) >= 2 and sum(is_metric_name(t) for t in names) * 2 > len(names) and \
                not any(is_metric_name(clean_text(c)) for c in rows[r + 1][1:]):
            return r + 1
    return header


def _side_labels(rows: list[list[str]], header: int, value_cols: list[int]) -> dict[int, int]:
    """Value columns right of a column of text among them ("Target: Gold L / Predicted L′" between two blocks of
    numbers: two tables side by side in one grid) → that column, which labels their rows. Only when the columns
    right of it repeat the headers of those left of it (a second copy of the table's columns): a text column in
    an ordinary table ("Language: OTSL / HTML" after "# dec-layers") is a column of its own."""
    out: dict[int, int] = {}
    body = rows[header:]
    label = -1
    for c in value_cols:
        cells = [row[c] for row in body if _numeric_share(row) > 0]
        filled = [t for t in cells if not is_missing(t)]
        if label < 0 and len(filled) >= 2 and _numeric_share(cells) == 0 and c != value_cols[0]:
            label = c
            continue
        if label >= 0:
            out[c] = label
    if header and out:
        heads = [clean_text(rows[header - 1][c]) for c in value_cols]
        left = {t for c, t in zip(value_cols, heads) if c < min(out.values()) and t}
        right = {t for c, t in zip(value_cols, heads) if c in out and t}
        if len(right & left) < 2:
            return {}
    return out


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


_HAS_NUMBER = re.compile(r"(?<![\w-])[-+−–]?(?:\d+(?:\.\d+)?|\.\d+)(?![\w-])")


def _block_groups(layout: Layout) -> dict[int, dict[int, str]]:
    """Number-less body rows naming different groups over blocks of columns ("L →S Fine-tuning" over the left
    table's columns, "{L, D} →S" over the right one's): each value column → the label over its block (the text in
    the block, a block being the columns up to the next side label column)."""
    out: dict[int, dict[int, str]] = {}
    blocks: list[list[int]] = [[]]
    for c in layout.value_cols:
        if blocks[-1] and layout.side_labels.get(c) != layout.side_labels.get(blocks[-1][-1]):
            blocks.append([])
        blocks[-1].append(c)
    runs: list[list[int]] = []
    for r in range(layout.header_rows, len(layout.rows)):
        if r in layout.group_rows:
            continue
        cells = [clean_text(t) for t in layout.rows[r]]
        if not any(cells) or any(_HAS_NUMBER.search(t) for t in cells if t):
            continue  # a row holding a number is a data row, never a group row (merged cells "47.00(0.13) 47.25")
        groups: dict[int, str] = {}
        texts = list(dict.fromkeys(cells[c] for c in layout.value_cols if cells[c]))
        if runs and len(texts) == len(runs) > 1:  # the same groups as the first full row, printed once each
            out[r] = {c: text for text, run in zip(texts, runs) for c in run}
            continue
        if all(cells[c] for c in layout.value_cols) and len(texts) > 1 and not runs:
            for c in layout.value_cols:  # a full row of spanned groups: its runs are the template for later rows
                if runs and cells[c] == cells[runs[-1][-1]]:
                    runs[-1].append(c)
                else:
                    runs.append([c])
            out[r] = {c: cells[c] for c in layout.value_cols}
            continue
        for block in blocks:
            span = block + [layout.side_labels[block[0]]] if block and block[0] in layout.side_labels else block
            texts = list(dict.fromkeys(cells[c] for c in sorted(span) if cells[c]))
            if len(texts) == 1:
                groups.update((c, texts[0]) for c in block)
        if groups:
            out[r] = groups
    return out


def _defined_role(text: str, defined: dict[str, bool]) -> str:
    """The role the caption's definitions give a header cell ("ALL is cell selection accuracy"), else ""."""
    if text in defined:
        return METRIC if defined[text] else DATASET
    return ""


def _row_role(cells: list[str], defined: dict[str, bool]) -> str:
    """A header row's names are read together: when at least half are known metrics the row is a metric row
    ("prec. | yield"), else a row of names ("CLS | USR | CITE | REC": "REC" is a task here, not recall)."""
    names = [t for t in (clean_text(c) for c in cells) if t and not is_aggregate_name(t) and not is_setting_name(t)]
    if not names:
        return ""
    unique = list(dict.fromkeys(names))
    if any(t in defined for t in unique):  # the caption's definitions outvote the lexicon
        unique = [t for t in unique if t in defined]
        metrics = sum(defined[t] for t in unique)
    else:
        metrics = sum(is_metric_name(t) for t in unique)
    return METRIC if metrics * 2 >= len(unique) else DATASET


def split_name_metric(text: str) -> tuple[str, str] | None:
    """A header cell ending in a metric: "SQuAD EM" → ("SQuAD", "EM"), "MNLI Acc." → ("MNLI", "Acc."), a name then
    a metric; "Cell selection accuracy" → ("", "Cell selection accuracy"), a metric's own name (its head words
    do not look like a name)."""
    words = text.split()
    if len(words) < 2 or is_metric_name(text) or not is_metric_name(words[-1]) or len(words[-1]) < 2:
        return None
    name = " ".join(words[:-1])
    if is_metric_name(name):
        return None
    return (name, words[-1]) if looks_like_a_name(name) else ("", text)


def _column_path(rows: list[list[str]], header: int, c: int, row_hints: list[str],
                 defined: dict[str, bool]) -> list[tuple[str, str]]:
    path: list[tuple[str, str]] = []
    for r in range(header):
        text = clean_text(rows[r][c]).strip(" →↓")
        if not text or (path and path[-1][0] == text):
            continue
        role = _defined_role(text, defined) or cell_role(text, row_hints[r])
        split = split_name_metric(text) if role in (DATASET, METRIC) else None
        if split:
            path += ([(split[0], DATASET)] if split[0] else []) + [(split[1], METRIC)]
        else:
            path.append((text, role))
    return path


def _stranded_cells(rows: list[list[str]], header: int, value_cols: list[int], corner_hints: list[str],
                    row_hints: list[str]) -> None:
    """A header row the corner gives no role whose names sit only over columns a row the corner does name leaves
    blank takes that row's role: a grid rebuilt from the text layer puts a name printed a little higher on a row of
    its own ("Recomm." above the "Subtask →" row, over the two columns the subtasks leave blank)."""
    for r in range(header):
        if corner_hints[r]:
            continue
        filled = [c for c in value_cols if clean_text(rows[r][c]) and not is_aggregate_name(clean_text(rows[r][c]))]
        if not filled:
            continue
        fits = {corner_hints[h] for h in range(header) if corner_hints[h] in (DATASET, SETTING)
                and not any(clean_text(rows[h][c]) for c in filled)
                and any(clean_text(rows[h][c]) for c in value_cols)}
        if len(fits) == 1:
            row_hints[r] = fits.pop()


def _spanning_titles(rows: list[list[str]], header: int, layout: Layout) -> None:
    """A header cell spanning every value column ("SQuAD" over "EM | F1", "Results on the test set" over all) is
    the table's title: a dataset or a setting when it names one, else nothing."""
    if len(layout.value_cols) < 2:
        return
    for r in range(header):
        texts = {clean_text(rows[r][c]).strip(" →↓") for c in layout.value_cols}
        if len(texts) != 1 or not (text := texts.pop()):
            continue
        named = datasets_in(text)
        setting = setting_in(text)
        if named:
            replace = (named[0], DATASET)
        elif setting:
            replace = (setting, SETTING)
        elif looks_like_a_name(text) and not is_metric_name(text) and not is_aggregate_name(text):
            continue  # "SQuAD" over every column: kept as read
        else:
            replace = None
        for c in layout.value_cols:
            path = [(t, role) for t, role in layout.col_paths[c] if t != text]
            layout.col_paths[c] = ([replace] if replace else []) + path


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


def read_layout(rows: list[list[str]], parsed_header: int = 0, defined: dict[str, bool] | None = None) -> Layout:
    """`defined`: abbreviations the caption defines → whether each names a metric (TableContext.defined_metrics)."""
    defined = defined or {}
    width = max((len(r) for r in rows), default=0)
    rows = [r + [""] * (width - len(r)) for r in rows]
    header = _header_count(rows, parsed_header)
    header = _metric_row_last(rows, header)
    body = rows[header:]
    label_cols = _label_cols(body, width)
    value_cols = [c for c in range(width) if c not in label_cols
                  and not any(is_attribute_name(clean_text(rows[r][c])) for r in range(header))]
    side_labels = _side_labels(rows, header, value_cols)
    value_cols = [c for c in value_cols if c not in side_labels.values()]
    layout = Layout(rows=rows, header_rows=header, label_cols=label_cols, value_cols=value_cols,
                    side_labels=side_labels)
    row_hints = []
    for r in range(header):
        row_role = ""
        for c in label_cols:
            rr, cr = hint_roles(rows[r][c])
            row_role = row_role or rr
            if cr and c not in layout.label_roles:
                layout.label_roles[c] = cr
        row_hints.append(row_role)
    _stranded_cells(rows, header, value_cols, list(row_hints), row_hints)
    layout.hinted_names = {clean_text(rows[r][c]).strip(" →↓") for r in range(header) if row_hints[r] == DATASET
                           for c in value_cols} - {""}
    for r in range(header):
        row_hints[r] = row_hints[r] or _row_role([rows[r][c] for c in value_cols], defined)
    for c in value_cols:
        layout.col_paths[c] = _column_path(rows, header, c, row_hints, defined)
    _spanning_titles(rows, header, layout)
    _stranded_aggregate(rows, header, layout)
    layout.group_rows = _group_rows(header, rows, label_cols)
    layout.block_groups = _block_groups(layout)
    layout.transposed = _is_transposed(layout)
    return layout

def looks_like_a_name(text: str) -> bool:
    """"SQuAD", "MNLI", "CoNLL-2003", "PubMed": a capital inside a word, a word in capitals, or a digit. "Before
    Perturb", "Classification", "testsimple" are not: under a caption that names the dataset they are settings."""
    return bool(re.search(r"[a-z][A-Z]|\b[A-Z]{2,}|\d", clean_text(text)))
