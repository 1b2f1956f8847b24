"""One SQLite file per workspace for documents, statuses, chunks and caches.

A connection per call keeps threads (Streamlit's script threads, the ingest worker) and processes (app and
CLI on the same workspace) safe without a shared connection; WAL lets readers go on while a writer commits.
"""
from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY,
    filename TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    message TEXT NOT NULL DEFAULT '',
    stage_detail TEXT NOT NULL DEFAULT '',
    progress REAL NOT NULL DEFAULT 0,
    pages INTEGER NOT NULL DEFAULT 0,
    backend TEXT NOT NULL DEFAULT '',
    size_bytes INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    timings TEXT NOT NULL DEFAULT '{}',
    item_counts TEXT NOT NULL DEFAULT '{}',
    chunk_count INTEGER NOT NULL DEFAULT 0,
    warnings TEXT NOT NULL DEFAULT '[]',
    worker TEXT NOT NULL DEFAULT '',
    graph_status TEXT NOT NULL DEFAULT '',
    graph_detail TEXT NOT NULL DEFAULT '',
    graph_progress REAL NOT NULL DEFAULT 0,
    graph_worker TEXT NOT NULL DEFAULT '',
    graph_message TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    pages TEXT NOT NULL,
    item_indices TEXT NOT NULL,
    section TEXT NOT NULL DEFAULT '',
    tokens INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks(doc_id, idx);
"""
# Columns added after the first release: workspaces created before them gain them on open.
_ADDED_COLUMNS = {
    "documents": {"graph_status": "TEXT NOT NULL DEFAULT ''", "graph_detail": "TEXT NOT NULL DEFAULT ''",
                  "graph_progress": "REAL NOT NULL DEFAULT 0", "graph_worker": "TEXT NOT NULL DEFAULT ''",
                  "graph_message": "TEXT NOT NULL DEFAULT ''"},
}


_SCHEMAS_MADE: set[tuple[str, str]] = set()  # (database file, schema): a store's tables made once per process


def ensure_schema(db: Database, schema: str, columns: dict[str, dict[str, str]] | None = None) -> None:
    """Make a store's own tables (and columns added since, table → name → declaration) once per database file and
    process: the stores outside this file's SCHEMA call it when they are built."""
    key = (str(db.path), schema)
    if key in _SCHEMAS_MADE:
        return
    with db.connect() as conn:
        conn.executescript(schema)
        _add_columns(conn, columns or {})
    _SCHEMAS_MADE.add(key)


def _add_columns(conn: sqlite3.Connection, columns: dict[str, dict[str, str]]) -> None:
    for table, added in columns.items():
        have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        for name, decl in added.items():
            if name not in have:
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")


class Database:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self.connect() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(SCHEMA)
            _add_columns(conn, _ADDED_COLUMNS)
        # Held open, idle, for the object's life: the last connection to close checkpoints the WAL and deletes
        # it, so with none held every short-lived connection below paid a checkpoint and recreated the WAL.
        self._keeper = sqlite3.connect(self.path, check_same_thread=False)
        self._keeper.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # opens (and holds) the WAL

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        # Each thread keeps one idle connection for its next call: opening one (and its two pragmas) cost ~1.5 ms
        # here, paid thousands of times per batch of short documents. A nested call opens its own, as before, so a
        # read inside a transaction still sees only what is committed.
        local = self._local
        conn = getattr(local, "idle", None)
        local.idle = None
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA busy_timeout=30000")
            # In WAL mode NORMAL loses no commit to a killed process (only to a power cut, and never corrupts), and
            # spares each transaction an fsync: ~4 ms per commit here, the largest fixed cost of a short document.
            conn.execute("PRAGMA synchronous=NORMAL")
        try:
            yield conn
        finally:
            try:
                if conn.in_transaction:  # left open by an exception: never hand it to the next caller
                    conn.execute("ROLLBACK")
                keep = getattr(local, "idle", None) is None
            except sqlite3.Error:
                keep = False
            if keep:
                local.idle = conn
            else:
                conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self.connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
