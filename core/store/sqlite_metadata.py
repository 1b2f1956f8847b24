"""Each paper's bibliographic metadata in the workspace's SQLite file: one row per (paper, field, layer).

Two layers per field: what an extractor wrote (`kept` = 0), replaced as a whole at every parse or refresh, and what
a person or an import gave (`kept` = 1: source manual, bibtex, csl or zotero), which an extractor never touches; an
online service's value (source crossref or openalex) sits in that layer too, written only where no person or import
did. A read takes the kept value when there is one, so a correction survives a re-parse, and clearing it brings the
extracted value back at once. The table is created here, as the media descriptions' is, the first time a
workspace is opened with it (older workspaces gain it then; `python -m core meta refresh` fills it for papers
ingested before)."""
from __future__ import annotations

import json
import time
from collections.abc import Iterable

from core.schema.metadata import ENRICHED_SOURCES, FIELDS, KEPT_SOURCES, PaperMetadata
from core.store.sqlite_db import Database, ensure_schema

SCHEMA = """
CREATE TABLE IF NOT EXISTS paper_metadata (
    doc_id TEXT NOT NULL,
    field TEXT NOT NULL,
    kept INTEGER NOT NULL DEFAULT 0,
    value TEXT NOT NULL,
    source TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (doc_id, field, kept)
);
"""


def _empty(value: object) -> bool:
    return value is None or value == "" or value == []


def _assemble(rows) -> dict[str, PaperMetadata]:
    out: dict[str, PaperMetadata] = {}
    for row in sorted(rows, key=lambda r: r["kept"]):  # kept rows last: they win
        if row["field"] not in FIELDS:
            continue
        meta = out.setdefault(row["doc_id"], PaperMetadata(doc_id=row["doc_id"]))
        try:
            value = json.loads(row["value"])
        except ValueError:
            continue
        if row["field"] == "authors":
            value = [str(a) for a in value] if isinstance(value, list) else []
        elif row["field"] == "year":
            value = value if isinstance(value, int) and not isinstance(value, bool) else None
        else:
            value = str(value) if value is not None else ""
        setattr(meta, row["field"], value)
        meta.sources[row["field"]] = row["source"]
    return out


class SQLiteMetadataStore:
    def __init__(self, db: Database):
        self.db = db
        ensure_schema(db, SCHEMA)

    def get(self, doc_id: str) -> PaperMetadata | None:
        return self.get_many([doc_id]).get(doc_id)

    def get_many(self, doc_ids: Iterable[str] | None = None) -> dict[str, PaperMetadata]:
        with self.db.connect() as conn:
            if doc_ids is None:
                rows = conn.execute("SELECT * FROM paper_metadata").fetchall()
            else:
                ids = list(dict.fromkeys(doc_ids))
                rows = []
                for start in range(0, len(ids), 500):  # under SQLite's bound-parameter limit
                    part = ids[start:start + 500]
                    rows += conn.execute(f"SELECT * FROM paper_metadata WHERE doc_id IN ({','.join('?' * len(part))})",
                                         part).fetchall()
        return _assemble(rows)

    def put_extracted(self, meta: PaperMetadata) -> PaperMetadata:
        now = time.time()
        rows = [(meta.doc_id, name, json.dumps(meta.get(name), ensure_ascii=False), meta.sources.get(name, ""), now)
                for name in FIELDS if not _empty(meta.get(name))]
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM paper_metadata WHERE doc_id = ? AND kept = 0", (meta.doc_id,))
            conn.executemany("INSERT INTO paper_metadata (doc_id, field, kept, value, source, updated_at) "
                             "VALUES (?, ?, 0, ?, ?, ?)", rows)
        return self.get(meta.doc_id) or PaperMetadata(doc_id=meta.doc_id)

    def set_field(self, doc_id: str, name: str, value: object, source: str) -> PaperMetadata:
        if name not in FIELDS:
            raise ValueError(f"unknown metadata field {name!r}; one of {', '.join(FIELDS)}")
        if source not in KEPT_SOURCES:
            raise ValueError(f"a kept field's source is one of {', '.join(KEPT_SOURCES)}, not {source!r}")
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM paper_metadata WHERE doc_id = ? AND field = ? AND kept = 1", (doc_id, name))
            if not _empty(value):
                conn.execute("INSERT INTO paper_metadata (doc_id, field, kept, value, source, updated_at) "
                             "VALUES (?, ?, 1, ?, ?, ?)",
                             (doc_id, name, json.dumps(value, ensure_ascii=False), source, time.time()))
        return self.get(doc_id) or PaperMetadata(doc_id=doc_id)

    def put_enriched(self, doc_id: str, values: dict[str, tuple[object, str]]) -> list[str]:
        """Fields filled online ({field: (value, crossref|openalex)}) in the kept layer, so a re-parse keeps them;
        a field whose kept value is manual or imported is left alone, in the same transaction that checks it.
        Returns the fields written."""
        written = []
        with self.db.transaction() as conn:
            kept = {r[0]: r[1] for r in conn.execute(
                "SELECT field, source FROM paper_metadata WHERE doc_id = ? AND kept = 1", (doc_id,))}
            for name, (value, source) in values.items():
                if name not in FIELDS or source not in ENRICHED_SOURCES or _empty(value):
                    raise ValueError(f"not an enriched field: {name!r} from {source!r}")
                if kept.get(name) in KEPT_SOURCES:
                    continue
                conn.execute("INSERT OR REPLACE INTO paper_metadata (doc_id, field, kept, value, source, updated_at) "
                             "VALUES (?, ?, 1, ?, ?, ?)",
                             (doc_id, name, json.dumps(value, ensure_ascii=False), source, time.time()))
                written.append(name)
        return written

    def delete_doc(self, doc_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM paper_metadata WHERE doc_id = ?", (doc_id,))

    def doc_counts(self) -> dict[str, int]:
        with self.db.connect() as conn:
            return {r[0]: r[1] for r in conn.execute("SELECT doc_id, COUNT(*) FROM paper_metadata GROUP BY doc_id")}
