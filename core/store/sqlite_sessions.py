"""The server's sign-in sessions in SQLite: one file (0600 in a 0700 folder) beside accounts.json, shared by every
thread and process of the server, so sign-in limits hold across them. Built by core.library.session_store only."""
from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (token_sha256 TEXT PRIMARY KEY, name TEXT NOT NULL, address TEXT,
                                     created REAL NOT NULL, expires REAL NOT NULL);
CREATE INDEX IF NOT EXISTS sessions_by_name ON sessions(name);
CREATE TABLE IF NOT EXISTS attempts (id INTEGER PRIMARY KEY, name TEXT NOT NULL, address TEXT NOT NULL,
                                     at REAL NOT NULL, state TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS attempts_by_time ON attempts(at);
"""


class SQLiteSessionStore:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """One connection per call: the server's threads (the HTTP routes, every session's script) share the file,
        and SQLite serialises their writes. The file is created 0600 in a 0700 folder before SQLite opens it (its
        journal takes the file's mode)."""
        if not self.path.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            conn.executescript(_SCHEMA)
            yield conn
        finally:
            conn.close()

    def cookie_key(self) -> bytes:
        with self._db() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'cookie_key'").fetchone()
            if row is None:
                conn.execute("INSERT OR IGNORE INTO meta VALUES ('cookie_key', ?)", (secrets.token_hex(32),))
                row = conn.execute("SELECT value FROM meta WHERE key = 'cookie_key'").fetchone()
        return bytes.fromhex(row[0])

    def add(self, token_sha256: str, name: str, address: str, created: float, expires: float) -> None:
        with self._db() as conn:
            conn.execute("DELETE FROM sessions WHERE expires <= ?", (created,))
            conn.execute("INSERT INTO sessions VALUES (?, ?, ?, ?, ?)", (token_sha256, name, address, created, expires))

    def find(self, token_sha256: str) -> tuple[str, float, float] | None:
        with self._db() as conn:
            row = conn.execute("SELECT name, created, expires FROM sessions WHERE token_sha256 = ?",
                               (token_sha256,)).fetchone()
        return tuple(row) if row else None

    def remove(self, token_sha256: str) -> bool:
        with self._db() as conn:
            return conn.execute("DELETE FROM sessions WHERE token_sha256 = ?", (token_sha256,)).rowcount > 0

    def remove_all_of(self, name: str) -> int:
        with self._db() as conn:
            return conn.execute("DELETE FROM sessions WHERE name = ?", (name,)).rowcount

    def begin_attempt(self, name: str, address: str, now: float, since: float, stale: float,
                      max_per_name_and_address: int, max_per_address: int) -> tuple[int | None, int, int]:
        with self._db() as conn:
            conn.execute("BEGIN IMMEDIATE")  # the count and the insert are one step for every thread and process
            try:
                conn.execute("DELETE FROM attempts WHERE at < ? OR (state = 'pending' AND at < ?)", (since, stale))
                by_name, by_address = conn.execute(
                    "SELECT COALESCE(SUM(name = ? AND address = ?), 0), COALESCE(SUM(address = ?), 0) FROM attempts",
                    (name, address, address)).fetchone()
                attempt = None
                if by_name < max_per_name_and_address and by_address < max_per_address:
                    attempt = conn.execute("INSERT INTO attempts (name, address, at, state) "
                                           "VALUES (?, ?, ?, 'pending')", (name, address, now)).lastrowid
                conn.execute("COMMIT")
                return attempt, by_name, by_address
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def end_attempt(self, attempt: int, succeeded: bool) -> None:
        with self._db() as conn:
            if succeeded:
                conn.execute("DELETE FROM attempts WHERE id = ?", (attempt,))
            else:
                conn.execute("UPDATE attempts SET state = 'failed' WHERE id = ?", (attempt,))
