"""User edits of the graph, kept as overrides that every rebuild applies on top of the merged records.

The graph is a pure function of per-chunk contributions, so an edit made to a stored node would be lost the next
time a paper touches that node. Instead an edit is recorded once (core.store.sqlite_graph_sources) and applied
whenever the node or edge is merged again: a renamed entity keeps its name when a new paper mentions it, and a
deleted one stays deleted.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from core.schema.graph import GraphNode

RENAME = "name"
RETYPE = "type"
DELETED = "deleted"
NODE_FIELDS = (RENAME, RETYPE, DELETED)


@dataclass(frozen=True)
class Override:
    kind: str  # node | edge
    a: str  # node key, or the edge's source
    b: str  # "" for a node, the edge's target
    field: str  # name | type | deleted
    value: str
    created_at: float = 0.0


@dataclass
class GraphOverrides:
    """Every override, indexed for the rebuild."""

    names: dict[str, str] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    deleted_nodes: set[str] = field(default_factory=set)
    deleted_edges: set[tuple[str, str]] = field(default_factory=set)

    @classmethod
    def of(cls, overrides: list[Override]) -> GraphOverrides:
        out = cls()
        for o in overrides:
            if o.kind == "edge" and o.field == DELETED:
                out.deleted_edges.add((o.a, o.b))
            elif o.field == DELETED:
                out.deleted_nodes.add(o.a)
            elif o.field == RENAME:
                out.names[o.a] = o.value
            elif o.field == RETYPE:
                out.types[o.a] = o.value
        return out

    def node_deleted(self, key: str) -> bool:
        return key in self.deleted_nodes

    def edge_deleted(self, pair: tuple[str, str]) -> bool:
        return pair in self.deleted_edges

    def apply(self, node: GraphNode) -> GraphNode:
        if node.key not in self.names and node.key not in self.types:
            return node
        return replace(node, name=self.names.get(node.key, node.name), type=self.types.get(node.key, node.type))
