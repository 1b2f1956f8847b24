"""One contract, every GraphStore: each test runs against SQLite and, when a server answers, Neo4j.

Rules the stores share (core/store/base.py states the rest):
- an edge is keyed by (source, target) exactly as given; keeping RELATED undirected (source < target) is the
  caller's business, so the reversed pair is another edge;
- apply() is atomic, and an edge whose endpoint is missing once the batch's deletions and node upserts are
  applied raises ValueError and leaves the store as it was;
- set_communities() replaces the whole assignment: nodes it does not name lose their community.

Neo4j runs only when one is reachable at NEO4J_URI (default bolt://127.0.0.1:7687, login NEO4J_USER /
NEO4J_PASSWORD) and holds no Entity or Paper node yet: these tests clear the graph, so they never run against
one that has data.
"""
from __future__ import annotations

import os
import socket
from urllib.parse import urlparse

import pytest

from core.schema.graph import MENTIONED_IN, PAPER_PREFIX, RELATED, GraphEdge, GraphNode

NEO4J_URI = os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687")
_neo4j_checked: dict[str, str | None] = {}  # the skip reason, decided once per session


def _sqlite_store(tmp_path):
    from core.store.sqlite_db import Database
    from core.store.sqlite_graph import SQLiteGraphStore

    return SQLiteGraphStore(Database(tmp_path / "graph.db"))


def _neo4j_reason() -> str | None:
    url = urlparse(NEO4J_URI)
    try:
        socket.create_connection((url.hostname or "127.0.0.1", url.port or 7687), timeout=0.5).close()
    except OSError:
        return f"no Neo4j server reachable at {NEO4J_URI} (set NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD to run it)"
    return None


def _neo4j_store(tmp_path):
    if "reason" not in _neo4j_checked:
        _neo4j_checked["reason"] = _neo4j_reason()
    if _neo4j_checked["reason"]:
        pytest.skip(_neo4j_checked["reason"])
    from core.store.base import StoreUnavailable
    from core.store.neo4j_graph import Neo4jGraphStore

    try:
        store = Neo4jGraphStore(NEO4J_URI, os.environ.get("NEO4J_USER", "neo4j"),
                                os.environ.get("NEO4J_PASSWORD"), database=os.environ.get("NEO4J_DATABASE"))
    except StoreUnavailable as exc:  # e.g. a server that refuses the login
        _neo4j_checked["reason"] = str(exc)
        pytest.skip(str(exc))
    if "empty" not in _neo4j_checked:
        _neo4j_checked["empty"] = store.counts() == (0, 0)
    if not _neo4j_checked["empty"]:
        store.close()
        _neo4j_checked["reason"] = f"the Neo4j graph at {NEO4J_URI} is not empty: these tests would clear it"
        pytest.skip(_neo4j_checked["reason"])
    return store


@pytest.fixture(params=[pytest.param(_sqlite_store, id="sqlite"),
                        pytest.param(_neo4j_store, id="neo4j", marks=pytest.mark.neo4j)])
def store(request, tmp_path):
    store = request.param(tmp_path)
    yield store
    if request.param is _neo4j_store:
        store.clear()
        store.close()


def _entity(key: str, **fields) -> GraphNode:
    values = dict(name=key.upper(), type="method", description=f"about {key}", source_chunks=[f"c-{key}"],
                  doc_ids=["d1"], extractors=["spacy"], community=None, year=None)
    return GraphNode(key=key, **{**values, **fields})


def _paper(doc_id: str, year: int | None = 2019) -> GraphNode:
    return GraphNode(key=PAPER_PREFIX + doc_id, name=f"Paper {doc_id}", type="paper", description="", year=year)


def _related(source: str, target: str, **fields) -> GraphEdge:
    values = dict(relation=RELATED, keywords="uses", description=f"{source} uses {target}", weight=1.0,
                  source_chunks=["c1"], doc_ids=["d1"], year=None)
    return GraphEdge(source=source, target=target, **{**values, **fields})


def _snapshot(store) -> tuple[list[GraphNode], list[GraphEdge]]:
    return list(store.all_nodes()), list(store.all_edges())


@pytest.fixture
def abc(store):
    """Entities a, b, c and the edges a-b, b-c."""
    store.apply(upsert_nodes=[_entity("a"), _entity("b"), _entity("c")],
                upsert_edges=[_related("a", "b"), _related("b", "c")])
    return store


def test_nodes_round_trip_every_field(store):
    bert = _entity("bert", name="BERT", type="model", description="a bidirectional encoder",
                   source_chunks=["d1:0", "d1:3"], doc_ids=["d1", "d2"], extractors=["spacy", "llm:qwen"],
                   community=7)
    paper, undated = _paper("d1", year=2019), _paper("d2", year=None)
    store.apply(upsert_nodes=[bert, paper, undated])
    assert store.get_node("bert") == bert
    assert store.get_node(paper.key) == paper and store.get_node(paper.key).is_paper
    assert store.get_node(undated.key).year is None and store.get_node(undated.key).source_chunks == []
    assert store.get_node("missing") is None
    assert store.get_nodes(["bert", paper.key, "missing"]) == {"bert": bert, paper.key: paper}
    assert store.get_nodes([]) == {}
    assert list(store.all_nodes()) == [bert, paper, undated], "all nodes, ordered by key"


def test_edges_round_trip_every_field(store):
    store.apply(upsert_nodes=[_entity("bert"), _entity("multinli"), _paper("d1")])
    related = _related("bert", "multinli", keywords="evaluated on, benchmark", description="BERT is tested on it",
                       weight=2.5, source_chunks=["d1:0", "d1:4"], doc_ids=["d1", "d2"], year=None)
    mention = GraphEdge(source="bert", target=PAPER_PREFIX + "d1", relation=MENTIONED_IN, weight=3.0,
                        source_chunks=["d1:0"], doc_ids=["d1"], year=2019)
    store.apply(upsert_edges=[related, mention])
    assert store.get_edge("bert", "multinli") == related
    assert store.get_edge("bert", PAPER_PREFIX + "d1") == mention
    assert store.get_edges([("bert", "multinli"), ("bert", "nowhere"), (PAPER_PREFIX + "d1", "bert")]) == {
        ("bert", "multinli"): related}
    assert store.get_edges([]) == {}
    assert list(store.all_edges()) == [related, mention], "all edges, ordered by (source, target)"
    assert [tuple(row) for row in store.edge_outline()] == [(e.source, e.target, e.relation, e.weight)
                                                            for e in (related, mention)]


def test_edges_are_keyed_by_the_pair_as_given(abc):
    assert abc.get_edge("b", "a") is None, "the store does not make RELATED undirected: the caller orders pairs"
    abc.apply(upsert_edges=[_related("b", "a", keywords="reversed")])
    assert abc.get_edge("a", "b").keywords == "uses" and abc.get_edge("b", "a").keywords == "reversed"
    assert abc.counts() == (3, 3)


def test_edges_of_returns_every_edge_touching_the_keys_once(abc):
    assert sorted(e.pair for e in abc.edges_of(["a", "b", "missing"])) == [("a", "b"), ("b", "c")]
    assert [e.pair for e in abc.edges_of(["c"])] == [("b", "c")] and abc.edges_of([]) == []


def test_node_edges_returns_edges_in_both_directions(abc):
    assert {e.pair for e in abc.node_edges("b")} == {("a", "b"), ("b", "c")}
    assert [e.pair for e in abc.node_edges("a")] == [("a", "b")]
    assert abc.node_edges("c")[0] == _related("b", "c")
    assert abc.node_edges("missing") == []


def test_degrees_count_edges_in_both_directions(abc):
    abc.apply(upsert_nodes=[_paper("d1")], upsert_edges=[GraphEdge("a", PAPER_PREFIX + "d1", MENTIONED_IN)])
    assert abc.degrees(["a", "b", "c", PAPER_PREFIX + "d1", "missing"]) == {
        "a": 2, "b": 2, "c": 1, PAPER_PREFIX + "d1": 1, "missing": 0}
    assert abc.degrees([]) == {}


def test_upserts_overwrite_every_field(abc):
    renamed = _entity("a", name="A2", type="dataset", description="new", source_chunks=["x"], doc_ids=[],
                      extractors=["llm:qwen"], community=None, year=2020)
    abc.set_communities({"a": 4})
    abc.apply(upsert_nodes=[renamed], upsert_edges=[_related("a", "b", keywords="", description="now", weight=0.5,
                                                             source_chunks=[], doc_ids=["d9"], year=2021)])
    assert abc.get_node("a") == renamed, "community and lists are replaced, not merged"
    assert abc.get_edge("a", "b") == _related("a", "b", keywords="", description="now", weight=0.5,
                                              source_chunks=[], doc_ids=["d9"], year=2021)
    abc.apply(upsert_nodes=[_paper("d1")])
    abc.apply(upsert_edges=[GraphEdge("a", "b", MENTIONED_IN)])
    assert abc.get_edge("a", "b").relation == MENTIONED_IN, "a pair holds one edge, whatever its relation"
    assert abc.counts() == (4, 2)
    abc.apply(upsert_nodes=[_entity("z", name="first"), _entity("z", name="last")])
    assert abc.get_node("z").name == "last", "the last upsert of a key in one batch wins"


def test_an_edge_to_a_missing_node_rejects_the_whole_batch(abc):
    before = _snapshot(abc)
    with pytest.raises(ValueError, match="missing"):
        abc.apply(upsert_nodes=[_entity("d"), _entity("a", name="changed")],
                  upsert_edges=[_related("a", "d"), _related("a", "ghost")],
                  delete_nodes=["c"], delete_edges=[("a", "b")])
    assert _snapshot(abc) == before, "nothing of the failed batch is visible"


def test_an_edge_to_a_node_deleted_in_the_same_batch_is_rejected(abc):
    before = _snapshot(abc)
    with pytest.raises(ValueError):
        abc.apply(upsert_edges=[_related("a", "c")], delete_nodes=["c"])
    assert _snapshot(abc) == before


def test_an_edge_may_point_to_nodes_upserted_in_the_same_batch(store):
    store.apply(upsert_nodes=[_entity("x"), _entity("y"), _paper("d1")],
                upsert_edges=[_related("x", "y"), GraphEdge("x", PAPER_PREFIX + "d1", MENTIONED_IN)])
    assert store.counts() == (3, 2)


def test_deleting_a_node_deletes_its_edges(abc):
    abc.apply(delete_nodes=["b"])
    assert abc.get_node("b") is None
    assert abc.counts() == (2, 0)
    assert abc.node_edges("a") == [] and abc.degrees(["a", "c"]) == {"a": 0, "c": 0}


def test_deleting_edges_keeps_their_nodes_and_unknown_deletions_are_no_ops(abc):
    abc.apply(delete_edges=[("a", "b"), ("c", "b"), ("ghost", "a")], delete_nodes=["ghost"])
    assert abc.get_edge("a", "b") is None and abc.get_edge("b", "c") is not None
    assert abc.counts() == (3, 1)


def test_a_node_deleted_and_upserted_in_one_batch_comes_back_without_its_edges(abc):
    abc.apply(delete_nodes=["b"], upsert_nodes=[_entity("b", name="again")])
    assert abc.get_node("b").name == "again" and abc.counts() == (3, 0)


def test_set_communities_replaces_the_assignment(abc):
    abc.set_communities({"a": 1, "b": 2, "c": None})
    assert {n.key: n.community for n in abc.all_nodes()} == {"a": 1, "b": 2, "c": None}
    abc.set_communities({"a": 3, "ghost": 5})
    assert {n.key: n.community for n in abc.all_nodes()} == {"a": 3, "b": None, "c": None}
    assert abc.get_node("ghost") is None, "an unknown key creates no node"
    assert abc.get_node("a") == _entity("a", community=3), "only the community changes"


def test_counts_and_clear(abc):
    abc.apply(upsert_nodes=[_paper("d1")], upsert_edges=[GraphEdge("c", PAPER_PREFIX + "d1", MENTIONED_IN)])
    assert abc.counts() == (4, 3) and abc.has_nodes()
    abc.clear()
    assert abc.counts() == (0, 0) and not abc.has_nodes()
    assert _snapshot(abc) == ([], [])
    abc.apply(upsert_nodes=[_entity("a")])
    assert abc.counts() == (1, 0) and abc.has_nodes(), "the store is usable after clear()"


def test_an_empty_batch_changes_nothing(abc):
    before = _snapshot(abc)
    abc.apply()
    assert _snapshot(abc) == before



# --- Neo4j specifics that need no server ----------------------------------------------------------------------

def test_neo4j_labels_follow_the_key_and_relation_types_cannot_inject_cypher():
    from core.store.neo4j_graph import Neo4jGraphStore, label_of

    assert (label_of(PAPER_PREFIX + "d1"), label_of("bert")) == ("Paper", "Entity")
    store = object.__new__(Neo4jGraphStore)  # apply() checks relation types before it opens a session
    with pytest.raises(ValueError, match="relation"):
        store.apply(upsert_edges=[GraphEdge("a", "b", relation="RELATED]->() DETACH DELETE (a")])


@pytest.mark.slow
def test_an_unreachable_neo4j_is_a_clear_error(monkeypatch):
    from core.settings.config import GraphConfig
    from core.store.base import StoreUnavailable
    from core.store.neo4j_graph import neo4j_store_from_config

    monkeypatch.setenv("NEO4J_PASSWORD", "secret")
    with pytest.raises(StoreUnavailable, match="no Neo4j server answers at bolt://127.0.0.1:1"):
        neo4j_store_from_config(GraphConfig(backend="neo4j", neo4j_uri="bolt://127.0.0.1:1"))
