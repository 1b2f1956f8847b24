"""Results across the library: the numbers the papers' tables report (lib.results, filled at ingest by
core.pipeline.results), as leaderboards per dataset and metric, best first by the metric's direction, each row
cited to its paper, page and table cell. The Results page, `python -m core results`, REST and MCP all call this.

Names are looked up as people type them (core.query.result_lookup): "scidocs", "SciDocs" and "Sci-Docs" are one
dataset. Only ready papers' records are shown: a paper being parsed again keeps its old ones until its commit."""
from __future__ import annotations

import re
from collections.abc import Sequence

from core.library import Library
from core.presentation.citations import papers_metadata
from core.query.result_lookup import direction, grouped, printed, ranked, resolve_keys
from core.schema.records import Document
from core.schema.results import ResultRecord
from core.service.errors import ServiceError, invalid
from core.service.inputs import MIN_ID_PREFIX, bounded, clean_text, find_paper
from core.service.records import Citation, Leaderboard, ResultName, ResultRow, ResultsView
from core.store.base import ResultFilter
from core.text.terminal import for_terminal

MAX_ROWS = 1000  # per leaderboard
MAX_BOARDS = 200
_HEX = re.compile(r"^[0-9a-f]+$")
_YEARS = re.compile(r"^\s*(\d{4})\s*(?:[-–]\s*(\d{4})\s*)?$")


def _name(value: object, what: str) -> str | None:
    return None if value is None or value == "" else clean_text(value, what, max_chars=300)


def _years(year: object) -> tuple[int, int] | None:
    """2020, "2020" or "2018-2020" → the inclusive range; None: any year."""
    if year is None or year == "":
        return None
    if isinstance(year, int) and not isinstance(year, bool):
        return year, year
    match = _YEARS.match(year) if isinstance(year, str) else None
    if not match:
        raise invalid("a year is four digits (2020) or a range (2018-2020)")
    low = int(match.group(1))
    return low, int(match.group(2) or low)


def _papers(lib: Library, paper: str | None) -> list[Document]:
    """The ready papers a paper filter names: an id prefix, else every paper whose title holds the words."""
    ready = lib.documents.ready_papers()
    if paper is None:
        return ready
    key = paper.strip().lower()
    if len(key) >= MIN_ID_PREFIX and _HEX.match(key):
        try:
            doc = find_paper(lib, key)
            return [d for d in ready if d.id == doc.id]
        except ServiceError:  # hexadecimal letters can be a title's word ("decade"): read as one
            pass
    words = paper.casefold().split()
    return [d for d in ready if all(w in d.display_title.casefold() for w in words)]


def _keys(lib: Library, kind: str, name: str | None, filters: ResultFilter, notes: list[str]) -> list[str] | None:
    if name is None:
        return None
    keys = resolve_keys(lib, kind, name, filters)
    if not keys:
        notes.append(f"no {kind} named {name!r} in the results of the papers")
    return keys


def _text(text: str) -> str:
    """A cell's text on one line without control characters or escape sequences, for every face (each escapes
    it again for its own markup)."""
    return for_terminal(text, one_line=True).strip()


def _rows(records: Sequence[ResultRecord], titles: dict[str, str], years: dict[str, int | None]) -> list[ResultRow]:
    return [ResultRow(rank=n, method=_text(r.method), value=r.value, value_text=_text(r.value_text),
                      unit=_text(r.unit), setting=_text(r.setting), dataset=_text(r.dataset), metric=_text(r.metric),
                      paper_id=r.doc_id, paper=_text(titles.get(r.doc_id, r.doc_id[:12])), year=years.get(r.doc_id),
                      page=r.page + 1, box=list(r.bbox) or None, table=_text(r.table_label), cell=_text(r.cell_ref),
                      item_index=r.item_index, row=r.row, col=r.col, best=r.best)
            for n, r in enumerate(records, 1)]


def _paper_names(lib: Library, doc_ids: Sequence[str]) -> tuple[dict[str, str], dict[str, int | None]]:
    metas = papers_metadata(lib, list(dict.fromkeys(doc_ids)))
    return {m.doc_id: m.title for m in metas}, {m.doc_id: m.year for m in metas}


def leaderboard(lib: Library, dataset: str | None = None, metric: str | None = None, method: str | None = None,
                paper: str | None = None, year: int | str | None = None, setting: str | None = None,
                query: str | None = None, limit: int = 100, max_boards: int = 50,
                doc_ids: Sequence[str] | None = None) -> ResultsView:
    """One leaderboard per dataset × metric the filters keep, the most reported first; within each, every record
    best first. `paper` is an id prefix or words of the title; `year` one year or a range; `setting` the split as
    printed (case aside); `query` words to find in the names, setting, table label or caption; `doc_ids` (the
    Results page's paper picker) keeps those papers only."""
    bounded(limit, "limit", 1, MAX_ROWS)
    bounded(max_boards, "max_boards", 1, MAX_BOARDS)
    dataset, metric, method = _name(dataset, "dataset"), _name(metric, "metric"), _name(method, "method")
    paper, setting, query = _name(paper, "paper"), _name(setting, "setting"), _name(query, "query")
    span = _years(year)
    wanted = set(doc_ids) if doc_ids is not None else None
    doc_ids = [d.id for d in _papers(lib, paper) if wanted is None or d.id in wanted]
    if span is not None:
        years = _paper_names(lib, doc_ids)[1]
        doc_ids = [i for i in doc_ids if years.get(i) is not None and span[0] <= years[i] <= span[1]]
    base = ResultFilter(doc_ids=doc_ids, text=query or "")
    notes: list[str] = []
    datasets = _keys(lib, "dataset", dataset, base, notes)
    metrics = _keys(lib, "metric", metric, base, notes)
    methods = _keys(lib, "method", method, base, notes)
    if notes:
        return ResultsView(boards=[], note="; ".join(notes))
    records = [r for r in lib.results.find(base)
               if (datasets is None or r.dataset_key in datasets) and (metrics is None or r.metric_key in metrics)
               and (methods is None or r.method_key in methods)
               and (setting is None or r.setting.casefold() == setting.casefold())]
    if not records:
        return ResultsView(boards=[], note="no results match" if lib.results.count() else
                           "no results are stored yet: `python -m core results rebuild` reads them from the papers")
    titles, years = _paper_names(lib, [r.doc_id for r in records])
    groups = list(grouped(records).items())
    boards = []
    for (dataset_key, metric_key), group in groups[:max_boards]:
        towards = direction(group)
        best = ranked(group, towards)
        boards.append(Leaderboard(dataset=_text(printed(group, "dataset")), dataset_key=dataset_key,
                                  metric=_text(printed(group, "metric")), metric_key=metric_key,
                                  direction=towards.value,
                                  rows=_rows(best[:limit], titles, years), more_rows=max(0, len(best) - limit)))
    return ResultsView(boards=boards, more_boards=max(0, len(groups) - max_boards))


def paper_results(lib: Library, paper_id: str) -> list[ResultRow]:
    """Every record of one paper, in table, row, column order (the Document page's Results section)."""
    doc = find_paper(lib, paper_id)
    titles, years = _paper_names(lib, [doc.id])
    rows = _rows(lib.results.by_doc(doc.id), titles, years)
    for row in rows:
        row.rank = 0  # no leaderboard: the paper's own order
    return rows


def names(lib: Library, kind: str, dataset: str | None = None) -> list[ResultName]:
    """The datasets, metrics or methods the ready papers' records name, with how many records and papers; metrics
    and methods of one dataset when `dataset` names it."""
    if kind not in ("dataset", "metric", "method"):
        raise invalid("kind is dataset, metric or method")
    filters = ResultFilter(doc_ids=[d.id for d in lib.documents.ready_papers()])
    dataset = _name(dataset, "dataset")
    if dataset is not None:
        keys = resolve_keys(lib, "dataset", dataset, filters)
        if len(keys) != 1:
            return []
        filters = ResultFilter(doc_ids=filters.doc_ids, dataset_key=keys[0])
    return [ResultName(key=k, name=_text(shown), records=n, papers=p)
            for k, shown, n, p in lib.results.key_counts(kind, filters)]


def citations(view: ResultsView) -> list[Citation]:
    """Each row as a citation (paper, page, the table's box, and what the cell says), numbered through the view."""
    rows = [row for board in view.boards for row in board.rows]
    return [Citation(n=n, paper_id=r.paper_id, paper=r.paper, page=r.page, box=r.box, kind="table",
                     quote=f"{r.method}: {r.metric} {r.value_text} on {r.dataset or 'an unnamed dataset'} ({r.cell})")
            for n, r in enumerate(rows, 1)]


def display_rows(board: Leaderboard) -> list[dict]:
    """A leaderboard's rows as a table shows them (the Results page): values as printed, the page and cell."""
    return [{"#": r.rank, "Method": r.method, "Value": r.value_text, "Setting": r.setting, "Paper": r.paper,
             "Year": r.year, "Page": r.page, "Cell": r.cell} for r in board.rows]
