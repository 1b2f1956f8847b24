"""The history of questions and results (HistoryStore) in the workspace's SQLite file; what an entry holds, whose
it is and how many are kept is decided in core.query.history."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.store.sqlite_db import Database, ensure_schema

SCHEMA = """
CREATE TABLE IF NOT EXISTS query_history (
    id TEXT PRIMARY KEY,
    ts REAL NOT NULL,
    question TEXT NOT NULL,
    mode TEXT NOT NULL,
    batch TEXT NOT NULL DEFAULT '',
    summary TEXT NOT NULL DEFAULT '',
    payload TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS query_history_by_ts ON query_history(ts);
"""
# Added when histories became per account: rows kept before have no owner ('') and stay so (core.query.history
# says who sees them). The index needs the column, so it is made after it.
_ADDED_COLUMNS = {"query_history": {"owner": "TEXT NOT NULL DEFAULT ''"}}
_OWNER_INDEX = "CREATE INDEX IF NOT EXISTS query_history_by_owner ON query_history(owner, ts)"
_COLUMNS = "id, ts, question, mode, batch, summary, payload, owner"


class QueryHistoryStore:
    def __init__(self, db: Database):
        self.db = db
        ensure_schema(db, SCHEMA, _ADDED_COLUMNS)
        with db.connect() as conn:
            conn.execute(_OWNER_INDEX)

    def add(self, *, entry_id: str, ts: float, question: str, mode: str, batch: str, summary: str, payload: str,
            keep: int, owner: str = "") -> None:
        with self.db.transaction() as conn:
            conn.execute(f"INSERT INTO query_history ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (entry_id, ts, question, mode, batch, summary, payload, owner))
            # Per owner: one account's thousand questions do not push another's out.
            conn.execute("DELETE FROM query_history WHERE owner = ? AND id NOT IN (SELECT id FROM query_history "
                         "WHERE owner = ? ORDER BY ts DESC LIMIT ?)", (owner, owner, keep))

    def recent(self, limit: int, owners: Sequence[str] = ("",)) -> list[dict[str, Any]]:
        marks = ", ".join("?" for _ in owners)
        with self.db.connect() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM query_history WHERE owner IN ({marks}) "
                                "ORDER BY ts DESC LIMIT ?", (*owners, limit)).fetchall()
        return [dict(r) for r in rows]

    def clear(self, owner: str = "") -> None:
        with self.db.connect() as conn:
            conn.execute("DELETE FROM query_history WHERE owner = ?", (owner,))
