"""Exports of the graph: GraphML (for Gephi, yEd, networkx), JSON (node-link: `nodes` and `links`, as
networkx.node_link_graph and d3 read it), CSV (nodes + edges), a Cypher script that loads the graph into Neo4j with
the layout of the Neo4j store (core.store.property_graph), and a view of the graph as a standalone HTML page.

Exports are snapshots for other tools; the live graph is the store. Only graph fields are written: settings,
API keys and caches never reach an export.
"""
from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import networkx as nx

from core.schema.graph import GraphEdge, GraphNode
from core.store.base import GraphStore
from core.store.property_graph import ENTITY, PAPER, edge_props, label_of, node_props, relation_type
from core.text.csv_safe import csv_cell

FORMATS = ("graphml", "json", "csv", "cypher")
VIEW_FORMATS = ("html",)  # a bounded view of the graph, not the whole graph: export_view_html
CYPHER_BATCH = 500  # rows per UNWIND statement: large enough to be fast, small enough for cypher-shell
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
    if fmt == "cypher":
        _atomic(out, lambda p: p.write_text(cypher_script(nodes, edges), encoding="utf-8"))
        return [out]
    if fmt == "json":
        payload = {"directed": False, "multigraph": False, "graph": {},
                   "nodes": [{"id": n.key, **vars(n)} for n in nodes], "links": [vars(e) for e in edges]}
        _atomic(out, lambda p: p.write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8"))
        return [out]
    edges_out = out.with_name(out.stem + ".edges" + (out.suffix or ".csv"))
    for target, rows, columns in ((out, nodes, list(GraphNode.__dataclass_fields__)),
                                  (edges_out, edges, list(GraphEdge.__dataclass_fields__))):
        def write(p: Path, rows=rows, columns=columns) -> None:
            with p.open("w", newline="", encoding="utf-8") as fh:
                writer = csv.DictWriter(fh, fieldnames=columns)
                writer.writeheader()
                # names, descriptions and keywords come from papers and LLM replies: no cell may be a formula
                writer.writerows({k: csv_cell(v) for k, v in _flat(vars(r)).items()} for r in rows)
        _atomic(target, write)
    return [out, edges_out]


def _cypher_value(value) -> str:
    """A Cypher literal. JSON's string escapes (\\" \\\\ \\n \\uXXXX) are Cypher's too, so a name holding quotes,
    backslashes or a `*/` cannot end its string literal."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=True)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_cypher_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"`{k}`: {_cypher_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no Cypher literal for {type(value).__name__}")


def cypher_script(nodes: list[GraphNode], edges: list[GraphEdge]) -> str:
    """Statements for cypher-shell (`cypher-shell -f graph.cypher`): uniqueness constraints, then nodes and edges
    merged by key in batches, so loading twice gives the same graph."""
    lines = [f"// PaperGraph export: {len(nodes)} nodes, {len(edges)} edges. Load: cypher-shell -f <this file>",
             f"CREATE CONSTRAINT entity_key IF NOT EXISTS FOR (n:{ENTITY}) REQUIRE n.key IS UNIQUE;",
             f"CREATE CONSTRAINT paper_key IF NOT EXISTS FOR (n:{PAPER}) REQUIRE n.key IS UNIQUE;"]
    by_label: dict[str, list[dict]] = {}
    for node in nodes:
        by_label.setdefault(label_of(node.key), []).append(node_props(node))
    for label, rows in sorted(by_label.items()):
        for start in range(0, len(rows), CYPHER_BATCH):
            lines.append(f"UNWIND {_cypher_value(rows[start:start + CYPHER_BATCH])} AS row "
                         f"MERGE (n:{label} {{key: row.key}}) SET n = row;")
    by_shape: dict[tuple[str, str, str], list[dict]] = {}
    for edge in edges:
        shape = (label_of(edge.source), label_of(edge.target), relation_type(edge.relation))
        by_shape.setdefault(shape, []).append({"source": edge.source, "target": edge.target,
                                               "props": edge_props(edge)})
    for (a, b, rel), rows in sorted(by_shape.items()):
        for start in range(0, len(rows), CYPHER_BATCH):
            lines.append(f"UNWIND {_cypher_value(rows[start:start + CYPHER_BATCH])} AS row "
                         f"MATCH (a:{a} {{key: row.source}}) MATCH (b:{b} {{key: row.target}}) "
                         f"MERGE (a)-[r:{rel}]->(b) SET r = row.props;")
    return "\n".join(lines) + "\n"


def export_view_html(lib, out: Path, filters=None) -> list[Path]:
    """A view of the graph (the Graph page's default one unless `filters` say otherwise) as one HTML file that
    opens offline in any browser: vis-network inlined, tooltips as text."""
    from core.presentation.graph.explorer import ViewFilters, build_view
    from core.presentation.graph.graph_index import load_index
    from core.presentation.graph.render import RenderOptions, render_html

    config = lib.settings.explorer
    index = load_index(lib)
    filters = filters or ViewFilters(max_nodes=config.max_nodes, overview=True)  # the Graph page's default view
    view = build_view(index, filters, config)
    details = {k: n.description for k, n in lib.graph.get_nodes([n.key for n in view.nodes]).items()}
    page = render_html(view, RenderOptions(color_by=filters.color_by, type_order=index.types, clickable=False,
                                           title=f"PaperGraph — {lib.workspace.root.name}"), details, config)
    out = Path(out)
    _atomic(out, lambda p: p.write_text(page, encoding="utf-8"))
    return [out]
