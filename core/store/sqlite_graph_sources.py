"""Provenance of the entity graph in SQLite: raw per-chunk extractions, per-chunk contributions to each entity
and relation, aliases from merges, paper records, bibliography entries, and the set of "dirty" nodes and edges.

The merged graph is a pure function of these rows (core.graph.merge), which is what makes insert → delete →
insert give the same graph, and crash recovery simple: a change of contributions and the marking of what it
touched commit in one transaction; rebuilding dirty nodes, edges and vectors is idempotent and repeated
until the dirty set is empty.
"""
from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence

from core.schema.graph import (
    ChunkExtraction,
    EntitySource,
    ExtractedEntity,
    ExtractedRelation,
    PaperRecord,
    Reference,
    RelationSource,
    paper_key,
)
from core.schema.overrides import Override
from core.store.sqlite_db import Database
from core.store.sqlite_phrases import PHRASE_SCHEMA, PHRASE_TABLE, read_chunk_phrases, write_phrases

SCHEMA = """
CREATE TABLE IF NOT EXISTS graph_extractions (
    chunk_id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL,
    ord INTEGER NOT NULL,
    extractor TEXT NOT NULL,
    text_sha TEXT NOT NULL,
    payload TEXT NOT NULL,
    dropped INTEGER NOT NULL DEFAULT 0,
    errors TEXT NOT NULL DEFAULT '[]',
    llm_calls INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS graph_extractions_by_doc ON graph_extractions(doc_id);
CREATE TABLE IF NOT EXISTS graph_entity_sources (
    key TEXT NOT NULL, doc_id TEXT NOT NULL, chunk_id TEXT NOT NULL, ord INTEGER NOT NULL,
    name TEXT NOT NULL, type TEXT NOT NULL, description TEXT NOT NULL, extractor TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS graph_entity_sources_by_key ON graph_entity_sources(key);
CREATE INDEX IF NOT EXISTS graph_entity_sources_by_doc ON graph_entity_sources(doc_id);
CREATE TABLE IF NOT EXISTS graph_relation_sources (
    source TEXT NOT NULL, target TEXT NOT NULL, doc_id TEXT NOT NULL, chunk_id TEXT NOT NULL, ord INTEGER NOT NULL,
    keywords TEXT NOT NULL, description TEXT NOT NULL, strength REAL NOT NULL, extractor TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS graph_relation_sources_by_pair ON graph_relation_sources(source, target);
CREATE INDEX IF NOT EXISTS graph_relation_sources_by_doc ON graph_relation_sources(doc_id);
CREATE TABLE IF NOT EXISTS graph_dirty (
    kind TEXT NOT NULL,  -- node | edge
    a TEXT NOT NULL,
    b TEXT NOT NULL DEFAULT '',
    seq INTEGER NOT NULL DEFAULT 0,  -- the graph version that marked it last
    PRIMARY KEY (kind, a, b)
);
CREATE TABLE IF NOT EXISTS graph_aliases (alias TEXT PRIMARY KEY, canonical TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS graph_papers (
    doc_id TEXT PRIMARY KEY, title TEXT NOT NULL, year INTEGER, extractor TEXT NOT NULL,
    entity_count INTEGER NOT NULL, relation_count INTEGER NOT NULL, dropped INTEGER NOT NULL,
    failed_chunks INTEGER NOT NULL, llm_calls INTEGER NOT NULL, timings TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS graph_references (
    doc_id TEXT NOT NULL, idx INTEGER NOT NULL, text TEXT NOT NULL, year INTEGER, PRIMARY KEY (doc_id, idx)
);
CREATE TABLE IF NOT EXISTS graph_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS graph_community_reports (community INTEGER PRIMARY KEY, payload TEXT NOT NULL);
-- User edits (core.schema.overrides): applied by every rebuild, so they survive new papers and full rebuilds.
CREATE TABLE IF NOT EXISTS graph_overrides (
    kind TEXT NOT NULL, a TEXT NOT NULL, b TEXT NOT NULL DEFAULT '', field TEXT NOT NULL, value TEXT NOT NULL,
    created_at REAL NOT NULL, PRIMARY KEY (kind, a, b, field)
);
"""
_BATCH = 500
# The tables whose rows belong to one document, and the name each kind of row is reported under.
_DOC_TABLES = {"graph_extractions": "extractions", "graph_entity_sources": "entity_sources",
               "graph_relation_sources": "relation_sources", "graph_papers": "papers",
               "graph_references": "references", PHRASE_TABLE: "phrases"}


def _marks(n: int) -> str:
    return ",".join("?" * n)


def _batches(items: list) -> Iterable[list]:
    for start in range(0, len(items), _BATCH):
        yield items[start:start + _BATCH]


def _payload(extraction: ChunkExtraction) -> str:
    return json.dumps({"entities": [vars(e) for e in extraction.entities],
                       "relations": [vars(r) for r in extraction.relations], "phrases": extraction.phrases})


class SQLiteGraphSources:
    def __init__(self, db: Database):
        self.db = db
        with db.connect() as conn:
            conn.executescript(SCHEMA + PHRASE_SCHEMA)
            if "seq" not in {r[1] for r in conn.execute("PRAGMA table_info(graph_dirty)")}:  # older workspaces
                conn.execute("ALTER TABLE graph_dirty ADD COLUMN seq INTEGER NOT NULL DEFAULT 0")

    # --- raw extractions: the resumable part of the graph stage ---
    def extracted(self, doc_id: str, extractor: str) -> dict[str, str]:
        """chunk id → text hash of the chunks this extractor already did for the document."""
        with self.db.connect() as conn:
            rows = conn.execute("SELECT chunk_id, text_sha FROM graph_extractions WHERE doc_id = ? AND extractor = ?",
                                (doc_id, extractor))
            return {r[0]: r[1] for r in rows}

    def put_extraction(self, doc_id: str, ord_: int, sha: str, extraction: ChunkExtraction) -> None:
        with self.db.connect() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO graph_extractions (chunk_id, doc_id, ord, extractor, text_sha, payload, "
                "dropped, errors, llm_calls, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (extraction.chunk_id, doc_id, ord_, extraction.extractor, sha, _payload(extraction),
                 extraction.dropped, json.dumps(extraction.errors[:20]), extraction.llm_calls, time.time()))

    def extractions(self, doc_id: str) -> list[tuple[int, ChunkExtraction]]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT * FROM graph_extractions WHERE doc_id = ? ORDER BY ord", (doc_id,)).fetchall()
        out = []
        for r in rows:
            data = json.loads(r["payload"])
            out.append((r["ord"], ChunkExtraction(
                chunk_id=r["chunk_id"], extractor=r["extractor"], dropped=r["dropped"],
                errors=json.loads(r["errors"]), llm_calls=r["llm_calls"],
                entities=[ExtractedEntity(**e) for e in data["entities"]],
                relations=[ExtractedRelation(**x) for x in data["relations"]], phrases=data.get("phrases", []))))
        return out

    def forget_extractions(self, doc_id: str, keep_chunk_ids: Iterable[str] = ()) -> None:
        keep = set(keep_chunk_ids)
        with self.db.connect() as conn:
            ids = [r[0] for r in conn.execute("SELECT chunk_id FROM graph_extractions WHERE doc_id = ?", (doc_id,))
                   if r[0] not in keep]
            for batch in _batches(ids):
                conn.execute(f"DELETE FROM graph_extractions WHERE chunk_id IN ({_marks(len(batch))})", batch)

    def clear(self, keep_extractions: bool = True) -> None:
        """Forget every contribution, alias, paper record and report (the graph is rebuilt from extractions)."""
        tables = ["graph_entity_sources", "graph_relation_sources", "graph_dirty", "graph_aliases", "graph_papers",
                  "graph_references", "graph_meta", "graph_community_reports", PHRASE_TABLE]
        with self.db.transaction() as conn:
            for table in tables + ([] if keep_extractions else ["graph_extractions"]):
                conn.execute(f"DELETE FROM {table}")

    # --- what each document left, for deletes and the garbage collector (core.pipeline.gc) ---
    def doc_ids(self) -> set[str]:
        """Every document with an extraction, a contribution, a paper record or a bibliography entry."""
        with self.db.connect() as conn:
            return {r[0] for table in _DOC_TABLES for r in conn.execute(f"SELECT DISTINCT doc_id FROM {table}")}

    def doc_row_counts(self, doc_ids: Iterable[str]) -> dict[str, int]:
        """Rows of these documents per kind: extractions, entity_sources, relation_sources, papers, references."""
        ids = list(dict.fromkeys(doc_ids))
        out = dict.fromkeys(_DOC_TABLES.values(), 0)
        with self.db.connect() as conn:
            for table, kind in _DOC_TABLES.items():
                for batch in _batches(ids):
                    out[kind] += conn.execute(f"SELECT COUNT(*) FROM {table} WHERE doc_id IN ({_marks(len(batch))})",
                                              batch).fetchone()[0]
        return out

    # --- contributions ---
    def replace_doc(self, doc_id: str, entities: Sequence[EntitySource], relations: Sequence[RelationSource],
                    paper: PaperRecord | None, references: Sequence[Reference] = (),
                    phrases: Sequence[tuple[str, str]] = ()) -> None:
        """Swap a document's contributions (None/empty: remove them) and mark everything touched, atomically."""
        with self.db.transaction() as conn:
            write_phrases(conn, doc_id, phrases)
            old_keys = {r[0] for r in conn.execute("SELECT DISTINCT key FROM graph_entity_sources WHERE doc_id = ?",
                                                   (doc_id,))}
            old_pairs = {(r[0], r[1]) for r in conn.execute(
                "SELECT DISTINCT source, target FROM graph_relation_sources WHERE doc_id = ?", (doc_id,))}
            conn.execute("DELETE FROM graph_entity_sources WHERE doc_id = ?", (doc_id,))
            conn.execute("DELETE FROM graph_relation_sources WHERE doc_id = ?", (doc_id,))
            conn.execute("DELETE FROM graph_references WHERE doc_id = ?", (doc_id,))
            conn.executemany("INSERT INTO graph_entity_sources VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                             [(e.key, e.doc_id, e.chunk_id, e.ord, e.name, e.type, e.description, e.extractor)
                              for e in entities])
            conn.executemany("INSERT INTO graph_relation_sources VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             [(r.source, r.target, r.doc_id, r.chunk_id, r.ord, r.keywords, r.description,
                               r.strength, r.extractor) for r in relations])
            conn.executemany("INSERT INTO graph_references VALUES (?, ?, ?, ?)",
                             [(r.doc_id, r.index, r.text, r.year) for r in references])
            if paper is None:
                conn.execute("DELETE FROM graph_papers WHERE doc_id = ?", (doc_id,))
            else:
                conn.execute("INSERT OR REPLACE INTO graph_papers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             (doc_id, paper.title, paper.year, paper.extractor, paper.entity_count,
                              paper.relation_count, paper.dropped, paper.failed_chunks, paper.llm_calls,
                              json.dumps(paper.timings)))
            keys = old_keys | {e.key for e in entities}
            pk = paper_key(doc_id)
            self._mark(conn, nodes=keys | {pk},
                       edges=old_pairs | {(r.source, r.target) for r in relations} | {(k, pk) for k in keys})

    def _mark(self, conn, nodes: Iterable[str] = (), edges: Iterable[tuple[str, str]] = ()) -> None:
        # Each mark carries the version it made: a rebuild clears only marks made before it read the sources, so a
        # change that lands while it merges (another process, an edit) is rebuilt again, never lost.
        seq = int(conn.execute("INSERT INTO graph_meta VALUES ('version', '1') ON CONFLICT(key) DO UPDATE SET "
                               "value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) RETURNING value").fetchall()[0][0])
        upsert = " ON CONFLICT(kind, a, b) DO UPDATE SET seq = excluded.seq"
        conn.executemany("INSERT INTO graph_dirty (kind, a, b, seq) VALUES ('node', ?, '', ?)" + upsert,
                         [(k, seq) for k in nodes])
        conn.executemany("INSERT INTO graph_dirty (kind, a, b, seq) VALUES ('edge', ?, ?, ?)" + upsert,
                         [(a, b, seq) for a, b in edges])

    def mark_dirty(self, nodes: Iterable[str] = (), edges: Iterable[tuple[str, str]] = ()) -> None:
        with self.db.transaction() as conn:
            self._mark(conn, nodes=nodes, edges=edges)

    def dirty(self) -> tuple[list[str], list[tuple[str, str]]]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT kind, a, b FROM graph_dirty ORDER BY kind, a, b").fetchall()
        return [r[1] for r in rows if r[0] == "node"], [(r[1], r[2]) for r in rows if r[0] == "edge"]

    def clear_dirty(self, nodes: Sequence[str], edges: Sequence[tuple[str, str]], upto: int | None = None) -> None:
        seq = "" if upto is None else f" AND seq <= {int(upto)}"
        with self.db.transaction() as conn:
            conn.executemany("DELETE FROM graph_dirty WHERE kind = 'node' AND a = ?" + seq, [(k,) for k in nodes])
            conn.executemany("DELETE FROM graph_dirty WHERE kind = 'edge' AND a = ? AND b = ?" + seq, list(edges))

    def entity_sources(self, keys: Iterable[str]) -> dict[str, list[EntitySource]]:
        out: dict[str, list[EntitySource]] = defaultdict(list)
        with self.db.connect() as conn:
            for batch in _batches(list(dict.fromkeys(keys))):
                for r in conn.execute(f"SELECT * FROM graph_entity_sources WHERE key IN ({_marks(len(batch))}) "
                                      "ORDER BY doc_id, ord, rowid", batch):
                    out[r["key"]].append(EntitySource(**dict(r)))
        return out

    def relation_sources(self, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], list[RelationSource]]:
        out: dict[tuple[str, str], list[RelationSource]] = defaultdict(list)
        with self.db.connect() as conn:
            for source, target in dict.fromkeys(pairs):
                for r in conn.execute("SELECT * FROM graph_relation_sources WHERE source = ? AND target = ? "
                                      "ORDER BY doc_id, ord, rowid", (source, target)):
                    out[(source, target)].append(RelationSource(**dict(r)))
        return out

    def chunk_phrases(self) -> dict[str, list[str]]:
        return read_chunk_phrases(self.db)

    # --- merges of duplicate entities ---
    def aliases(self) -> dict[str, str]:
        with self.db.connect() as conn:
            return {r[0]: r[1] for r in conn.execute("SELECT alias, canonical FROM graph_aliases")}

    def merge_keys(self, keys: Sequence[str], canonical: str) -> None:
        """Re-key every contribution of `keys` to `canonical` and remember the aliases, so papers added later
        merge the same way. Relations between merged entities become self-loops and are dropped."""
        others = [k for k in dict.fromkeys(keys) if k != canonical]
        if not others:
            return
        with self.db.transaction() as conn:
            marks = _marks(len(others))
            docs = {r[0] for r in conn.execute(
                f"SELECT DISTINCT doc_id FROM graph_entity_sources WHERE key IN ({marks}) OR key = ?",
                (*others, canonical))}
            pairs = [(r[0], r[1]) for r in conn.execute(
                f"SELECT DISTINCT source, target FROM graph_relation_sources WHERE source IN ({marks}) "
                f"OR target IN ({marks})", (*others, *others))]
            conn.execute(f"UPDATE graph_entity_sources SET key = ? WHERE key IN ({marks})", (canonical, *others))
            conn.executemany("INSERT OR REPLACE INTO graph_aliases VALUES (?, ?)", [(k, canonical) for k in others])
            conn.execute(f"UPDATE graph_aliases SET canonical = ? WHERE canonical IN ({marks})", (canonical, *others))
            new_pairs = set()
            for source, target in pairs:
                a = canonical if source in others else source
                b = canonical if target in others else target
                if a == b:
                    conn.execute("DELETE FROM graph_relation_sources WHERE source = ? AND target = ?", (source, target))
                    continue
                lo, hi = sorted((a, b))
                conn.execute("UPDATE graph_relation_sources SET source = ?, target = ? WHERE source = ? AND "
                             "target = ?", (lo, hi, source, target))
                new_pairs.add((lo, hi))
            self._mark(conn, nodes=[*others, canonical], edges=set(pairs) | new_pairs |
                       {(canonical, paper_key(d)) for d in docs})

    # --- papers and references ---
    def papers(self, doc_ids: Iterable[str] | None = None) -> dict[str, PaperRecord]:
        with self.db.connect() as conn:
            if doc_ids is None:
                rows = conn.execute("SELECT * FROM graph_papers").fetchall()
            else:
                rows = [r for part in _batches(list(dict.fromkeys(doc_ids)))
                        for r in conn.execute(f"SELECT * FROM graph_papers WHERE doc_id IN ({_marks(len(part))})",
                                              part)]
        return {r["doc_id"]: PaperRecord(
            doc_id=r["doc_id"], title=r["title"], year=r["year"], extractor=r["extractor"],
            entity_count=r["entity_count"], relation_count=r["relation_count"], dropped=r["dropped"],
            failed_chunks=r["failed_chunks"], llm_calls=r["llm_calls"], timings=json.loads(r["timings"]))
            for r in rows}

    def mentions(self, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], list[str]]:
        """(entity key, doc id) → the chunk ids of that document where the entity occurs."""
        out: dict[tuple[str, str], list[str]] = {}
        with self.db.connect() as conn:
            for key, doc_id in dict.fromkeys(pairs):
                ids = [r[0] for r in conn.execute(
                    "SELECT DISTINCT chunk_id FROM graph_entity_sources WHERE key = ? AND doc_id = ? ORDER BY ord",
                    (key, doc_id))]
                if ids:
                    out[(key, doc_id)] = ids
        return out

    def references(self, doc_id: str) -> list[Reference]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT * FROM graph_references WHERE doc_id = ? ORDER BY idx", (doc_id,))
            return [Reference(doc_id=r["doc_id"], index=r["idx"], text=r["text"], year=r["year"]) for r in rows]

    # --- community reports, replaced as a whole with each refresh ---
    def put_community_reports(self, reports: Sequence[dict], version: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM graph_community_reports")
            conn.executemany("INSERT INTO graph_community_reports VALUES (?, ?)",
                             [(r["community"], json.dumps(r)) for r in reports])
            conn.execute("INSERT OR REPLACE INTO graph_meta VALUES ('communities_version', ?)", (version,))

    def has_community_reports(self) -> bool:
        with self.db.connect() as conn:
            return conn.execute("SELECT 1 FROM graph_community_reports LIMIT 1").fetchone() is not None

    def community_reports(self) -> list[dict]:
        with self.db.connect() as conn:
            return [json.loads(r[0]) for r in conn.execute(
                "SELECT payload FROM graph_community_reports ORDER BY community")]

    # --- versions: communities are recomputed when the graph changed since they were ---
    def meta(self, key: str, default: str = "") -> str:
        with self.db.connect() as conn:
            row = conn.execute("SELECT value FROM graph_meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    # --- user edits: recorded once, applied by every rebuild of what they name ---
    def put_override(self, override: Override, nodes: Iterable[str] = (),
                     edges: Iterable[tuple[str, str]] = (), alias: tuple[str, str] | None = None) -> None:
        """Record an edit and mark what it changes dirty (and an alias a rename brings), in one transaction."""
        with self.db.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO graph_overrides VALUES (?, ?, ?, ?, ?, ?)",
                         (override.kind, override.a, override.b, override.field, override.value, time.time()))
            if alias:
                conn.execute("INSERT OR IGNORE INTO graph_aliases VALUES (?, ?)", alias)
            self._mark(conn, nodes=nodes, edges=edges)

    def remove_override(self, kind: str, a: str, b: str, field: str, nodes: Iterable[str] = (),
                        edges: Iterable[tuple[str, str]] = ()) -> bool:
        with self.db.transaction() as conn:
            gone = conn.execute("DELETE FROM graph_overrides WHERE kind = ? AND a = ? AND b = ? AND field = ?",
                                (kind, a, b, field)).rowcount
            if gone:
                self._mark(conn, nodes=nodes, edges=edges)
        return bool(gone)

    def overrides(self) -> list[Override]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT * FROM graph_overrides ORDER BY created_at, kind, a, b, field").fetchall()
        return [Override(kind=r["kind"], a=r["a"], b=r["b"], field=r["field"], value=r["value"],
                         created_at=r["created_at"]) for r in rows]

    def has_sources(self, key: str) -> bool:
        with self.db.connect() as conn:
            row = conn.execute("SELECT 1 FROM graph_entity_sources WHERE key = ? LIMIT 1", (key,)).fetchone()
        return row is not None

    def relation_pairs_of(self, key: str) -> list[tuple[str, str]]:
        """Every relation pair with a contribution touching `key` (whether or not its edge is in the graph)."""
        with self.db.connect() as conn:
            rows = conn.execute("SELECT DISTINCT source, target FROM graph_relation_sources WHERE source = ? "
                                "UNION SELECT DISTINCT source, target FROM graph_relation_sources WHERE target = ?",
                                (key, key))
            return [(r[0], r[1]) for r in rows]

    def docs_of(self, key: str) -> list[str]:
        with self.db.connect() as conn:
            return [r[0] for r in conn.execute("SELECT DISTINCT doc_id FROM graph_entity_sources WHERE key = ?",
                                               (key,))]
