"""Each paper's results (core.schema.results.ResultRecord: method × dataset × metric, cited to its table cell) in
the workspace's SQLite file, created on first open as the references' tables are.

A paper's records are replaced whole at every parse (`replace_doc`) and go with it (`delete_doc`); the leaderboard
reads them across papers by the normalised keys, which are indexed. `python -m core results rebuild` fills the table
for papers ingested before it existed."""
from __future__ import annotations

import json
from collections.abc import Sequence

from core.schema.results import Direction, ResultRecord, ResultSource
from core.store.base_results import ResultFilter
from core.store.sqlite_db import Database, ensure_schema

SCHEMA = """
CREATE TABLE IF NOT EXISTS paper_results (
    doc_id TEXT NOT NULL,
    item_index INTEGER NOT NULL,
    row INTEGER NOT NULL,
    col INTEGER NOT NULL,
    method TEXT NOT NULL,
    dataset TEXT NOT NULL,
    metric TEXT NOT NULL,
    value REAL NOT NULL,
    value_text TEXT NOT NULL,
    unit TEXT NOT NULL DEFAULT '',
    setting TEXT NOT NULL DEFAULT '',
    direction TEXT NOT NULL DEFAULT '',
    best INTEGER NOT NULL DEFAULT 0,
    page INTEGER NOT NULL DEFAULT 0,
    bbox TEXT,
    table_label TEXT NOT NULL DEFAULT '',
    caption TEXT NOT NULL DEFAULT '',
    method_key TEXT NOT NULL DEFAULT '',
    dataset_key TEXT NOT NULL DEFAULT '',
    metric_key TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT 'rules',
    extra TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS paper_results_by_doc ON paper_results(doc_id, item_index, row, col);
CREATE INDEX IF NOT EXISTS paper_results_by_dataset ON paper_results(dataset_key, metric_key);
CREATE INDEX IF NOT EXISTS paper_results_by_metric ON paper_results(metric_key);
CREATE INDEX IF NOT EXISTS paper_results_by_method ON paper_results(method_key);
"""
_COLUMNS = ("doc_id, item_index, row, col, method, dataset, metric, value, value_text, unit, setting, direction, "
            "best, page, bbox, table_label, caption, method_key, dataset_key, metric_key, source, extra")
_KEY_COLUMNS = {"dataset": ("dataset_key", "dataset"), "metric": ("metric_key", "metric"),
                "method": ("method_key", "method")}


def _enum(kind, value: str, default):
    try:
        return kind(value)
    except ValueError:
        return default


def _record(row) -> ResultRecord:
    try:
        box = json.loads(row["bbox"]) if row["bbox"] else []
        extra = json.loads(row["extra"] or "{}")
    except ValueError:
        box, extra = [], {}
    return ResultRecord(
        doc_id=row["doc_id"], item_index=row["item_index"], row=row["row"], col=row["col"], method=row["method"],
        dataset=row["dataset"], metric=row["metric"], value=row["value"], value_text=row["value_text"],
        unit=row["unit"], setting=row["setting"], direction=_enum(Direction, row["direction"], Direction.UNKNOWN),
        best=bool(row["best"]), page=row["page"], bbox=tuple(float(x) for x in box if isinstance(x, int | float)),
        table_label=row["table_label"], caption=row["caption"], method_key=row["method_key"],
        dataset_key=row["dataset_key"], metric_key=row["metric_key"],
        source=_enum(ResultSource, row["source"], ResultSource.RULES),
        extra={str(k): str(v) for k, v in extra.items()} if isinstance(extra, dict) else {})


def _row(r: ResultRecord) -> tuple:
    return (r.doc_id, r.item_index, r.row, r.col, r.method, r.dataset, r.metric, float(r.value), r.value_text,
            r.unit, r.setting, Direction(r.direction).value, int(bool(r.best)), r.page,
            json.dumps(list(r.bbox)) if r.bbox else None, r.table_label, r.caption, r.method_key, r.dataset_key,
            r.metric_key, ResultSource(r.source).value, json.dumps(dict(r.extra), ensure_ascii=False))


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _where(f: ResultFilter) -> tuple[str, list]:
    clauses: list[str] = []
    params: list = []
    for column, value in (("dataset_key", f.dataset_key), ("metric_key", f.metric_key),
                          ("method_key", f.method_key), ("setting", f.setting)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if f.doc_ids is not None:
        ids = list(dict.fromkeys(f.doc_ids))
        if not ids:
            return "0", []
        clauses.append(f"doc_id IN ({','.join('?' * len(ids))})")
        params += ids
    for word in (f.text or "").split():
        # Every word somewhere in the record's names, its table's label or caption (case-insensitive for ASCII).
        clauses.append("(" + " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in
                                         ("method", "dataset", "metric", "setting", "table_label", "caption")) + ")")
        params += [_like(word)] * 6
    return (" AND ".join(clauses) or "1"), params


class SQLiteResultStore:
    def __init__(self, db: Database):
        self.db = db
        ensure_schema(db, SCHEMA)

    def replace_doc(self, doc_id: str, records: Sequence[ResultRecord]) -> None:
        """The paper's records, replaced as a whole in one transaction (those of an older parse go)."""
        if any(r.doc_id != doc_id for r in records):
            raise ValueError("every record must belong to the paper it is stored under")
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM paper_results WHERE doc_id = ?", (doc_id,))
            conn.executemany(f"INSERT INTO paper_results ({_COLUMNS}) VALUES ({','.join('?' * 22)})",
                             [_row(r) for r in records])

    def by_doc(self, doc_id: str) -> list[ResultRecord]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT * FROM paper_results WHERE doc_id = ? ORDER BY item_index, row, col",
                                (doc_id,))
            return [_record(r) for r in rows]

    def find(self, filters: ResultFilter, limit: int | None = None) -> list[ResultRecord]:
        where, params = _where(filters)
        sql = f"SELECT * FROM paper_results WHERE {where} ORDER BY doc_id, item_index, row, col"
        if limit is not None:
            sql += " LIMIT ?"
            params = [*params, int(limit)]
        with self.db.connect() as conn:
            return [_record(r) for r in conn.execute(sql, params)]

    def key_counts(self, kind: str, filters: ResultFilter | None = None) -> list[tuple[str, str, int, int]]:
        """(key, the name papers print most often for it, records, papers) for each dataset, metric or method key
        among the records the filters keep; the most records first."""
        key, name = _KEY_COLUMNS[kind]
        where, params = _where(filters or ResultFilter())
        with self.db.connect() as conn:
            names = conn.execute(f"SELECT {key}, {name}, COUNT(*) FROM paper_results WHERE {where} AND {key} != '' "
                                 f"GROUP BY {key}, {name}", params).fetchall()
            totals = conn.execute(f"SELECT {key}, COUNT(*), COUNT(DISTINCT doc_id) FROM paper_results "
                                  f"WHERE {where} AND {key} != '' GROUP BY {key}", params).fetchall()
        shown: dict[str, tuple[int, str]] = {}
        for k, printed, n in names:
            if k not in shown or (n, -len(printed)) > (shown[k][0], -len(shown[k][1])):
                shown[k] = (n, printed)
        return sorted(((k, shown[k][1], n, papers) for k, n, papers in totals), key=lambda t: (-t[2], t[1].lower()))

    def printed_names(self, kind: str, filters: ResultFilter | None = None) -> list[tuple[str, str]]:
        """(key, name as printed) of every spelling the records kept by the filters print for a dataset, metric or
        method: a question may say any of them ("WTQ" where another row prints "WikiTableQuestions")."""
        key, name = _KEY_COLUMNS[kind]
        where, params = _where(filters or ResultFilter())
        with self.db.connect() as conn:
            return [(k, n) for k, n in conn.execute(f"SELECT DISTINCT {key}, {name} FROM paper_results WHERE {where} "
                                                    f"AND {key} != ''", params)]

    def delete_doc(self, doc_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM paper_results WHERE doc_id = ?", (doc_id,))

    def doc_counts(self) -> dict[str, int]:
        """doc id → records, for every document that has any."""
        with self.db.connect() as conn:
            return {r[0]: r[1] for r in conn.execute("SELECT doc_id, COUNT(*) FROM paper_results GROUP BY doc_id")}

    def count(self) -> int:
        with self.db.connect() as conn:
            return conn.execute("SELECT COUNT(*) FROM paper_results").fetchone()[0]


