"""Which vector space the workspace's vectors are in (core.models.embedding_space decides what to do with it), as
one row in the workspace's SQLite file."""
from __future__ import annotations

import time

from core.store.sqlite_db import Database

_SCHEMA = ("CREATE TABLE IF NOT EXISTS vector_space (id INTEGER PRIMARY KEY CHECK (id = 1), space TEXT NOT NULL, "
           "recorded_at REAL NOT NULL)")


class SQLiteVectorSpace:
    def __init__(self, db: Database):
        self.db = db

    @property
    def location(self) -> str:
        return str(self.db.path)

    def recorded(self) -> str | None:
        with self.db.connect() as conn:
            conn.execute(_SCHEMA)
            row = conn.execute("SELECT space FROM vector_space WHERE id = 1").fetchone()
        return row["space"] if row else None

    def record(self, space: str) -> None:
        with self.db.connect() as conn:
            conn.execute(_SCHEMA)
            conn.execute("INSERT INTO vector_space (id, space, recorded_at) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE "
                         "SET space = excluded.space, recorded_at = excluded.recorded_at", (space, time.time()))
