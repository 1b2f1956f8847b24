"""The workspace's history of questions and results, in its SQLite file, for the Ask and Compare pages."""
from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass

from core.library import Library
from core.query.records import QueryResult

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
MAX_ENTRIES = 2000  # older entries are dropped: a history, not an archive


@dataclass
class HistoryEntry:
    id: str
    ts: float
    question: str
    mode: str
    summary: str
    payload_json: str

    @property
    def payload(self) -> dict:
        """The whole result, parsed only when asked for: the page lists questions on every rerun."""
        return json.loads(self.payload_json)


def _ensure(lib: Library) -> None:
    with lib.db.connect() as conn:
        conn.executescript(SCHEMA)


def save_result(lib: Library, result: QueryResult, batch: str = "") -> str:
    _ensure(lib)
    entry_id = uuid.uuid4().hex
    answer = result.answer.text if result.answer else "(context only)"
    payload = result.to_dict()
    with lib.db.transaction() as conn:
        conn.execute("INSERT INTO query_history VALUES (?, ?, ?, ?, ?, ?, ?)",
                     (entry_id, time.time(), result.question, result.mode, batch, answer[:300],
                      json.dumps(payload, default=str)))
        conn.execute("DELETE FROM query_history WHERE id NOT IN (SELECT id FROM query_history ORDER BY ts DESC "
                     "LIMIT ?)", (MAX_ENTRIES,))
    return entry_id


def recent(lib: Library, limit: int = 50) -> list[HistoryEntry]:
    _ensure(lib)
    with lib.db.connect() as conn:
        rows = conn.execute("SELECT * FROM query_history ORDER BY ts DESC LIMIT ?", (limit,)).fetchall()
    return [HistoryEntry(id=r["id"], ts=r["ts"], question=r["question"], mode=r["mode"], summary=r["summary"],
                         payload_json=r["payload"]) for r in rows]


def clear(lib: Library) -> None:
    _ensure(lib)
    with lib.db.connect() as conn:
        conn.execute("DELETE FROM query_history")
