"""The document registry and its status machine (queued → parsing → indexing → ready | failed), in SQLite."""
from __future__ import annotations

import json
import time
from typing import Any

from core.schema.records import DocStatus, Document
from core.store.sqlite_db import Database

_JSON_FIELDS = {"timings", "item_counts", "warnings"}
_COLUMNS = {"filename", "title", "status", "message", "stage_detail", "progress", "pages", "backend", "size_bytes",
            "timings", "item_counts", "chunk_count", "warnings", "worker", "graph_status", "graph_detail",
            "graph_progress", "graph_worker", "graph_message"}


def _row_to_document(row) -> Document:
    return Document(
        id=row["id"], filename=row["filename"], title=row["title"], status=DocStatus(row["status"]),
        message=row["message"], pages=row["pages"], backend=row["backend"], size_bytes=row["size_bytes"],
        created_at=row["created_at"], updated_at=row["updated_at"], timings=json.loads(row["timings"]),
        item_counts=json.loads(row["item_counts"]), chunk_count=row["chunk_count"],
        warnings=json.loads(row["warnings"]), graph_status=row["graph_status"], graph_message=row["graph_message"],
    )


class SQLiteDocumentStore:
    def __init__(self, db: Database):
        self.db = db

    def get(self, doc_id: str) -> Document | None:
        with self.db.connect() as conn:
            row = conn.execute("SELECT * FROM documents WHERE id = ?", (doc_id,)).fetchone()
        return _row_to_document(row) if row else None

    def list(self) -> list[Document]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT * FROM documents ORDER BY created_at, id").fetchall()
        return [_row_to_document(r) for r in rows]

    def progress(self) -> dict[str, tuple[str, float]]:
        """Live stage detail and fraction done of every document in progress, for the Library page."""
        with self.db.connect() as conn:
            rows = conn.execute("SELECT id, stage_detail, progress FROM documents WHERE status IN (?, ?, ?)",
                                ("queued", "parsing", "indexing")).fetchall()
        return {r["id"]: (r["stage_detail"], r["progress"]) for r in rows}

    def ids_with_status(self, status: DocStatus) -> list[str]:
        with self.db.connect() as conn:
            return [r[0] for r in conn.execute("SELECT id FROM documents WHERE status = ?", (status.value,))]

    def insert(self, doc: Document) -> bool:
        now = time.time()
        with self.db.connect() as conn:
            cur = conn.execute(
                "INSERT OR IGNORE INTO documents (id, filename, title, status, message, size_bytes, created_at,"
                " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (doc.id, doc.filename, doc.title, doc.status.value, doc.message, doc.size_bytes, now, now))
            return cur.rowcount == 1

    def update(self, doc_id: str, **fields: Any) -> None:
        unknown = set(fields) - _COLUMNS
        if unknown:
            raise ValueError(f"unknown document fields: {sorted(unknown)}")
        values = {k: (json.dumps(v) if k in _JSON_FIELDS else v.value if isinstance(v, DocStatus) else v)
                  for k, v in fields.items()}
        values["updated_at"] = time.time()
        assignments = ", ".join(f"{k} = ?" for k in values)
        with self.db.connect() as conn:
            conn.execute(f"UPDATE documents SET {assignments} WHERE id = ?", (*values.values(), doc_id))

    def set_status(self, doc_id: str, status: DocStatus, message: str = "", **fields: Any) -> None:
        self.update(doc_id, status=status, message=message, **fields)

    def claim_next(self, worker: str) -> Document | None:
        # BEGIN IMMEDIATE serialises claims across processes: two workers never take the same document.
        with self.db.transaction() as conn:
            row = conn.execute("SELECT id FROM documents WHERE status = 'queued' ORDER BY created_at, id"
                               " LIMIT 1").fetchone()
            if row is None:
                return None
            conn.execute("UPDATE documents SET status = 'parsing', worker = ?, message = '', stage_detail = '',"
                         " progress = 0, updated_at = ? WHERE id = ?", (worker, time.time(), row["id"]))
        return self.get(row["id"])

    def claim_graph_next(self, worker: str) -> Document | None:
        """Atomically take the oldest ready document whose graph is pending."""
        with self.db.transaction() as conn:
            row = conn.execute("SELECT id FROM documents WHERE status = 'ready' AND graph_status = 'pending' "
                               "ORDER BY created_at, id LIMIT 1").fetchone()
            if row is None:
                return None
            conn.execute("UPDATE documents SET graph_status = 'extracting', graph_worker = ?, graph_detail = '', "
                         "graph_progress = 0, updated_at = ? WHERE id = ?", (worker, time.time(), row["id"]))
        return self.get(row["id"])

    def graph_progress(self) -> dict[str, tuple[str, float]]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT id, graph_detail, graph_progress FROM documents WHERE status = 'ready' AND "
                                "graph_status IN ('pending', 'extracting')").fetchall()
        return {r["id"]: (r["graph_detail"], r["graph_progress"]) for r in rows}

    def graph_workers(self) -> dict[str, str]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT id, graph_worker FROM documents WHERE graph_status = 'extracting'")
            return {r["id"]: r["graph_worker"] for r in rows}

    def in_progress_workers(self) -> dict[str, str]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT id, worker FROM documents WHERE status IN ('parsing', 'indexing')")
            return {r["id"]: r["worker"] for r in rows}

    def delete(self, doc_id: str) -> None:
        with self.db.connect() as conn:
            conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
