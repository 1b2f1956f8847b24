"""The community refresh's state in SQLite (core.store.sqlite_communities): the change log filled by the trigger on
cleared dirty marks, reports written by community, and a graph store's partial community assignment."""
from __future__ import annotations

import numpy as np
import pytest

from core.schema.graph import RELATED, GraphEdge, GraphNode
from core.store.base import VectorRow
from core.store.sqlite_communities import SQLiteCommunityState
from core.store.sqlite_db import Database
from core.store.sqlite_graph import SQLiteGraphStore
from core.store.sqlite_graph_sources import SQLiteGraphSources


@pytest.fixture
def db(tmp_path) -> Database:
    database = Database(tmp_path / "papergraph.sqlite")
    SQLiteGraphSources(database)  # its tables (graph_dirty, graph_meta, reports) exist before the state's
    return database


def test_the_log_lists_what_a_rebuild_cleared_not_what_is_still_dirty(db):
    sources, state = SQLiteGraphSources(db), SQLiteCommunityState(db)
    sources.mark_dirty(nodes=["a", "b"], edges=[("a", "b")])
    assert state.changes() == (0, [], [])
    sources.clear_dirty(["a"], [("a", "b")])
    upto, nodes, edges = state.changes()
    assert nodes == ["a"] and edges == [("a", "b")] and upto > 0
    sources.clear_dirty(["b"], [])  # merged after the refresh read the log: kept for the next one
    state.write([], (), "7", {"next_id": 0}, upto)
    assert state.changes()[1:] == (["b"], [])
    assert sources.meta("communities_version") == "7" and state.state() == {"next_id": 0}


def test_the_same_entity_changed_twice_is_listed_once_with_its_last_change(db):
    sources, state = SQLiteGraphSources(db), SQLiteCommunityState(db)
    for _ in range(2):
        sources.mark_dirty(nodes=["a"])
        sources.clear_dirty(["a"], [])
    upto, nodes, _ = state.changes()
    assert nodes == ["a"]
    sources.mark_dirty(nodes=["a"])
    sources.clear_dirty(["a"], [])
    state.write([], (), "1", {}, upto)
    assert state.changes()[1] == ["a"]  # changed again after the read: not forgotten


def test_reports_are_written_and_dropped_by_community(db):
    sources, state = SQLiteGraphSources(db), SQLiteCommunityState(db)
    state.write([{"community": c, "entities": [f"e{c}"]} for c in range(4)], (), "1", {}, 0, replace_all=True)
    state.write([{"community": 1, "entities": ["x", "y"]}, {"community": 9, "entities": ["z"]}], {2}, "2", {}, 0)
    assert [r["community"] for r in sources.community_reports()] == [0, 1, 3, 9]
    assert state.reports([1, 2, 5]) == {1: {"community": 1, "entities": ["x", "y"]}}
    state.write([{"community": 4, "entities": []}], (), "3", {}, 0, replace_all=True)
    assert [r["community"] for r in sources.community_reports()] == [4]


def test_a_partial_assignment_keeps_the_other_nodes_communities(db):
    graph = SQLiteGraphStore(db)
    graph.apply([GraphNode(key=k, name=k, type="concept", description="") for k in "abc"],
                [GraphEdge(source="a", target="b", relation=RELATED, keywords="", description="", weight=1.0)])
    graph.set_communities({"a": 0, "b": 0, "c": 1})
    graph.set_communities({"a": 2}, keep_others=True)
    assert {k: n.community for k, n in graph.get_nodes("abc").items()} == {"a": 2, "b": 0, "c": 1}
    graph.set_communities({"a": 3})
    assert {k: n.community for k, n in graph.get_nodes("abc").items()} == {"a": 3, "b": None, "c": None}


SPACE = "test-model|fp32"


def _rows(community: int, n: int = 2) -> list[VectorRow]:
    return [VectorRow(community, i, f"sha{community}.{i}", np.full(4, community + i / 10, dtype=np.float32))
            for i in range(n)]


def test_report_vectors_are_written_with_their_reports_and_go_with_them(db):
    sources, state = SQLiteGraphSources(db), SQLiteCommunityState(db)
    state.write([{"community": c, "entities": []} for c in range(4)], (), "1", {}, 0, replace_all=True,
                vectors=[r for c in range(4) for r in _rows(c)], space=SPACE)
    stored = state.vectors(SPACE, range(10))
    assert sorted(stored) == [0, 1, 2, 3] and stored[2][1][0] == "sha2.1"
    np.testing.assert_array_equal(stored[2][1][1], np.full(4, 2.1, dtype=np.float32))
    assert state.vectors("another-model|fp32", range(10)) == {}, "vectors of another space are not returned"
    assert set(state.vectors_by_sha(SPACE, ["sha1.0", "sha9.0"])) == {"sha1.0"}

    # Community 1 rewritten with one text fewer, 2 dropped: no vector of either is left over.
    state.write([{"community": 1, "entities": []}], {2}, "2", {}, 0, vectors=_rows(1, 1), space=SPACE)
    stored = state.vectors(SPACE, range(10))
    assert sorted(stored) == [0, 1, 3] and sorted(stored[1]) == [0]
    state.write([{"community": 5, "entities": []}], (), "3", {}, 0, replace_all=True, vectors=_rows(5), space=SPACE)
    assert sorted(state.vectors(SPACE, range(10))) == [5]

    sources.put_community_reports([{"community": 6, "entities": []}], version="4")  # another path deleting them
    assert state.vectors(SPACE, range(10)) == {}
    state.put_vectors(_rows(6) + _rows(7), SPACE)  # 7 has no report: it gets no vectors
    assert sorted(state.vectors(SPACE, range(10))) == [6]
    sources.clear()
    assert state.vectors(SPACE, range(10)) == {}
