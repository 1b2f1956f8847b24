"""networkx views of the stored graph, for algorithms (communities, neighbourhoods)."""
from __future__ import annotations

from collections.abc import Iterable

import networkx as nx

from core.graph.communities.detect import edge_weight
from core.schema.graph import RELATED
from core.store.base import GraphStore


def entity_graph(store: GraphStore) -> nx.Graph:
    """Entities and the relations between them: the graph communities are computed on."""
    graph = nx.Graph()
    for node in store.all_nodes():
        _add_entity(graph, node)
    for edge in store.all_edges():
        if edge.relation == RELATED:
            _add_relation(graph, edge)
    return graph


def entity_subgraph(store: GraphStore, keys: Iterable[str]) -> tuple[nx.Graph, dict[str, float]]:
    """The entities among `keys` that exist, the relations between them, and each one's weighted degree in the
    whole graph (relations to entities outside `keys` count too, as modularity needs): what refreshing a few
    communities reads, in proportion to them rather than to the graph."""
    graph = nx.Graph()
    for _, node in sorted(store.get_nodes(keys).items()):
        _add_entity(graph, node)
    strength = dict.fromkeys(graph, 0.0)
    for edge in store.edges_of(list(graph)):
        if edge.relation != RELATED or edge.source == edge.target:
            continue  # a self-loop says nothing about communities (as in detect_communities)
        for end in (edge.source, edge.target):
            if end in strength:
                strength[end] += edge_weight(edge.weight)
        if edge.source in graph and edge.target in graph:
            _add_relation(graph, edge)
    return graph, strength


def _add_entity(graph: nx.Graph, node) -> None:
    if not node.is_paper:  # paper nodes link a paper to what it mentions: not a relation between entities
        graph.add_node(node.key, **_attrs(vars(node), skip=("key",)))


def _add_relation(graph: nx.Graph, edge) -> None:
    graph.add_edge(edge.source, edge.target, **_attrs(vars(edge), skip=("source", "target")))


def _attrs(fields: dict, skip: tuple[str, ...]) -> dict:
    return {k: v for k, v in fields.items() if k not in skip}
