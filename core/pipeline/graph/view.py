"""networkx views of the stored graph, for algorithms (communities, neighbourhoods)."""
from __future__ import annotations

import networkx as nx

from core.schema.graph import RELATED
from core.store.base import GraphStore


def entity_graph(store: GraphStore) -> nx.Graph:
    """Entities and the relations between them: the graph communities are computed on."""
    graph = nx.Graph()
    for node in store.all_nodes():
        if not node.is_paper:
            graph.add_node(node.key, **_attrs(vars(node), skip=("key",)))
    for edge in store.all_edges():
        if edge.relation == RELATED:
            graph.add_edge(edge.source, edge.target, **_attrs(vars(edge), skip=("source", "target")))
    return graph


def _attrs(fields: dict, skip: tuple[str, ...]) -> dict:
    return {k: v for k, v in fields.items() if k not in skip}
