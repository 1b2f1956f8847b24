"""Keeping communities in step with the graph: Leiden again, and reports again, only when the graph changed."""
from __future__ import annotations

import logging
import time
from dataclasses import asdict

from core.library import Library
from core.pipeline.graph.communities import community_reports, detect_communities
from core.pipeline.graph.view import entity_graph

log = logging.getLogger(__name__)


def refresh_communities(lib: Library, force: bool = False) -> dict[str, float] | None:
    """Recompute communities and their reports if the graph changed since the last time; returns timings."""
    version = lib.graph_sources.meta("version", "0")
    if not force and lib.graph_sources.meta("communities_version") == version:
        return None
    t = time.perf_counter()
    graph = entity_graph(lib.graph)
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    assignment = detect_communities(graph) if graph.number_of_nodes() else {}
    leiden_s = time.perf_counter() - t
    lib.graph.set_communities(assignment)
    for key, community in assignment.items():
        graph.nodes[key]["community"] = community
    t = time.perf_counter()
    reports = community_reports(graph, assignment, lib.chat_model(), language=lib.settings.graph.language)
    reports_s = time.perf_counter() - t
    lib.graph_sources.put_community_reports([asdict(r) for r in reports], version)
    log.info("communities: %d over %d nodes (Leiden %.2f s, reports %.2f s)", len(set(assignment.values())),
             len(assignment), leiden_s, reports_s)
    return {"load_s": load_s, "leiden_s": leiden_s, "reports_s": reports_s}
