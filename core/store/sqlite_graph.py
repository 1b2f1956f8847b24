"""The merged entity graph in SQLite: the default GraphStore.

Every change is one transaction over the rows it touches, so adding a paper to a large graph costs what the
paper touches, not a rewrite of the graph (GraphML of 50k nodes takes ~20 s to write: it is an export only).
networkx is built from these rows on demand for algorithms (core.graph.view).
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence

from core.schema.graph import GraphEdge, GraphNode
from core.store.sqlite_db import Database

SCHEMA = """
CREATE TABLE IF NOT EXISTS graph_nodes (
    key TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    description TEXT NOT NULL,
    source_chunks TEXT NOT NULL,
    doc_ids TEXT NOT NULL,
    extractors TEXT NOT NULL,
    community INTEGER,
    year INTEGER
);
CREATE TABLE IF NOT EXISTS graph_edges (
    source TEXT NOT NULL,
    target TEXT NOT NULL,
    relation TEXT NOT NULL,
    keywords TEXT NOT NULL,
    description TEXT NOT NULL,
    weight REAL NOT NULL,
    source_chunks TEXT NOT NULL,
    doc_ids TEXT NOT NULL,
    year INTEGER,
    PRIMARY KEY (source, target)
);
CREATE INDEX IF NOT EXISTS graph_edges_by_target ON graph_edges(target);
CREATE TABLE IF NOT EXISTS graph_store_version (id INTEGER PRIMARY KEY CHECK (id = 0), n INTEGER NOT NULL);
INSERT OR IGNORE INTO graph_store_version VALUES (0, 0);
"""
# Bumped in every write transaction: version() is what a per-graph cache checks at each question, and
# COUNT(*) over 50k nodes and 100k edges cost tens of ms per check (more on a busy machine).
_BUMP = "UPDATE graph_store_version SET n = n + 1 WHERE id = 0"
_BATCH = 500  # SQLite's bound-parameter limit is far above this; batches keep statements small


def _batches(items: list, size: int = _BATCH) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _node(row) -> GraphNode:
    return GraphNode(key=row["key"], name=row["name"], type=row["type"], description=row["description"],
                     source_chunks=json.loads(row["source_chunks"]), doc_ids=json.loads(row["doc_ids"]),
                     extractors=json.loads(row["extractors"]), community=row["community"], year=row["year"])


def _edge(row) -> GraphEdge:
    return GraphEdge(source=row["source"], target=row["target"], relation=row["relation"], keywords=row["keywords"],
                     description=row["description"], weight=row["weight"],
                     source_chunks=json.loads(row["source_chunks"]), doc_ids=json.loads(row["doc_ids"]),
                     year=row["year"])


class SQLiteGraphStore:
    def __init__(self, db: Database):
        self.db = db
        with db.connect() as conn:
            conn.executescript(SCHEMA)

    def get_node(self, key: str) -> GraphNode | None:
        return self.get_nodes([key]).get(key)

    def get_nodes(self, keys: Iterable[str]) -> dict[str, GraphNode]:
        out: dict[str, GraphNode] = {}
        with self.db.connect() as conn:
            for batch in _batches(list(dict.fromkeys(keys))):
                marks = ",".join("?" * len(batch))
                for row in conn.execute(f"SELECT * FROM graph_nodes WHERE key IN ({marks})", batch):
                    out[row["key"]] = _node(row)
        return out

    def get_edge(self, source: str, target: str) -> GraphEdge | None:
        return self.get_edges([(source, target)]).get((source, target))

    def get_edges(self, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], GraphEdge]:
        out: dict[tuple[str, str], GraphEdge] = {}
        with self.db.connect() as conn:
            for source, target in dict.fromkeys(pairs):
                row = conn.execute("SELECT * FROM graph_edges WHERE source = ? AND target = ?",
                                   (source, target)).fetchone()
                if row:
                    out[(source, target)] = _edge(row)
        return out

    def node_edges(self, key: str) -> list[GraphEdge]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT * FROM graph_edges WHERE source = ? UNION ALL "
                                "SELECT * FROM graph_edges WHERE target = ? AND source != ?", (key, key, key))
            return [_edge(r) for r in rows]

    def edges_of(self, keys: Iterable[str]) -> list[GraphEdge]:
        keys = list(dict.fromkeys(keys))
        found: dict[tuple[str, str], GraphEdge] = {}
        with self.db.connect() as conn:  # one connection for all: a query's 40 entities cost one round, not 40
            for batch in _batches(keys):
                marks = ",".join("?" * len(batch))
                for row in conn.execute(f"SELECT * FROM graph_edges WHERE source IN ({marks}) UNION ALL "
                                        f"SELECT * FROM graph_edges WHERE target IN ({marks})", batch + batch):
                    edge = _edge(row)
                    found.setdefault(edge.pair, edge)
        return list(found.values())

    def degrees(self, keys: Iterable[str]) -> dict[str, int]:
        keys = list(dict.fromkeys(keys))
        out = dict.fromkeys(keys, 0)
        with self.db.connect() as conn:
            for batch in _batches(keys):
                marks = ",".join("?" * len(batch))
                for column in ("source", "target"):
                    for row in conn.execute(f"SELECT {column} AS k, COUNT(*) AS n FROM graph_edges "
                                            f"WHERE {column} IN ({marks}) GROUP BY {column}", batch):
                        out[row["k"]] += row["n"]
        return out

    def apply(self, upsert_nodes: Sequence[GraphNode] = (), upsert_edges: Sequence[GraphEdge] = (),
              delete_nodes: Sequence[str] = (), delete_edges: Sequence[tuple[str, str]] = ()) -> None:
        with self.db.transaction() as conn:
            conn.execute(_BUMP)
            for pair in delete_edges:
                conn.execute("DELETE FROM graph_edges WHERE source = ? AND target = ?", pair)
            for batch in _batches(list(delete_nodes)):
                marks = ",".join("?" * len(batch))
                conn.execute(f"DELETE FROM graph_edges WHERE source IN ({marks}) OR target IN ({marks})",
                             batch + batch)
                conn.execute(f"DELETE FROM graph_nodes WHERE key IN ({marks})", batch)
            conn.executemany(
                "INSERT INTO graph_nodes (key, name, type, description, source_chunks, doc_ids, extractors, "
                "community, year) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET "
                "name=excluded.name, type=excluded.type, description=excluded.description, "
                "source_chunks=excluded.source_chunks, doc_ids=excluded.doc_ids, extractors=excluded.extractors, "
                "community=excluded.community, year=excluded.year",
                [(n.key, n.name, n.type, n.description, json.dumps(n.source_chunks), json.dumps(n.doc_ids),
                  json.dumps(n.extractors), n.community, n.year) for n in upsert_nodes])
            if upsert_edges:
                endpoints = list({k for e in upsert_edges for k in (e.source, e.target)})
                found = set()
                for batch in _batches(endpoints):
                    marks = ",".join("?" * len(batch))
                    found.update(r[0] for r in conn.execute(f"SELECT key FROM graph_nodes WHERE key IN ({marks})",
                                                            batch))
                missing = sorted(set(endpoints) - found)
                if missing:  # raising inside the transaction rolls the whole batch back
                    raise ValueError(f"edges point to {len(missing)} missing node(s), e.g. {missing[:3]}")
            conn.executemany(
                "INSERT OR REPLACE INTO graph_edges (source, target, relation, keywords, description, weight, "
                "source_chunks, doc_ids, year) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(e.source, e.target, e.relation, e.keywords, e.description, e.weight, json.dumps(e.source_chunks),
                  json.dumps(e.doc_ids), e.year) for e in upsert_edges])

    def set_communities(self, assignment: dict[str, int | None], keep_others: bool = False) -> None:
        with self.db.transaction() as conn:
            conn.execute(_BUMP)
            if not keep_others:
                conn.execute("UPDATE graph_nodes SET community = NULL")
            conn.executemany("UPDATE graph_nodes SET community = ? WHERE key = ?",
                             [(c, k) for k, c in assignment.items()])

    def counts(self) -> tuple[int, int]:
        with self.db.connect() as conn:
            nodes = conn.execute("SELECT COUNT(*) FROM graph_nodes").fetchone()[0]
            edges = conn.execute("SELECT COUNT(*) FROM graph_edges").fetchone()[0]
        return nodes, edges

    def has_nodes(self) -> bool:
        with self.db.connect() as conn:
            return conn.execute("SELECT 1 FROM graph_nodes LIMIT 1").fetchone() is not None

    def version(self) -> str:
        with self.db.connect() as conn:
            return str(conn.execute("SELECT n FROM graph_store_version WHERE id = 0").fetchone()[0])

    def all_nodes(self) -> Iterator[GraphNode]:
        with self.db.connect() as conn:
            for row in conn.execute("SELECT * FROM graph_nodes ORDER BY key"):
                yield _node(row)

    def all_edges(self) -> Iterator[GraphEdge]:
        with self.db.connect() as conn:
            for row in conn.execute("SELECT * FROM graph_edges ORDER BY source, target"):
                yield _edge(row)

    def edge_outline(self) -> Iterator[tuple[str, str, str, float]]:
        with self.db.connect() as conn:
            yield from conn.execute("SELECT source, target, relation, weight FROM graph_edges ORDER BY source, target")

    def clear(self) -> None:
        with self.db.transaction() as conn:
            conn.execute(_BUMP)
            conn.execute("DELETE FROM graph_edges")
            conn.execute("DELETE FROM graph_nodes")
