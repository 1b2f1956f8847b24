"""The document registry in SQLite, one table seen three ways: the records and their two status machines (the
ingest, DocStatus, and once a paper is ready its graph stage, GraphStatus; every status write is checked against
the machine's transitions), the work queue workers claim documents from, and the live progress of each stage."""
from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from core.schema.records import DocStatus, Document, GraphStatus, IllegalTransition
from core.store.sqlite_db import Database

_JSON_FIELDS = {"timings", "item_counts", "warnings"}
# Plain record fields a status write may carry along. Statuses, messages, live stage details and workers are
# written only through the named methods, which know which of them go together.
_PLAIN_FIELDS = {"title", "pages", "backend", "timings", "item_counts", "chunk_count", "warnings"}
_IN_PROGRESS = tuple(s.value for s in DocStatus if s.in_progress)
_GRAPH_IN_PROGRESS = tuple(s.value for s in GraphStatus if s.in_progress)


def _row_to_document(row) -> Document:
    return Document(
        id=row["id"], filename=row["filename"], title=row["title"], status=DocStatus(row["status"]),
        message=row["message"], pages=row["pages"], backend=row["backend"], size_bytes=row["size_bytes"],
        created_at=row["created_at"], updated_at=row["updated_at"], timings=json.loads(row["timings"]),
        item_counts=json.loads(row["item_counts"]), chunk_count=row["chunk_count"],
        warnings=json.loads(row["warnings"]), graph_status=GraphStatus(row["graph_status"]),
        graph_message=row["graph_message"],
    )


def _get(db: Database, doc_id: str) -> Document | None:
    with db.connect() as conn:
        row = conn.execute("SELECT * FROM documents WHERE id = ?", (doc_id,)).fetchone()
    return _row_to_document(row) if row else None


def _plain(fields: dict[str, Any]) -> dict[str, Any]:
    unknown = set(fields) - _PLAIN_FIELDS
    if unknown:
        raise ValueError(f"not plain document fields: {sorted(unknown)}")
    return {k: json.dumps(v) if k in _JSON_FIELDS else v for k, v in fields.items()}


def _graph_values(status: GraphStatus, message: str, detail: str, fraction: float | None) -> dict[str, Any]:
    # Only claim_graph_next names a worker: it is the one that holds the row while extracting.
    values = {"graph_status": status.value, "graph_message": message, "graph_detail": detail[:300],
              "graph_worker": ""}
    if fraction is not None:
        values["graph_progress"] = round(fraction, 3)
    return values


def _check(current, new) -> None:
    if not current.can_become(new):
        raise IllegalTransition(f"{type(new).__name__} {current.value!r} cannot become {new.value!r}")


# Every ingest and graph run starts by asking which rows are in progress, queued or pending: answered from these
# indexes, those questions cost what the rows in that state cost, not a scan of the whole registry.
_INDEXES = """
CREATE INDEX IF NOT EXISTS documents_by_status ON documents(status, created_at, id);
CREATE INDEX IF NOT EXISTS documents_by_graph_status ON documents(graph_status, status, created_at, id);
"""


class SQLiteDocumentRecords:
    def __init__(self, db: Database):
        self.db = db
        with db.connect() as conn:
            conn.executescript(_INDEXES)

    def get(self, doc_id: str) -> Document | None:
        return _get(self.db, doc_id)

    def list(self) -> list[Document]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT * FROM documents ORDER BY created_at, id").fetchall()
        return [_row_to_document(r) for r in rows]

    def ready_papers(self) -> list[Document]:
        """The searchable papers, oldest first."""
        with self.db.connect() as conn:
            rows = conn.execute("SELECT * FROM documents WHERE status = ? ORDER BY created_at, id",
                                (DocStatus.READY.value,)).fetchall()
        return [_row_to_document(r) for r in rows]

    def ids_with_status(self, status: DocStatus) -> list[str]:
        with self.db.connect() as conn:
            return [r[0] for r in conn.execute("SELECT id FROM documents WHERE status = ? ORDER BY created_at, id",
                                               (status.value,))]

    def status_counts(self) -> dict[DocStatus, int]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT status, COUNT(*) FROM documents GROUP BY status").fetchall()
        return {DocStatus(r[0]): r[1] for r in rows}

    def ready_titles(self) -> dict[str, str]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT id, title, filename FROM documents WHERE status = ? ORDER BY created_at, id",
                                (DocStatus.READY.value,)).fetchall()
        return {r["id"]: r["title"] or r["filename"] for r in rows}

    def insert(self, doc: Document) -> bool:
        now = time.time()
        with self.db.connect() as conn:
            cur = conn.execute(
                "INSERT OR IGNORE INTO documents (id, filename, title, status, message, size_bytes, created_at,"
                " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (doc.id, doc.filename, doc.title, doc.status.value, doc.message, doc.size_bytes, now, now))
            return cur.rowcount == 1

    def set_status(self, doc_id: str, status: DocStatus, message: str = "", *, graph: GraphStatus | None = None,
                   graph_detail: str = "", **fields: Any) -> None:
        """Move a document's ingest to `status`; with `graph`, its graph stage moves in the same write (a paper
        that turns ready queues its graph, a failed one has none). A document deleted meanwhile is left alone.
        Raises IllegalTransition for a move the state machine does not allow."""
        values = {"status": status.value, "message": message, **_plain(fields)}
        if status not in (DocStatus.PARSING, DocStatus.INDEXING):  # no live stage, no worker holds it
            values.update(stage_detail="", progress=1.0 if status == DocStatus.READY else 0.0, worker="")
        if graph is not None:
            values.update(_graph_values(graph, "", graph_detail, 0.0))
        with self.db.transaction() as conn:
            row = conn.execute("SELECT status, graph_status FROM documents WHERE id = ?", (doc_id,)).fetchone()
            if row is None:
                return
            _check(DocStatus(row["status"]), status)
            if graph is not None:
                _check(GraphStatus(row["graph_status"]), graph)
            _write(conn, doc_id, values)

    def set_graph_status(self, doc_id: str, status: GraphStatus, message: str = "", *, detail: str = "",
                         fraction: float | None = None, expect: GraphStatus | None = None, **fields: Any) -> bool:
        """Move a paper's graph stage to `status`; `fraction` None keeps the progress shown so far. With `expect`,
        nothing is written unless the graph stage is still there (a worker finishing a paper that was re-queued
        meanwhile leaves it re-queued). False when nothing was written; IllegalTransition for a move the state
        machine does not allow."""
        values = {**_graph_values(status, message, detail, fraction), **_plain(fields)}
        with self.db.transaction() as conn:
            row = conn.execute("SELECT graph_status FROM documents WHERE id = ?", (doc_id,)).fetchone()
            if row is None or (expect is not None and row["graph_status"] != expect.value):
                return False
            _check(GraphStatus(row["graph_status"]), status)
            _write(conn, doc_id, values)
        return True

    def set_title(self, doc_id: str, title: str) -> None:
        with self.db.connect() as conn:
            conn.execute("UPDATE documents SET title = ?, updated_at = ? WHERE id = ?", (title, time.time(), doc_id))

    def delete(self, doc_id: str) -> None:
        with self.db.connect() as conn:
            conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,))


class SQLiteWorkQueue:
    """Workers take documents from here, one at a time: BEGIN IMMEDIATE serialises claims across processes."""

    def __init__(self, db: Database):
        self.db = db

    def claim_next(self, worker: str) -> Document | None:
        # BEGIN IMMEDIATE serialises claims across processes: two workers never take the same document.
        with self.db.transaction() as conn:
            row = conn.execute("SELECT id FROM documents WHERE status = ? ORDER BY created_at, id LIMIT 1",
                               (DocStatus.QUEUED.value,)).fetchone()
            if row is None:
                return None
            conn.execute("UPDATE documents SET status = ?, worker = ?, message = '', stage_detail = '',"
                         " progress = 0, updated_at = ? WHERE id = ?",
                         (DocStatus.PARSING.value, worker, time.time(), row["id"]))
        return _get(self.db, row["id"])

    def claim_graph_next(self, worker: str) -> Document | None:
        """Atomically take the oldest ready document whose graph is pending."""
        with self.db.transaction() as conn:
            row = conn.execute("SELECT id FROM documents WHERE status = ? AND graph_status = ? "
                               "ORDER BY created_at, id LIMIT 1",
                               (DocStatus.READY.value, GraphStatus.PENDING.value)).fetchone()
            if row is None:
                return None
            conn.execute("UPDATE documents SET graph_status = ?, graph_worker = ?, graph_detail = '', "
                         "graph_progress = 0, updated_at = ? WHERE id = ?",
                         (GraphStatus.EXTRACTING.value, worker, time.time(), row["id"]))
        return _get(self.db, row["id"])

    def in_progress_workers(self) -> dict[str, str]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT id, worker FROM documents WHERE status IN (?, ?)",
                                (DocStatus.PARSING.value, DocStatus.INDEXING.value))
            return {r["id"]: r["worker"] for r in rows}

    def graph_workers(self) -> dict[str, str]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT id, graph_worker FROM documents WHERE graph_status = ?",
                                (GraphStatus.EXTRACTING.value,))
            return {r["id"]: r["graph_worker"] for r in rows}


class SQLiteStageProgress:
    """The live detail and fraction done of each document's ingest and graph stage, for the Library page."""

    def __init__(self, db: Database):
        self.db = db

    def progress(self) -> dict[str, tuple[str, float]]:
        """Live stage detail and fraction done of every document in progress, for the Library page."""
        with self.db.connect() as conn:
            rows = conn.execute(f"SELECT id, stage_detail, progress FROM documents WHERE status IN "
                                f"({', '.join('?' * len(_IN_PROGRESS))})", _IN_PROGRESS).fetchall()
        return {r["id"]: (r["stage_detail"], r["progress"]) for r in rows}

    def graph_progress(self) -> dict[str, tuple[str, float]]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT id, graph_detail, graph_progress FROM documents WHERE status = ? AND "
                                "graph_status IN (?, ?)", (DocStatus.READY.value, *_GRAPH_IN_PROGRESS)).fetchall()
        return {r["id"]: (r["graph_detail"], r["graph_progress"]) for r in rows}

    def report_stage(self, doc_id: str, detail: str, fraction: float) -> None:
        """The live detail and fraction done of a document being parsed or indexed."""
        self._report(doc_id, "stage_detail", "progress", detail, fraction)

    def report_stages(self, doc_ids: Sequence[str], detail: str, fraction: float) -> None:
        """One live detail for several documents at once (a batch of short documents), in one statement."""
        with self.db.connect() as conn:
            for start in range(0, len(doc_ids), 500):  # stay under SQLite's bound-parameter limit
                part = list(doc_ids[start:start + 500])
                conn.execute(f"UPDATE documents SET stage_detail = ?, progress = ?, updated_at = ? WHERE id IN "
                             f"({','.join('?' * len(part))})", (detail[:300], round(fraction, 3), time.time(), *part))

    def report_graph_stage(self, doc_id: str, detail: str, fraction: float) -> None:
        """The live detail and fraction done of a paper's graph stage (the paper is ready meanwhile)."""
        self._report(doc_id, "graph_detail", "graph_progress", detail, fraction)

    def _report(self, doc_id: str, detail_column: str, progress_column: str, detail: str, fraction: float) -> None:
        with self.db.connect() as conn:
            conn.execute(f"UPDATE documents SET {detail_column} = ?, {progress_column} = ?, updated_at = ? "
                         "WHERE id = ?", (detail[:300], round(fraction, 3), time.time(), doc_id))


def _write(conn, doc_id: str, values: dict[str, Any]) -> None:
    values = {**values, "updated_at": time.time()}
    assignments = ", ".join(f"{k} = ?" for k in values)  # keys are this module's own column names
    conn.execute(f"UPDATE documents SET {assignments} WHERE id = ?", (*values.values(), doc_id))
