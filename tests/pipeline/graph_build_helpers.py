"""What the graph-build tests share: the whole graph as a comparable snapshot, a node by name, and the stored
extractions."""
from __future__ import annotations

from dataclasses import asdict

from core.pipeline.graph.merge import normalize_key


def snapshot(lib) -> dict:
    """The whole graph and its vectors, minus community ids (recomputed as a whole after every change)."""
    nodes = sorted((asdict(n) | {"community": None} for n in lib.graph.all_nodes()), key=lambda n: n["key"])
    edges = sorted((asdict(e) for e in lib.graph.all_edges()), key=lambda e: (e["source"], e["target"]))
    return {"nodes": nodes, "edges": edges, "entity_vectors": lib.entity_vectors.count(),
            "relation_vectors": lib.relation_vectors.count()}


def node_named(lib, name: str):
    return lib.graph.get_node(normalize_key(name))


def extracted_rows(lib) -> int:
    with lib.db.connect() as conn:
        return conn.execute("SELECT COUNT(*) FROM graph_extractions").fetchone()[0]


def extraction_times(lib) -> dict[str, float]:
    """Chunk id → when its extraction was stored: a chunk extracted again gets a new time."""
    with lib.db.connect() as conn:
        return dict(conn.execute("SELECT chunk_id, created_at FROM graph_extractions").fetchall())
