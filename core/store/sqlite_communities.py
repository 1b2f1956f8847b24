"""What the community refresh keeps between runs, in SQLite (whatever the graph store): the entities and relations
changed since the last refresh, the reports updated in place, and the refresh's own state.

The change log is filled by a trigger: each dirty mark rebuild_dirty clears (core.store.sqlite_graph_sources,
`graph_dirty`) is a node or edge it merged, so the log lists exactly what changed in the merged graph, in the same
transaction as the clear. A refresh then recomputes the communities those touch (core.pipeline.graph
.communities_index) without reading the whole graph. The trigger is created with the first refresh; changes made
before it exist are covered by that refresh being a full one (there is no state yet).

The reports live in `graph_community_reports` (created by sqlite_graph_sources, which reads them whole for the
query side); this module writes them by community, and `communities_version` with them. Beside them, the vectors
of each report's texts (core.graph.communities.vectors): a row per (community, text), with the hash of the
text and the vector space it was embedded in, so a reader can tell a stale vector. A trigger drops a community's
vectors with its report, whichever path deletes it (a refresh, `put_community_reports`, a graph clear).
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

import numpy as np

from core.store.base import VectorRow
from core.store.sqlite_db import Database

SCHEMA = """
CREATE TABLE IF NOT EXISTS graph_community_changes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,  -- node | edge, as in graph_dirty
    a TEXT NOT NULL,
    b TEXT NOT NULL DEFAULT '',
    UNIQUE (kind, a, b) ON CONFLICT REPLACE
);
CREATE TRIGGER IF NOT EXISTS graph_dirty_merged AFTER DELETE ON graph_dirty BEGIN
    INSERT INTO graph_community_changes (kind, a, b) VALUES (OLD.kind, OLD.a, OLD.b);
END;
CREATE TABLE IF NOT EXISTS graph_community_vectors (
    community INTEGER NOT NULL,
    ord INTEGER NOT NULL,  -- the text's place in communities_vectors.embedded_texts: 0 the report, then findings
    sha TEXT NOT NULL,  -- of the text embedded
    space TEXT NOT NULL,  -- the vector space (core.models.embedding.vector_space) it was embedded in
    vector BLOB NOT NULL,  -- float32
    PRIMARY KEY (community, ord)
);
CREATE INDEX IF NOT EXISTS graph_community_vectors_sha ON graph_community_vectors (sha);
CREATE TRIGGER IF NOT EXISTS graph_community_report_deleted AFTER DELETE ON graph_community_reports BEGIN
    DELETE FROM graph_community_vectors WHERE community = OLD.community;
END;
"""
STATE_KEY = "communities_state"
_BATCH = 500


class SQLiteCommunityState:
    def __init__(self, db: Database):
        self.db = db
        with db.connect() as conn:
            conn.executescript(SCHEMA)

    def changes(self) -> tuple[int, list[str], list[tuple[str, str]]]:
        """(last change id, changed node keys, changed edge pairs) since the last refresh cleared them."""
        with self.db.connect() as conn:
            rows = conn.execute("SELECT id, kind, a, b FROM graph_community_changes ORDER BY id").fetchall()
        upto = rows[-1]["id"] if rows else 0
        return (upto, [r["a"] for r in rows if r["kind"] == "node"],
                [(r["a"], r["b"]) for r in rows if r["kind"] == "edge"])

    def state(self) -> dict | None:
        with self.db.connect() as conn:
            row = conn.execute("SELECT value FROM graph_meta WHERE key = ?", (STATE_KEY,)).fetchone()
        return json.loads(row[0]) if row else None

    def put_state(self, state: dict | None) -> None:
        with self.db.connect() as conn:
            if state is None:
                conn.execute("DELETE FROM graph_meta WHERE key = ?", (STATE_KEY,))
            else:
                conn.execute("INSERT OR REPLACE INTO graph_meta VALUES (?, ?)", (STATE_KEY, json.dumps(state)))

    def reports(self, communities: Iterable[int]) -> dict[int, dict]:
        """The stored reports of these communities (a community of one entity has none)."""
        ids = sorted(set(communities))
        out: dict[int, dict] = {}
        with self.db.connect() as conn:
            for start in range(0, len(ids), _BATCH):
                batch = ids[start:start + _BATCH]
                marks = ",".join("?" * len(batch))
                for row in conn.execute(f"SELECT community, payload FROM graph_community_reports "
                                        f"WHERE community IN ({marks})", batch):
                    out[row[0]] = json.loads(row[1])
        return out

    def write(self, reports: Sequence[dict], drop: Iterable[int], version: str, state: dict, upto: int,
              replace_all: bool = False, vectors: Sequence[VectorRow] = (), space: str = "") -> None:
        """In one transaction: the reports of the communities recomputed (`replace_all`: every report) with their
        `vectors` (of `space`), those of communities that no longer exist dropped with theirs, the version they
        describe, the state, and the changes up to `upto` forgotten."""
        with self.db.transaction() as conn:
            if replace_all:
                conn.execute("DELETE FROM graph_community_reports")
            conn.executemany("DELETE FROM graph_community_reports WHERE community = ?", [(c,) for c in drop])
            # INSERT OR REPLACE does not fire the delete trigger: a rewritten report's old vectors go here.
            conn.executemany("DELETE FROM graph_community_vectors WHERE community = ?",
                             [(r["community"],) for r in reports])
            conn.executemany("INSERT OR REPLACE INTO graph_community_reports VALUES (?, ?)",
                             [(r["community"], json.dumps(r)) for r in reports])
            self._insert_vectors(conn, vectors, space)
            conn.execute("INSERT OR REPLACE INTO graph_meta VALUES ('communities_version', ?)", (version,))
            conn.execute("INSERT OR REPLACE INTO graph_meta VALUES (?, ?)", (STATE_KEY, json.dumps(state)))
            conn.execute("DELETE FROM graph_community_changes WHERE id <= ?", (upto,))

    def vectors(self, space: str, communities: Iterable[int]) -> dict[int, dict[int, tuple[str, np.ndarray]]]:
        """community → text ord → (text hash, vector) of these communities' stored vectors in `space`."""
        ids = sorted(set(communities))
        out: dict[int, dict[int, tuple[str, np.ndarray]]] = {}
        with self.db.connect() as conn:
            for start in range(0, len(ids), _BATCH):
                batch = ids[start:start + _BATCH]
                for community, ord_, sha, blob in conn.execute(
                        f"SELECT community, ord, sha, vector FROM graph_community_vectors WHERE space = ? AND "
                        f"community IN ({','.join('?' * len(batch))})", [space, *batch]):
                    out.setdefault(community, {})[ord_] = (sha, np.frombuffer(blob, dtype=np.float32))
        return out

    def vectors_by_sha(self, space: str, shas: Iterable[str]) -> dict[str, np.ndarray]:
        """Text hash → a stored vector of that text in `space` (whatever community it belongs to)."""
        keys = sorted(set(shas))
        out: dict[str, np.ndarray] = {}
        with self.db.connect() as conn:
            for start in range(0, len(keys), _BATCH):
                batch = keys[start:start + _BATCH]
                for sha, blob in conn.execute(f"SELECT sha, vector FROM graph_community_vectors WHERE space = ? AND "
                                              f"sha IN ({','.join('?' * len(batch))})", [space, *batch]):
                    out[sha] = np.frombuffer(blob, dtype=np.float32)
        return out

    def put_vectors(self, vectors: Sequence[VectorRow], space: str) -> None:
        """Store vectors of existing reports (a report deleted meanwhile gets none: it would never be dropped)."""
        with self.db.transaction() as conn:
            self._insert_vectors(conn, vectors, space, only_reported=True)

    @staticmethod
    def _insert_vectors(conn, vectors: Sequence[VectorRow], space: str, only_reported: bool = False) -> None:
        rows = [(v.community, v.ord, v.sha, space, np.asarray(v.vector, dtype=np.float32).tobytes()) for v in vectors]
        if only_reported:
            conn.executemany("INSERT OR REPLACE INTO graph_community_vectors SELECT ?, ?, ?, ?, ? WHERE EXISTS "
                             "(SELECT 1 FROM graph_community_reports WHERE community = ?)",
                             [(*row, row[0]) for row in rows])
        else:
            conn.executemany("INSERT OR REPLACE INTO graph_community_vectors VALUES (?, ?, ?, ?, ?)", rows)
