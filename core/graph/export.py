"""Exports of the graph: GraphML (for Gephi, yEd, networkx), JSON (node-link) and CSV (nodes + edges).

Exports are snapshots for other tools; the live graph is the store. Only graph fields are written: settings,
API keys and caches never reach an export.
"""
from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import networkx as nx

from core.graph.records import GraphEdge, GraphNode
from core.store.base import GraphStore

FORMATS = ("graphml", "json", "csv")
_LIST_FIELDS = ("source_chunks", "doc_ids", "extractors")


def _flat(record: dict) -> dict:
    # GraphML and CSV have no lists or nulls: lists become JSON text, None an empty string.
    return {k: (json.dumps(v) if k in _LIST_FIELDS else "" if v is None else v) for k, v in record.items()}


def _atomic(out: Path, write) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    write(tmp)
    os.replace(tmp, out)


def export_graph(store: GraphStore, fmt: str, out: Path) -> list[Path]:
    """Write the graph; returns the files written (CSV writes the nodes to `out` and the edges beside it)."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, not {fmt!r}")
    nodes: list[GraphNode] = list(store.all_nodes())
    edges: list[GraphEdge] = list(store.all_edges())
    out = Path(out)
    if fmt == "graphml":
        graph = nx.Graph()
        for n in nodes:
            graph.add_node(n.key, **_flat({k: v for k, v in vars(n).items() if k != "key"}))
        for e in edges:
            graph.add_edge(e.source, e.target, **_flat({k: v for k, v in vars(e).items()
                                                        if k not in ("source", "target")}))
        _atomic(out, lambda p: nx.write_graphml(graph, p))
        return [out]
    if fmt == "json":
        payload = {"directed": False, "nodes": [vars(n) for n in nodes], "edges": [vars(e) for e in edges]}
        _atomic(out, lambda p: p.write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8"))
        return [out]
    edges_out = out.with_name(out.stem + ".edges" + (out.suffix or ".csv"))
    for target, rows, columns in ((out, nodes, list(GraphNode.__dataclass_fields__)),
                                  (edges_out, edges, list(GraphEdge.__dataclass_fields__))):
        def write(p: Path, rows=rows, columns=columns) -> None:
            with p.open("w", newline="", encoding="utf-8") as fh:
                writer = csv.DictWriter(fh, fieldnames=columns)
                writer.writeheader()
                writer.writerows(_flat(vars(r)) for r in rows)
        _atomic(target, write)
    return [out, edges_out]
