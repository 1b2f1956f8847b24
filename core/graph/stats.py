"""Figures about the graph, for `python -m core graph stats`, the Library page and benchmarks."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from core.library import Library
from core.schema.graph import MENTIONED_IN


@dataclass
class GraphStats:
    nodes: int = 0
    edges: int = 0
    entities: int = 0
    papers: int = 0
    relations: int = 0
    mentions: int = 0
    communities: int = 0
    entity_types: dict[str, int] = field(default_factory=dict)
    extractors: dict[str, int] = field(default_factory=dict)  # papers per extractor
    top_entities: list[tuple[str, str, int]] = field(default_factory=list)  # name, type, degree
    pending_changes: int = 0  # dirty nodes + edges not yet rebuilt (non-zero only mid-update or after a crash)


def graph_stats(lib: Library, top: int = 10) -> GraphStats:
    stats = GraphStats()
    types: Counter[str] = Counter()
    communities = set()
    names: dict[str, tuple[str, str]] = {}
    for node in lib.graph.all_nodes():
        stats.nodes += 1
        if node.is_paper:
            stats.papers += 1
            continue
        stats.entities += 1
        types[node.type] += 1
        names[node.key] = (node.name, node.type)
        if node.community is not None:
            communities.add(node.community)
    degree: Counter[str] = Counter()
    for edge in lib.graph.all_edges():
        stats.edges += 1
        if edge.relation == MENTIONED_IN:
            stats.mentions += 1
        else:
            stats.relations += 1
            degree[edge.source] += 1
            degree[edge.target] += 1
    stats.communities = len(communities)
    stats.entity_types = dict(types.most_common())
    stats.extractors = dict(Counter(p.extractor for p in lib.graph_sources.papers().values()).most_common())
    stats.top_entities = [(*names[k], d) for k, d in degree.most_common(top) if k in names]
    dirty_nodes, dirty_edges = lib.graph_sources.dirty()
    stats.pending_changes = len(dirty_nodes) + len(dirty_edges)
    return stats
