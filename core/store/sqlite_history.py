"""The history of questions and results (HistoryStore) in the workspace's SQLite file; what an entry holds and
how many are kept is decided in core.query.history."""
from __future__ import annotations

from typing import Any

from core.store.sqlite_db import Database

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


class QueryHistoryStore:
    def __init__(self, db: Database):
        self.db = db
        with db.connect() as conn:
            conn.executescript(SCHEMA)

    def add(self, *, entry_id: str, ts: float, question: str, mode: str, batch: str, summary: str, payload: str,
            keep: int) -> None:
        with self.db.transaction() as conn:
            conn.execute("INSERT INTO query_history VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (entry_id, ts, question, mode, batch, summary, payload))
            conn.execute("DELETE FROM query_history WHERE id NOT IN (SELECT id FROM query_history ORDER BY ts DESC "
                         "LIMIT ?)", (keep,))

    def recent(self, limit: int) -> list[dict[str, Any]]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT * FROM query_history ORDER BY ts DESC LIMIT ?", (limit,)).fetchall()
        return [dict(r) for r in rows]

    def clear(self) -> None:
        with self.db.connect() as conn:
            conn.execute("DELETE FROM query_history")
