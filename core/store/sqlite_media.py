"""Descriptions kept per item and per source (offline, vlm) in the workspace's SQLite file.

A description is valid for the item it was made from: rows carry the item's fingerprint, and one whose item
changed (a re-parse) is ignored. The VLM's replies are also in the prompt-hash LLM cache; this table is what
the chunks, the graph and the gallery read. The table is created here, as the LLM cache's are, so the core
schema stays ignorant of media."""
from __future__ import annotations

import json
import time
from collections.abc import Iterable

from core.schema.media import Description, MediaEntity
from core.store.sqlite_db import Database, ensure_schema

SCHEMA = """
CREATE TABLE IF NOT EXISTS media_descriptions (
    doc_id TEXT NOT NULL,
    item_index INTEGER NOT NULL,
    source TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL,
    entities TEXT NOT NULL DEFAULT '[]',
    message TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    PRIMARY KEY (doc_id, item_index, source)
);
"""


def _row(row) -> Description:
    try:
        entities = [MediaEntity(**e) for e in json.loads(row["entities"]) if isinstance(e, dict)]
    except (TypeError, ValueError):
        entities = []
    return Description(doc_id=row["doc_id"], item_index=row["item_index"], fingerprint=row["fingerprint"],
                       source=row["source"], text=row["text"], model=row["model"], entities=entities,
                       message=row["message"], created_at=row["created_at"])


def _rows(descriptions: Iterable[Description]) -> list[tuple]:
    return [(d.doc_id, d.item_index, d.source, d.fingerprint, d.model, d.text,
             json.dumps([e.__dict__ for e in d.entities], ensure_ascii=False), d.message,
             d.created_at or time.time()) for d in descriptions]


class SQLiteDescriptionStore:
    def __init__(self, db: Database):
        self.db = db
        ensure_schema(db, SCHEMA)

    def put(self, descriptions: Iterable[Description]) -> None:
        rows = _rows(descriptions)
        if not rows:
            return
        with self.db.transaction() as conn:
            conn.executemany("INSERT OR REPLACE INTO media_descriptions (doc_id, item_index, source, fingerprint, "
                             "model, text, entities, message, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def replace_source(self, doc_id: str, source: str, descriptions: Iterable[Description]) -> None:
        """The paper's descriptions from one source, replaced as a whole (items of an older parse go)."""
        rows = _rows(descriptions)
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM media_descriptions WHERE doc_id = ? AND source = ?", (doc_id, source))
            conn.executemany("INSERT OR REPLACE INTO media_descriptions (doc_id, item_index, source, fingerprint, "
                             "model, text, entities, message, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def by_doc(self, doc_id: str) -> dict[int, dict[str, Description]]:
        """item index → source → description (whatever its fingerprint: callers compare)."""
        with self.db.connect() as conn:
            rows = conn.execute("SELECT * FROM media_descriptions WHERE doc_id = ?", (doc_id,)).fetchall()
        out: dict[int, dict[str, Description]] = {}
        for row in rows:
            out.setdefault(row["item_index"], {})[row["source"]] = _row(row)
        return out

    def get(self, doc_id: str, item_index: int, source: str) -> Description | None:
        with self.db.connect() as conn:
            row = conn.execute("SELECT * FROM media_descriptions WHERE doc_id = ? AND item_index = ? AND source = ?",
                               (doc_id, item_index, source)).fetchone()
        return _row(row) if row else None

    def delete_doc(self, doc_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM media_descriptions WHERE doc_id = ?", (doc_id,))

    def doc_counts(self) -> dict[str, int]:
        """doc id → description rows (every source), for every document that has any."""
        with self.db.connect() as conn:
            return {r[0]: r[1] for r in conn.execute(
                "SELECT doc_id, COUNT(*) FROM media_descriptions GROUP BY doc_id")}

    def counts(self) -> dict[str, int]:
        with self.db.connect() as conn:
            return {r[0]: r[1] for r in conn.execute(
                "SELECT source, COUNT(*) FROM media_descriptions WHERE text != '' GROUP BY source")}
