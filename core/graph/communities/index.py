"""Keeping communities in step with the graph: after a change, only the communities it touched are recomputed and
reported again (core.graph.communities.local); a full Leiden over the whole graph when the drift bound
says so, when an entity was deleted, when there is no earlier state, or on request (`force`).

What changed comes from the change log (core.store.sqlite_communities), so an add reads what the paper touched
and the communities around it, never every node. Reports carry `volume` (their members' weighted degree in the
whole graph) so the graph's total weight, which modularity needs, is kept up to date without reading every edge.
The reports written are embedded with them (core.graph.communities.vectors), only the texts that changed.
"""
from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass

import networkx as nx

from core.graph.communities.detect import CommunityReport, community_reports, detect_communities
from core.graph.communities.local import (
    FULL_AFTER,
    LARGE_REGION,
    MIN_FULL_AFTER,
    assign_ids,
    refine_region,
    strengths,
)
from core.graph.communities.vectors import current_space, vector_rows
from core.graph.lock import graph_lock
from core.graph.view import entity_graph, entity_subgraph
from core.library import Library
from core.schema.graph import PAPER_PREFIX
from core.store.base import CommunityState

log = logging.getLogger(__name__)


@dataclass
class _Plan:
    """A refresh computed, to be written: the nodes' communities, the reports to put and drop, the next state."""
    assignment: dict[str, int]
    reports: list[dict]
    drop: set[int]
    state: dict
    timings: dict[str, float]
    partial: bool


def refresh_communities(lib: Library, force: bool = False) -> dict[str, float] | None:
    """Bring communities and their reports up to date with the graph if it changed since the last time (`force`:
    a full recompute whatever changed); returns timings (and `full`: 1.0 for a full recompute, 0.0 for a partial
    one; `region`: the entities recomputed), or None when nothing had changed."""
    store = lib.community_state
    version = lib.graph_sources.meta("version", "0")
    state = store.state()
    usable = state is not None and not state.get("pending")
    if not force and usable and lib.graph_sources.meta("communities_version") == version:
        return None
    upto, nodes, edges = store.changes()
    plan = None if force or not usable else _partial(lib, store, state, upto, nodes, edges)
    plan = plan or _full(lib)
    t = time.perf_counter()
    vectors = vector_rows(lib, store, plan.reports)  # embedded here, never at a question
    plan.timings["vectors_s"] = time.perf_counter() - t
    # Computed outside the graph lock (LLM reports can take minutes; a delete must not wait for them), written
    # under it, unless another refresh wrote meanwhile: then this one's view is older than what is stored.
    with graph_lock(lib):
        if store.state() != state:
            return None
        store.put_state({**(state or {}), "pending": True})  # a crash before the write below: next one is full
        lib.graph.set_communities(plan.assignment, keep_others=plan.partial)
        store.write(plan.reports, plan.drop, version, plan.state, upto, replace_all=not plan.partial,
                    vectors=vectors, space=current_space(lib))
    return plan.timings


def _full(lib: Library) -> _Plan:
    t = time.perf_counter()
    graph = entity_graph(lib.graph)
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    assignment = detect_communities(graph) if graph.number_of_nodes() else {}
    leiden_s = time.perf_counter() - t
    strength = strengths(graph)
    t = time.perf_counter()
    reports = _reports(lib, graph, assignment)
    reports_s = time.perf_counter() - t
    state = {"weight": sum(strength.values()) / 2, "entities": graph.number_of_nodes(), "since_full": 0,
             "next_id": max(assignment.values(), default=-1) + 1}
    log.info("communities: %d over %d nodes (full; Leiden %.2f s, reports %.2f s)", len(set(assignment.values())),
             len(assignment), leiden_s, reports_s)
    return _Plan(assignment, _payloads(reports, strength), set(), state,
                 {"load_s": load_s, "leiden_s": leiden_s, "reports_s": reports_s, "full": 1.0,
                  "region": float(len(assignment))}, partial=False)


def _partial(lib: Library, store: CommunityState, state: dict, upto: int, nodes: list[str],
             edges: list[tuple[str, str]]) -> _Plan | None:
    """Recompute the communities the changes touched; None when a full recompute is due instead."""
    t = time.perf_counter()
    keys = {k for k in nodes if not k.startswith(PAPER_PREFIX)}
    keys |= {k for pair in edges if not pair[1].startswith(PAPER_PREFIX) for k in pair}
    entities = int(state["entities"])
    since_full = int(state["since_full"]) + len(keys)
    if since_full > max(FULL_AFTER * entities, MIN_FULL_AFTER):
        return None
    changed = lib.graph.get_nodes(keys)
    if len(changed) < len(keys):
        return None  # an entity was deleted: its old community is not known, and no report may keep naming it
    old: dict[str, int | None] = {k: n.community for k, n in changed.items()}
    touched = {c for c in old.values() if c is not None}
    before = store.reports(touched)
    region = set(keys).union(*(r["entities"] for r in before.values()))
    if len(region) > LARGE_REGION * entities:
        return None
    graph, strength = entity_subgraph(lib.graph, region)
    if set(graph) != region:
        return None  # a member gone without a change recorded (a workspace older than the log): start afresh
    old.update({k: graph.nodes[k].get("community") for k in graph})
    # The whole graph's weight: only region nodes' degrees changed (a changed relation's ends are both in it).
    weight = float(state["weight"]) + (sum(strength.values()) - sum(r.get("volume", 0.0) for r in before.values())) / 2
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    groups = refine_region(graph, strength, weight, old)
    assignment, next_id = assign_ids(groups, old, touched, int(state["next_id"]))
    leiden_s = time.perf_counter() - t
    t = time.perf_counter()
    reports = _reports(lib, graph, assignment)
    reports_s = time.perf_counter() - t
    new_entities = sum(1 for k in keys if old.get(k) is None)
    log.info("communities: %d recomputed over %d of ~%d entities (Leiden %.2f s, reports %.2f s)",
             len(groups), len(region), entities, leiden_s, reports_s)
    return _Plan(assignment, _payloads(reports, strength), touched - {r.community for r in reports},
                 {"weight": weight, "entities": entities + new_entities, "since_full": since_full, "next_id": next_id},
                 {"load_s": load_s, "leiden_s": leiden_s, "reports_s": reports_s, "full": 0.0,
                  "region": float(len(region))}, partial=True)


def _reports(lib: Library, graph: nx.Graph, assignment: dict[str, int]) -> list[CommunityReport]:
    for key, community in assignment.items():
        graph.nodes[key]["community"] = community
    return community_reports(graph, assignment, lib.chat_model(), language=lib.settings.graph.language)


def _payloads(reports: list[CommunityReport], strength: dict[str, float]) -> list[dict]:
    return [{**asdict(r), "volume": sum(strength.get(k, 0.0) for k in r.entities)} for r in reports]
