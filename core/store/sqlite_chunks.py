"""Chunk records by id, in SQLite: the text retrieval returns and the provenance every citation needs."""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from core.schema.records import Chunk
from core.store.sqlite_db import Database


def _row_to_chunk(row) -> Chunk:
    return Chunk(id=row["id"], doc_id=row["doc_id"], index=row["idx"], kind=row["kind"], text=row["text"],
                 pages=json.loads(row["pages"]), item_indices=json.loads(row["item_indices"]),
                 section=row["section"], tokens=row["tokens"])


class SQLiteChunkStore:
    def __init__(self, db: Database):
        self.db = db

    def put_doc_chunks(self, doc_id: str, chunks: Sequence[Chunk]) -> None:
        self.put_chunks_of_docs({doc_id: chunks})

    def put_chunks_of_docs(self, chunks_by_doc: Mapping[str, Sequence[Chunk]]) -> None:
        """Each document's chunks replace its old ones; all the documents in one transaction (the ingest commits
        short documents in batches: a transaction each was most of their write cost)."""
        with self.db.transaction() as conn:
            for doc_id, chunks in chunks_by_doc.items():
                conn.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
                conn.executemany(
                    "INSERT INTO chunks (id, doc_id, idx, kind, text, pages, item_indices, section, tokens)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(c.id, c.doc_id, c.index, c.kind, c.text, json.dumps(c.pages), json.dumps(c.item_indices),
                      c.section, c.tokens) for c in chunks])

    def get_many(self, ids: Sequence[str]) -> dict[str, Chunk]:
        if not ids:
            return {}
        out: dict[str, Chunk] = {}
        with self.db.connect() as conn:
            for start in range(0, len(ids), 500):  # stay under SQLite's bound-parameter limit
                part = list(ids[start:start + 500])
                marks = ",".join("?" * len(part))
                for row in conn.execute(f"SELECT * FROM chunks WHERE id IN ({marks})", part):
                    out[row["id"]] = _row_to_chunk(row)
        return out

    def by_doc(self, doc_id: str) -> list[Chunk]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT * FROM chunks WHERE doc_id = ? ORDER BY idx", (doc_id,)).fetchall()
        return [_row_to_chunk(r) for r in rows]

    def sections(self) -> list[str]:
        with self.db.connect() as conn:
            return [r[0] for r in conn.execute("SELECT DISTINCT section FROM chunks WHERE section != ''"
                                               " ORDER BY section")]

    def delete_doc(self, doc_id: str) -> None:
        with self.db.connect() as conn:
            conn.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))

    def doc_counts(self) -> dict[str, int]:
        """doc id → chunks stored for it, for every document that has any."""
        with self.db.connect() as conn:
            return {r[0]: r[1] for r in conn.execute("SELECT doc_id, COUNT(*) FROM chunks GROUP BY doc_id")}
