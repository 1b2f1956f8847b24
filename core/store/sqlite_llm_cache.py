"""LLM replies by request key and a log of every call (LLMCacheStore), in the workspace's SQLite file.

The tables are created here rather than in sqlite_db.py's schema so the core schema stays ignorant of LLMs; what a
key hashes and when a reply may be stored is decided by the caching wrapper in core.models.llm.cache.
"""
from __future__ import annotations

import time
from typing import Any

from core.store.sqlite_db import Database

SCHEMA = """
CREATE TABLE IF NOT EXISTS llm_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    meta TEXT
);
CREATE TABLE IF NOT EXISTS llm_calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    model TEXT NOT NULL,
    purpose TEXT NOT NULL DEFAULT '',
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    latency_s REAL NOT NULL DEFAULT 0,
    cached INTEGER NOT NULL DEFAULT 0,
    streamed INTEGER NOT NULL DEFAULT 0,
    error TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS llm_calls_by_purpose ON llm_calls(purpose);
"""

# Tokens and seconds count only the calls actually made: a cache hit cost nothing.
_USAGE = ("SELECT purpose, SUM(cached = 0) AS calls, SUM(cached) AS cache_hits, SUM(error != '') AS errors, "
          "SUM(CASE WHEN cached = 0 THEN prompt_tokens ELSE 0 END) AS prompt_tokens, "
          "SUM(CASE WHEN cached = 0 THEN completion_tokens ELSE 0 END) AS completion_tokens, "
          "SUM(CASE WHEN cached = 0 THEN latency_s ELSE 0 END) AS latency_s "
          "FROM llm_calls GROUP BY purpose ORDER BY purpose")


class SQLiteLLMCache:
    def __init__(self, db: Database):
        self.db = db
        with db.connect() as conn:
            conn.executescript(SCHEMA)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(llm_cache)")}
            if "meta" not in columns:  # a workspace from before replies carried token odds
                conn.execute("ALTER TABLE llm_cache ADD COLUMN meta TEXT")

    @property
    def location(self) -> str:
        return str(self.db.path)

    def get(self, key: str) -> dict[str, Any] | None:
        with self.db.connect() as conn:
            row = conn.execute("SELECT text, prompt_tokens, completion_tokens, meta FROM llm_cache WHERE key = ?",
                               (key,)).fetchone()
        return dict(row) if row is not None else None

    def has(self, key: str) -> bool:
        with self.db.connect() as conn:
            return conn.execute("SELECT 1 FROM llm_cache WHERE key = ?", (key,)).fetchone() is not None

    def put(self, key: str, model: str, text: str, prompt_tokens: int = 0, completion_tokens: int = 0,
            meta: str | None = None) -> None:
        with self.db.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO llm_cache (key, model, text, prompt_tokens, completion_tokens, "
                         "created_at, meta) VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (key, model, text, prompt_tokens, completion_tokens, time.time(), meta))

    def forget(self, key: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM llm_cache WHERE key = ?", (key,))

    def log_call(self, *, model: str, purpose: str, prompt_tokens: int, completion_tokens: int, latency_s: float,
                 cached: bool, streamed: bool, error: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("INSERT INTO llm_calls (ts, model, purpose, prompt_tokens, completion_tokens, latency_s, "
                         "cached, streamed, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (time.time(), model, purpose, prompt_tokens, completion_tokens, latency_s, int(cached),
                          int(streamed), error))

    def usage_by_purpose(self) -> list[dict[str, Any]]:
        with self.db.connect() as conn:
            return [dict(r) for r in conn.execute(_USAGE)]
