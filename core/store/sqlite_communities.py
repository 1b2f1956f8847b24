"""What the community refresh keeps between runs, in SQLite (whatever the graph store): the entities and relations
changed since the last refresh, the reports updated in place, and the refresh's own state.

The change log is filled by a trigger: each dirty mark rebuild_dirty clears (core.store.sqlite_graph_sources,
`graph_dirty`) is a node or edge it merged, so the log lists exactly what changed in the merged graph, in the same
transaction as the clear. A refresh then recomputes the communities those touch (core.pipeline.graph
.communities_index) without reading the whole graph. The trigger is created with the first refresh; changes made
before it exist are covered by that refresh being a full one (there is no state yet).

The reports live in `graph_community_reports` (created by sqlite_graph_sources, which reads them whole for the
query side); this module writes them by community, and `communities_version` with them.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

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
              replace_all: bool = False) -> None:
        """In one transaction: the reports of the communities recomputed (`replace_all`: every report), those of
        communities that no longer exist dropped, the version they describe, the state, and the changes up to
        `upto` forgotten."""
        with self.db.transaction() as conn:
            if replace_all:
                conn.execute("DELETE FROM graph_community_reports")
            conn.executemany("DELETE FROM graph_community_reports WHERE community = ?", [(c,) for c in drop])
            conn.executemany("INSERT OR REPLACE INTO graph_community_reports VALUES (?, ?)",
                             [(r["community"], json.dumps(r)) for r in reports])
            conn.execute("INSERT OR REPLACE INTO graph_meta VALUES ('communities_version', ?)", (version,))
            conn.execute("INSERT OR REPLACE INTO graph_meta VALUES (?, ?)", (STATE_KEY, json.dumps(state)))
            conn.execute("DELETE FROM graph_community_changes WHERE id <= ?", (upto,))
