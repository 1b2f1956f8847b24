"""Communities kept up to date in part (core.graph.communities.index + communities_local): a change
recomputes the communities it touches and reads only them, stays close to a full recompute, and falls back to a
full one when an entity is deleted or the drift bound is reached.

The graph is written to a real workspace's SQLite stores the way rebuild_dirty writes it (mark dirty, apply,
clear the marks), so the change log's trigger sees what a rebuild would make it see."""
from __future__ import annotations

import json
import random

import networkx as nx
import pytest

from core.graph.communities.detect import detect_communities, generate_graph
from core.graph.communities.index import refresh_communities
from core.graph.communities.local import FULL_AFTER, MIN_FULL_AFTER, assign_ids, refine_region, strengths
from core.graph.view import entity_graph
from core.library import Library, open_library
from core.schema.graph import RELATED, GraphEdge, GraphNode
from core.settings.workspace import Workspace
from core.store.sqlite_graph import SQLiteGraphStore


class CountingGraphStore(SQLiteGraphStore):
    """The real SQLite graph store, counting the nodes and edges each read returns."""

    def __init__(self, db):
        super().__init__(db)
        self.reads = {"nodes": 0, "edges": 0, "whole": 0}

    def get_nodes(self, keys):
        out = super().get_nodes(keys)
        self.reads["nodes"] += len(out)
        return out

    def edges_of(self, keys):
        out = super().edges_of(keys)
        self.reads["edges"] += len(out)
        return out

    def all_nodes(self):
        self.reads["whole"] += 1
        return super().all_nodes()

    def all_edges(self):
        self.reads["whole"] += 1
        return super().all_edges()


@pytest.fixture
def lib(tmp_path) -> Library:
    library = open_library(Workspace(tmp_path / "ws"))
    library.__dict__["graph"] = CountingGraphStore(library.db)  # Library.graph is a cached property
    return library


def write(lib: Library, nodes: dict[str, str] | None = None, edges: list[tuple[str, str, float]] = (),
          delete: list[str] = ()) -> None:
    """What rebuild_dirty does with a paper's changes: mark, apply (keeping each node's community), clear."""
    nodes = nodes or {}
    edges = [tuple(sorted((u, v))) + (w,) for u, v, w in edges]
    pairs = [(u, v) for u, v, _ in edges]
    keys = list(nodes) + list(delete)
    lib.graph_sources.mark_dirty(nodes=keys, edges=pairs)
    existing = lib.graph.get_nodes(nodes)
    lib.graph.apply([GraphNode(key=k, name=name, type="concept", description=f"{name} is a test entity.",
                               community=existing[k].community if k in existing else None)
                     for k, name in nodes.items()],
                    [GraphEdge(source=u, target=v, relation=RELATED, keywords="related", description=f"{u}-{v}",
                               weight=w) for u, v, w in edges], delete_nodes=list(delete))
    lib.graph_sources.clear_dirty(keys, pairs)


def write_graph(lib: Library, graph: nx.Graph) -> None:
    write(lib, {k: graph.nodes[k]["name"] for k in graph},
          [(u, v, d["weight"]) for u, v, d in graph.edges(data=True)])


def members(lib: Library) -> dict[int, frozenset[str]]:
    out: dict[int, set[str]] = {}
    for node in lib.graph.all_nodes():
        out.setdefault(node.community, set()).add(node.key)
    return {c: frozenset(m) for c, m in out.items()}


def reports(lib: Library) -> dict[int, dict]:
    return {r["community"]: r for r in lib.graph_sources.community_reports()}


def modularity(graph: nx.Graph, assignment: dict[str, int]) -> float:
    groups: dict[int, set[str]] = {}
    for k, c in assignment.items():
        groups.setdefault(c, set()).add(k)
    return nx.community.modularity(graph, list(groups.values()), weight="weight")


def new_paper(graph_keys: list[str], n: int, rng: random.Random, size: int = 4) -> tuple[dict, list]:
    """A paper's new entities (linked to each other and to a few existing entities) and a new relation between
    two existing entities."""
    new = {f"p{n}x{i}": f"Paper {n} entity {i}" for i in range(size)}
    anchors = rng.sample(graph_keys, 2)
    edges = [(a, b, 2.0) for a, b in zip(list(new), list(new)[1:])]
    edges += [(list(new)[0], anchors[0], 3.0), (list(new)[-1], anchors[1], 1.0), (anchors[0], anchors[1], 1.0)]
    return new, edges


def test_leiden_over_the_whole_graph_as_a_region_is_the_full_leiden():
    graph = generate_graph(400, 1600, seed=3, community_size=40, inside=0.8)
    strength = strengths(graph)
    groups = refine_region(graph, strength, sum(strength.values()) / 2, {})
    full = detect_communities(graph)
    assert {frozenset(m) for m in groups} == set(members_of(full).values())


def members_of(assignment: dict[str, int]) -> dict[int, frozenset[str]]:
    out: dict[int, set[str]] = {}
    for k, c in assignment.items():
        out.setdefault(c, set()).add(k)
    return {c: frozenset(m) for c, m in out.items()}


def test_freed_ids_go_to_the_groups_most_of_whose_members_had_them():
    old = {"a": 3, "b": 3, "c": 3, "d": 5, "e": None}
    ids, next_id = assign_ids([["a", "b", "d"], ["c", "e"], ["x"]], old, {3, 5}, 9)
    assert ids == {"a": 3, "b": 3, "d": 3, "c": 9, "e": 9, "x": 10} and next_id == 11


def test_a_paper_recomputes_only_the_communities_it_touches_and_reads_nothing_else(lib):
    graph = generate_graph(600, 2400, seed=1, community_size=30, inside=0.9)
    write_graph(lib, graph)
    assert refresh_communities(lib)["full"] == 1.0
    before_members, before_reports = members(lib), reports(lib)
    lib.graph.reads.update(nodes=0, edges=0, whole=0)

    new, edges = new_paper(sorted(graph), 1, random.Random(7))
    write(lib, new, edges)
    touched = {lib.graph.get_node(k).community for k in graph if any(k in e[:2] for e in edges)}
    lib.graph.reads.update(nodes=0, edges=0, whole=0)
    timings = refresh_communities(lib)

    assert timings["full"] == 0.0
    region = sum(len(before_members[c]) for c in touched) + len(new)
    assert timings["region"] == region < len(graph) / 5
    assert lib.graph.reads["whole"] == 0  # no all_nodes / all_edges
    assert lib.graph.reads["nodes"] <= 2 * region + len(new) + 2
    assert lib.graph.reads["edges"] <= 4 * sum(graph.degree(k) for c in touched for k in before_members[c]) + 40
    after_members, after_reports = members(lib), reports(lib)
    for c, m in before_members.items():
        if c not in touched:
            assert after_members[c] == m and after_reports.get(c) == before_reports.get(c)
    assert all(lib.graph.get_node(k).community is not None for k in new)
    assert refresh_communities(lib) is None  # nothing changed since


def test_after_many_papers_the_communities_stay_close_to_a_full_recompute(lib):
    graph = generate_graph(600, 2400, seed=2, community_size=30, inside=0.9)
    write_graph(lib, graph)
    refresh_communities(lib)
    rng = random.Random(11)
    partial = 0
    for n in range(12):
        new, edges = new_paper(sorted(graph), n, rng)
        write(lib, new, edges)
        partial += refresh_communities(lib)["full"] == 0.0
    assert partial >= 10  # 12 papers of ~7 changed entities stay within the drift bound of 600 entities

    whole = entity_graph(lib.graph)
    kept = {n.key: n.community for n in lib.graph.all_nodes()}
    assert None not in kept.values()
    full = detect_communities(whole)
    assert modularity(whole, kept) >= modularity(whole, full) - 0.01
    for c, m in members_of(kept).items():  # each community is connected, as Leiden guarantees
        assert nx.is_connected(whole.subgraph(m)), c
        if len(m) > 1:
            assert sorted(reports(lib)[c]["entities"]) == sorted(m)
    # The graph's total weight, kept up to date from the reports' volumes, is the real one.
    state = lib.graph_sources.meta("communities_state")
    assert abs(json.loads(state)["weight"] - whole.size(weight="weight")) < 1e-6


def test_a_deleted_entity_makes_the_refresh_full_and_leaves_every_report(lib):
    graph = generate_graph(300, 1200, seed=4, community_size=30, inside=0.9)
    write_graph(lib, graph)
    refresh_communities(lib)
    gone = sorted(graph)[:3]
    write(lib, delete=gone)
    assert refresh_communities(lib)["full"] == 1.0
    named = {k for r in reports(lib).values() for k in r["entities"]}
    assert not named & set(gone) and named <= {n.key for n in lib.graph.all_nodes()}


def test_many_changes_at_once_recompute_everything(lib):
    graph = generate_graph(100, 400, seed=5, community_size=20, inside=0.9)
    write_graph(lib, graph)
    refresh_communities(lib)
    rng = random.Random(3)
    many, edges = {}, []
    for n in range(12):
        new, e = new_paper(sorted(graph), n, rng, size=3)
        many.update(new)
        edges += e
    write(lib, many, edges)
    assert refresh_communities(lib)["full"] == 1.0
    whole = entity_graph(lib.graph)
    assert {n.key: n.community for n in lib.graph.all_nodes()} == detect_communities(whole)


@pytest.mark.slow
def test_the_drift_bound_makes_every_so_many_changed_entities_a_full_recompute(lib):
    graph = generate_graph(1000, 3000, seed=9, community_size=20, inside=0.9)
    write_graph(lib, graph)
    refresh_communities(lib)
    rng = random.Random(4)
    fulls = []
    for n in range(60):  # 5 entities changed per paper: 3 new, 2 existing ones they link to
        new, edges = new_paper(sorted(graph), n, rng, size=3)
        write(lib, new, edges)
        fulls.append(refresh_communities(lib)["full"])
    entities, changed, expected = 1000, 0, None
    for n in range(60):  # the bound grows with the graph: each paper brings 3 entities
        changed += 5
        if changed > max(FULL_AFTER * entities, MIN_FULL_AFTER):
            expected = n
            break
        entities += 3
    assert fulls.index(1.0) == expected == 58  # the paper that takes the changes past the bound
    assert fulls.count(1.0) == 1


def test_a_refresh_interrupted_between_its_writes_is_redone_in_full(lib):
    graph = generate_graph(200, 800, seed=6, community_size=20, inside=0.9)
    write_graph(lib, graph)
    refresh_communities(lib)
    store = lib.community_state
    store.put_state({**store.state(), "pending": True})  # as a crash after set_communities leaves it
    new, edges = new_paper(sorted(graph), 1, random.Random(1))
    write(lib, new, edges)
    assert refresh_communities(lib)["full"] == 1.0
    assert refresh_communities(lib) is None
