"""One results table → its ResultRecords: every number cell with the method of its row (or column, transposed),
the dataset, metric and setting its headers, row labels, group rows, caption or citing sentences give, its unit,
the metric's direction, and whether it is the best of its column.

Best: the cells the paper emphasised (bold, underlined) when it emphasised any; else, per column (per row when
transposed), the highest or lowest value by the metric's direction, when that is known and the column holds
more than one value.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from core.graph.merge import normalize_key
from core.pipeline.results.context import TableContext, metric_in, table_context
from core.pipeline.results.damage import merged_rows
from core.pipeline.results.headers import (
    AGGREGATE,
    DATASET,
    METHOD,
    METRIC,
    SETTING,
    Layout,
    cell_role,
    looks_like_a_name,
    read_layout,
)
from core.pipeline.results.merged import split_merged
from core.pipeline.results.roles import group_role, methods_across, names_to_settings
from core.pipeline.results.table_kind import is_results_table
from core.pipeline.results.values import CellValue, clean_text, mark_emphasis, read_pair, read_value
from core.schema.records import ContentItem
from core.schema.results import Direction, ResultRecord
from core.text.result_names import (
    dataset_key,
    is_metric_name,
    method_key,
    metric_direction,
    metric_key,
    plain_name,
    setting_words,
)
from core.text.tables import table_grid

# Names repeat down a column and across a row: their keys are computed once per name (bounded caches).
_dataset_key, _method_key, _metric_key = (lru_cache(maxsize=4096)(f) for f in (dataset_key, method_key, metric_key))
_entity_key = lru_cache(maxsize=4096)(normalize_key)
MAX_ROWS = 500  # a broken table's rows past this are not read: a results table is never this long
MAX_COLS = 100


@dataclass
class _Names:
    method: str = ""
    dataset: str = ""
    metric: str = ""
    aggregate: str = ""
    settings: list[str] = field(default_factory=list)
    header_text: str = ""  # every header cell above or beside the value: arrows and "(%)" are read from it

    def take(self, text: str, role: str) -> None:
        if not text:
            return
        if role == METRIC:
            self.metric = text
        elif role == DATASET:
            self.dataset = text
        elif role == SETTING:
            if text not in self.settings:
                self.settings.append(text)
        elif role == AGGREGATE:
            self.aggregate = text
        elif role == METHOD:
            self.method = text
        self.header_text += " " + text


def _row_names(layout: Layout, r: int, c: int, part: tuple[str, str] | None = None) -> _Names:
    """`part`: (a header cell, the part of it this value is for): "EM" of "EM/F1" for the 80.1 of "80.1/88.0"."""
    names = _Names()
    path = layout.col_paths.get(c, [])
    if layout.transposed:
        for text, role in path:  # the column's header names the method; settings stay settings
            names.take(text, SETTING if role == SETTING else METHOD)
        for lc in layout.label_cols:
            text = clean_text(layout.rows[r][lc])
            names.take(text, layout.label_roles.get(lc) or cell_role(text))
    else:
        for text, role in path:
            if part and text == part[0]:
                prefix, text = part[1].rsplit(" ", 1) if " " in part[1] else ("", part[1])
                if prefix:  # "SQuAD" of "SQuAD EM/F1"
                    names.take(prefix, cell_role(prefix))
                role = METRIC if role == METRIC else cell_role(text)
            names.take(text, role)
        if names.method:  # a column group the caption names as what it compares ("BART, Multitask: D →{L,S,T}")
            names.take(layout.method_label(r, c), SETTING)
        else:
            names.method = layout.method_label(r, c)
        for lc in layout.label_cols:
            role = layout.label_roles.get(lc)
            if lc != layout.method_col and role in (DATASET, METRIC, SETTING):
                names.take(clean_text(layout.rows[r][lc]), role)
    return names


_OURS = re.compile(r"\bours\b|\bour (?:method|model|approach|system)\b|\bproposed\b|\bthis (?:work|paper)\b",
                   re.I)
_SUBTABLE = re.compile(r"^\(?[a-h]\)\s+")  # "(a) CA": a sub-table's letter is no part of the dataset's name
_HIGHER_IS_BETTER = re.compile(r"\b(?:higher|larger|greater|more) (?:is|are|means) better\b", re.I)
_LOWER_IS_BETTER = re.compile(r"\b(?:lower|smaller|less|fewer) (?:is|are|means) better\b", re.I)


@lru_cache(maxsize=4096)
def _direction(header_text: str, metric: str, table_direction: str) -> Direction:
    arrows = metric_direction(header_text) if re.search(r"[↑↓⇑⇓▲▼△▽]|is better", header_text) else ""
    found = arrows or metric_direction(metric)
    if not found:
        # "Avg." of metrics that all go one way goes that way; so does a metric the lexicon does not know, or a
        # header cell holding two ("MAP nDCG"), in a table whose known metrics all go one way.
        found = table_direction
    return Direction(found) if found in ("higher", "lower") else Direction.UNKNOWN


def _table_direction(layout: Layout, caption: str) -> str:
    """The direction the table's known metrics agree on, else the one its caption states ("lower is better")."""
    found = {metric_direction(text) for path in layout.col_paths.values() for text, role in path if role == METRIC}
    if layout.transposed:
        found |= {metric_direction(clean_text(layout.rows[r][c])) for r in layout.body_rows()
                  for c in layout.label_cols}
    found.discard("")
    if len(found) == 1:
        return found.pop()
    stated = {d for d, pattern in (("higher", _HIGHER_IS_BETTER), ("lower", _LOWER_IS_BETTER))
              if pattern.search(caption)}
    return stated.pop() if not found and len(stated) == 1 else ""


def _mark_best(cells: list[tuple[tuple[int, int], CellValue, dict]]) -> None:
    """Sets "best" in each record's fields (see the module doc); `cells` are (series, value, fields)."""
    if any(v.marked for _, v, _ in cells):
        for _, v, f in cells:
            f["best"] = v.marked
        return
    series: dict[tuple[int, int], list[tuple[CellValue, dict]]] = {}
    for s, v, f in cells:
        series.setdefault(s, []).append((v, f))
    for members in series.values():
        direction = members[0][1]["direction"]
        if len(members) < 2 or direction == Direction.UNKNOWN:
            continue
        pick = max if direction == Direction.HIGHER else min
        best = pick(v.value for v, _ in members)
        for v, f in members:
            f["best"] = v.value == best


def _grid(item: ContentItem) -> tuple[list[list[str]], int]:
    grid = table_grid(mark_emphasis(item.table_body))
    rows = [row[:MAX_COLS] for row in grid.rows[:MAX_ROWS]]
    marked_header = "<th" in item.table_body or "<thead" in item.table_body  # the parser said which rows
    return rows, (grid.header_rows if marked_header else 0)


def table_records(doc_id: str, item: ContentItem, label: str, caption: str,
                  sentences: Sequence[str], paper_dataset: str = "") -> list[ResultRecord]:
    """The records of one table item; [] for a table that does not report results. `paper_dataset`: the dataset
    the paper introduces (context.paper_dataset), taken by a table that names none."""
    rows, parsed_header = _grid(item)
    if len(rows) < 2 or max((len(r) for r in rows), default=0) < 2:
        return []
    ctx = table_context(caption, item.footnote, sentences)
    ctx.paper_dataset = paper_dataset
    if paper_dataset:  # "on SDS tasks" in a dataset paper: a kind of task on the paper's own dataset, not a dataset
        ctx.datasets = [d for d in ctx.datasets if not re.search(rf"(?<![\w-]){re.escape(d)}\s+tasks\b", ctx.caption)]
    layout = read_layout(rows, parsed_header, ctx.defined_metrics)
    merged = merged_rows(layout)
    if merged is None or merged:
        split = split_merged(layout.rows, layout.header_rows, set(layout.group_rows))
        if split:  # the parser merged cells in a regular way: the table is read as split back
            layout = read_layout(split[0], 1, ctx.defined_metrics)
            layout.origin = split[1]
            merged = merged_rows(layout)
    row_metrics = sum(is_metric_name(clean_text(layout.rows[r][c])) for r in layout.body_rows()
                      for c in layout.label_cols) if layout.transposed else 0
    if not is_results_table(layout, caption, row_metrics, sentences):
        return []
    if merged is None:
        return []  # the parser merged the table's cells: its values cannot be put under their headers
    said = " ".join([caption, *sentences[:20]])
    if methods_across(layout, {dataset_key(d) for d in ctx.datasets + ctx.text_datasets}, said):
        layout.transposed = True
    elif ctx.dataset or ctx.paper_dataset:
        names_to_settings(layout)
    _compared_groups(layout, ctx)
    return _records(doc_id, item, label, caption, layout, ctx, merged)


def _caption_method(text: str, ctx: TableContext) -> bool:
    """Whether a group's name opens with a name the caption says though not as a dataset ("BART, Multitask: …"
    under "Comparing BART performance …"): it names the method its columns report."""
    head = re.split(r"[,:(]", text)[0].strip()
    return head != text and ctx.names(head) and not is_metric_name(head) and \
        dataset_key(head) not in {dataset_key(d) for d in ctx.datasets}


def _take_block_group(names: _Names, text: str, layout: Layout, r: int, c: int, ctx: TableContext) -> None:
    """A block group row's label over this column: the method (the row label then a setting), a dataset, or a
    setting (a label that does not look like a name, under a caption or paper naming the dataset)."""
    if _caption_method(text, ctx):
        names.take(names.method, SETTING)
        names.method = text
    elif (ctx.dataset or ctx.paper_dataset) and not looks_like_a_name(text) or group_role(text) != DATASET:
        names.take(text, SETTING)
    elif not names.dataset:
        names.take(text, DATASET)


def _compared_groups(layout: Layout, ctx: TableContext) -> None:
    """A column group whose name opens with one the caption names, though not as a dataset ("BART, Multitask: D →
    {L, S, T}" under "Comparing BART performance under multitask and single-task scenarios"), is the method its
    columns report; the row labels are then settings."""
    if layout.transposed:
        return
    for c, path in layout.col_paths.items():
        new = []
        for text, role in path:
            if role == DATASET and _caption_method(text, ctx):
                role = METHOD
            new.append((text, role))
        layout.col_paths[c] = new


def _cell_values(layout: Layout, r: int, c: int) -> list[tuple[int, CellValue, tuple[str, str] | None]]:
    """The cell's value, or its two values when it holds a pair its header names ("EM/F1" over "80.1/88.0")."""
    cell = layout.rows[r][c]
    value = read_value(cell)
    if value is not None:
        return [(0, value, None)]
    pair = read_pair(cell) if not layout.transposed else None
    path = layout.col_paths.get(c, [])
    if not pair or not path:
        return []
    header = next((t for t, _ in reversed(path) if "/" in t), "")
    parts = [p.strip() for p in header.split("/")]
    if len(parts) != len(pair) or not all(parts):
        return []
    if " " in parts[0] and " " not in parts[1]:  # "SQuAD EM/F1": "SQuAD" names both
        prefix = parts[0].rsplit(" ", 1)[0]
        parts = [parts[0], f"{prefix} {parts[1]}"]
    return [(i, v, (header, p)) for i, (v, p) in enumerate(zip(pair, parts))]


def _records(doc_id: str, item: ContentItem, label: str, caption: str, layout: Layout,
             ctx: TableContext, skip_rows: set[int] = frozenset()) -> list[ResultRecord]:
    table_direction = _table_direction(layout, caption)
    group_dataset = group_setting = ""
    block_group: dict[int, str] = {}
    cells: list[tuple[tuple[int, int], CellValue, dict]] = []
    for r in range(layout.header_rows, len(layout.rows)):
        if r in layout.group_rows:
            text = layout.group_rows[r]
            role = group_role(text)
            group_dataset = text if role == DATASET else ("" if role == SETTING else group_dataset)
            group_setting = text if role == SETTING else group_setting
            continue
        if r in layout.block_groups:
            block_group.update(layout.block_groups[r])
            continue
        if r in skip_rows:
            continue
        for c in layout.value_cols:
            for i, value, part in _cell_values(layout, r, c):
                names = _row_names(layout, r, c, part)
                if c in block_group:
                    _take_block_group(names, block_group[c], layout, r, c, ctx)
                fields = _fields(names, value, ctx, group_dataset, group_setting, table_direction)
                if not fields["method"] or not fields["metric"]:
                    continue  # a number whose metric neither the table nor its caption names says nothing
                fields.update(zip(("row", "col"), layout.origin.get((r, c), (r, c))))
                cells.append(((r if layout.transposed else c, i), value, fields))
    if not any(f["dataset"] for _, _, f in cells) and ctx.paper_dataset:
        for _, _, f in cells:  # the table names no dataset: a dataset paper's tables are on its own
            f.update(dataset=ctx.paper_dataset, dataset_key=_dataset_key(ctx.paper_dataset))
            f["extra"]["dataset_entity"] = _entity_key(plain_name(ctx.paper_dataset))
    _mark_best(cells)
    bbox = tuple(float(x) for x in (item.bbox or ()))
    return [ResultRecord(doc_id=doc_id, item_index=item.index, page=item.page_idx, bbox=bbox, table_label=label,
                         caption=caption[:500], **fields) for _, _, fields in cells]


def _fields(names: _Names, value: CellValue, ctx: TableContext, group_dataset: str, group_setting: str,
            table_direction: str) -> dict:
    metric = names.metric or ctx.metric
    settings = list(names.settings)
    if not metric:
        # A header word the lexicon does not know, read as a setting under a caption naming the dataset, is the
        # metric when the caption names it too: "Drift" under "Drift of the models on ChemBench".
        named = [s for s in settings if ctx.names(s) and s.casefold().rstrip(".") not in setting_words()]
        if len(named) == 1:
            metric = named[0]
            settings.remove(metric)
    dataset = names.dataset or group_dataset or ctx.dataset
    if names.aggregate:
        if metric and not dataset:
            dataset = names.aggregate  # "Average" beside the datasets' columns: the mean over them is its own
        elif metric:
            settings.append(names.aggregate)
        else:
            metric = names.aggregate
    dataset = _SUBTABLE.sub("", dataset)
    setting = " / ".join(settings) or group_setting or ctx.setting
    defined_as = metric_in(ctx.defined.get(metric, ""))  # "SEQ is cell selection accuracy": goes as accuracy does
    direction = _direction(names.header_text + " " + metric, defined_as or metric, table_direction)
    unit = value.unit or ("%" if "%" in names.header_text else "") or ctx.unit
    method = names.method
    # The graph's keys (core.graph.merge.normalize_key) of the names, so a record links to the entity
    # "SPECTER" the extractor found: "SPECTER (Ours)" → "specter".
    extra = {"method_entity": _entity_key(plain_name(method))} if method else {}
    if dataset:
        extra["dataset_entity"] = _entity_key(plain_name(dataset))
    if ctx.dataset and _dataset_key(ctx.dataset) != _dataset_key(dataset):
        extra["caption_dataset"] = ctx.dataset  # "MAG" under "Results on the SCIDOCS suite": the suite it is part of
    if value.spread is not None:
        extra["spread"] = f"{value.spread:g}"
    if _OURS.search(method):
        extra["ours"] = "1"  # the paper's own method: "Ours", "SPECTER (Ours)", "Proposed"
    return dict(method=method, dataset=dataset, metric=metric, value=value.value, value_text=value.text, unit=unit,
                setting=setting, direction=direction, best=False, method_key=_method_key(method),
                dataset_key=_dataset_key(dataset), metric_key=_metric_key(metric), extra=extra)
