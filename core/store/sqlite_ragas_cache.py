"""RAGAS scores already computed, by key (core.eval.ragas_scores.score_key), in the workspace's SQLite file: a
judged metric costs several LLM calls, so a question scored once is never sent to the judge again while its
answer, passages and judge stay the same."""
from __future__ import annotations

import time

from core.store.sqlite_db import Database

SCHEMA = """
CREATE TABLE IF NOT EXISTS ragas_scores (
    key TEXT PRIMARY KEY,
    metric TEXT NOT NULL,
    value REAL NOT NULL,
    created_at REAL NOT NULL
);
"""


class SQLiteScoreCache:
    def __init__(self, db: Database):
        self.db = db
        with db.connect() as conn:
            conn.executescript(SCHEMA)

    def get_many(self, keys: list[str]) -> dict[str, float]:
        found: dict[str, float] = {}
        unique = list(dict.fromkeys(keys))
        with self.db.connect() as conn:
            for start in range(0, len(unique), 500):  # under SQLite's limit of bound parameters
                part = unique[start:start + 500]
                marks = ",".join("?" * len(part))
                for row in conn.execute(f"SELECT key, value FROM ragas_scores WHERE key IN ({marks})", part):
                    found[row["key"]] = float(row["value"])
        return found

    def put(self, key: str, metric: str, value: float) -> None:
        """Only real values are kept: a failure (an unreadable reply, a timeout) must be retried next time."""
        with self.db.connect() as conn:
            conn.execute("INSERT OR REPLACE INTO ragas_scores VALUES (?, ?, ?, ?)", (key, metric, value, time.time()))
