"""RAGAS scores already computed, in the workspace's SQLite file: a judged metric costs several LLM calls, so a
question scored once is never sent to the judge again while its answer, passages and judge stay the same."""
from __future__ import annotations

import hashlib
import json
import time
from importlib import metadata

from core.store.sqlite_db import Database

SCHEMA = """
CREATE TABLE IF NOT EXISTS ragas_scores (
    key TEXT PRIMARY KEY,
    metric TEXT NOT NULL,
    value REAL NOT NULL,
    created_at REAL NOT NULL
);
"""


def _ragas_version() -> str:
    # Part of every key: another ragas release may prompt or compute differently. Read from the installed
    # package's metadata, which costs nothing next to importing ragas (~3 s).
    try:
        return metadata.version("ragas")
    except metadata.PackageNotFoundError:
        return "absent"


def score_key(metric: str, scorer: str, question: str, answer: str, contexts: list[str], references: list[str],
              reference_contexts: list[str]) -> str:
    """`scorer` names what else decides the value: the judge (model @ endpoint) and, for answer relevancy, the
    embedding model; empty for the metrics computed without a model."""
    payload = json.dumps([metric, scorer, _ragas_version(), question, answer, list(contexts), list(references),
                          list(reference_contexts)], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ScoreCache:
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
