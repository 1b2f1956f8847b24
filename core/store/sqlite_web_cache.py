"""Replies of the online metadata services (core.models.scholarly), keyed by request, in the workspace's SQLite file:
a repeated request is answered from here without a call. The key is a hash of the service and the request's path
and parameters without the contact e-mail; no header, and so no key or address, is ever stored. Only replies that
parsed as JSON (and "not found", which is an answer too) are kept."""
from __future__ import annotations

import time

from core.store.sqlite_db import Database, ensure_schema

SCHEMA = """
CREATE TABLE IF NOT EXISTS web_cache (
    key TEXT PRIMARY KEY,
    service TEXT NOT NULL,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    fetched_at REAL NOT NULL
);
"""


class SQLiteWebCache:
    def __init__(self, db: Database):
        self.db = db
        ensure_schema(db, SCHEMA)

    def get(self, key: str) -> tuple[int, str] | None:
        with self.db.connect() as conn:
            row = conn.execute("SELECT status, body FROM web_cache WHERE key = ?", (key,)).fetchone()
        return (int(row[0]), str(row[1])) if row else None

    def put(self, key: str, service: str, status: int, body: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO web_cache (key, service, status, body, fetched_at) "
                         "VALUES (?, ?, ?, ?, ?)", (key, service, status, body, time.time()))

    def clear(self) -> int:
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM web_cache").rowcount
