"""The graph as a property graph: labels, relationship types and properties of nodes and edges. The layout the
Neo4j store keeps (core.store.neo4j_graph) and the Cypher export writes (core.presentation.graph.export), so a
graph loaded from an export reads the same as one the store wrote.
"""
from __future__ import annotations

import re
from typing import Any

from core.schema.graph import PAPER_PREFIX, GraphEdge, GraphNode

ENTITY, PAPER = "Entity", "Paper"
LABELS = (ENTITY, PAPER)
RELATION_TYPE = re.compile(r"^[A-Z][A-Z0-9_]*$")


def label_of(key: str) -> str:
    return PAPER if key.startswith(PAPER_PREFIX) else ENTITY


def relation_type(relation: str) -> str:
    """The relation as a relationship type, checked: Cypher cannot take one as a parameter, so it is formatted in."""
    if not RELATION_TYPE.match(relation):
        raise ValueError(f"relation {relation!r} is not a plain upper-case name (RELATED, MENTIONED_IN...)")
    return relation


def node_props(node: GraphNode) -> dict[str, Any]:
    return {"key": node.key, "name": node.name, "type": node.type, "description": node.description,
            "source_chunks": list(node.source_chunks), "doc_ids": list(node.doc_ids),
            "extractors": list(node.extractors), "community": node.community, "year": node.year}


def edge_props(edge: GraphEdge) -> dict[str, Any]:
    return {"keywords": edge.keywords, "description": edge.description, "weight": float(edge.weight),
            "source_chunks": list(edge.source_chunks), "doc_ids": list(edge.doc_ids), "year": edge.year}
