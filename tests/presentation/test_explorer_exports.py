"""What leaves the graph explorer, over a real workspace (tests/presentation/conftest.py): the Cypher script,
JSON node-link and standalone HTML exports, the CLI export, and rendering that keeps paper text inert."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import networkx as nx
import pytest

from core.library import open_library
from core.pipeline.graph import edits
from core.presentation.graph.explorer import (
    ViewFilters,
    build_view,
)
from core.presentation.graph.export import cypher_script, export_graph, export_view_html
from core.presentation.graph.graph_index import load_index
from core.presentation.graph.render import RenderOptions, render_html
from core.settings.workspace import Workspace
from tests.paths import REPO
from tests.presentation.explorer_helpers import key


def test_cypher_script_quotes_every_string(base_ws):
    root, _, _ = base_ws
    lib = open_library(Workspace(root))
    nodes, edges = list(lib.graph.all_nodes()), list(lib.graph.all_edges())
    hostile = nodes[0].__class__(key="x", name='O\'Neil "quoted" \\ back `tick`: }) DETACH DELETE n //',
                                 type="method", description="line\nbreak <script>alert(1)</script>")
    script = cypher_script(nodes + [hostile], edges)
    statements = [s for s in script.splitlines() if s and not s.startswith("//")]
    assert statements[0].startswith("CREATE CONSTRAINT entity_key") and statements[-1].endswith(";")
    assert sum(s.startswith("UNWIND") for s in statements) >= 3
    assert any("MERGE (a)-[r:RELATED]->(b)" in s for s in statements)
    assert any("MERGE (a)-[r:MENTIONED_IN]->(b)" in s for s in statements)

    def rows(statement: str) -> list:
        """Read the UNWIND list as Cypher would: a string ends at an unescaped double quote; outside strings,
        `key` map keys become JSON keys. A name that broke out of its string would break this reading."""
        literal = statement[len("UNWIND "):statement.rindex(" AS row ")]
        out, in_string, escaped = [], False, False
        for ch in literal:
            if in_string:
                in_string = escaped or ch != '"'
                escaped = not escaped and ch == "\\"
            elif ch == '"':
                in_string = True
            elif ch == "`":
                ch = '"'
            out.append(ch)
        return json.loads("".join(out))

    loaded = [r for s in statements if "MERGE (n:Entity" in s for r in rows(s)]
    assert len(loaded) == sum(not n.is_paper for n in nodes) + 1
    assert next(r for r in loaded if r["key"] == "x")["name"] == hostile.name
    assert next(r for r in loaded if r["key"] == "x")["description"] == hostile.description
    links = [r for s in statements if "MERGE (a)-[r:" in s for r in rows(s)]
    assert len(links) == len(edges)


def test_exports_json_node_link_and_standalone_html(base_ws, tmp_path):
    root, _, _ = base_ws
    lib = open_library(Workspace(root))
    (out,) = export_graph(lib.graph, "json", tmp_path / "g.json")
    data = json.loads(out.read_text())
    graph = nx.node_link_graph(data, edges="links")
    assert graph.number_of_nodes() == lib.graph.counts()[0] and graph.number_of_edges() == lib.graph.counts()[1]
    (cypher,) = export_graph(lib.graph, "cypher", tmp_path / "g.cypher")
    assert cypher.read_text().count("UNWIND") >= 3
    (page,) = export_view_html(lib, tmp_path / "view.html")
    text = page.read_text()
    assert "new vis.Network" in text and "RoBERTa" in text and '"clickable": false' in text
    assert not re.search(r"<(?:script|link)\b[^>]*(?:src|href)=\"https?://", text)  # opens offline
    with pytest.raises(ValueError):
        export_graph(lib.graph, "gexf", tmp_path / "g.gexf")


# ------------------------------------------------------------------------------------------------- rendering

@pytest.mark.slow
def test_rendering_keeps_untrusted_text_inert(ws_copy):
    root, _, _ = ws_copy
    lib = open_library(Workspace(root))
    payload = "<script>alert(1)</script>"
    edits.rename_entity(lib, key("GLUE"), payload)
    edits.rename_entity(lib, key("RoBERTa"), "<img src=x onerror=alert(2)>")
    index = load_index(lib)
    view = build_view(index, ViewFilters(include_papers=True))
    details = {key("BERT"): "</script><script>alert(3)</script> & <b>bold</b>"}
    page = render_html(view, RenderOptions(type_order=index.types, title="<i>title</i>"), details)
    assert payload not in page and "<img src=x" not in page and "alert(3)</script>" not in page
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in page  # the name is there, as inert JSON
    assert "&lt;i&gt;title&lt;/i&gt;" in page
    assert "el.textContent = text" in page and ".innerHTML" not in page.split("drawGraph();")[-1]
    assert not re.search(r"<(?:script|link)\b[^>]*(?:src|href)=\"https?://", page)
    # The static layout for large views: positions for every node, physics off.
    big = build_view(index, ViewFilters(), config=lib.settings.explorer.__class__(static_layout_above=5))
    assert big.static_layout and all(n.x is not None and n.y is not None for n in big.nodes)
    assert '"physics": {"enabled": false' in render_html(big)  # not the label-scaling option's "enabled"


@pytest.mark.slow
def test_cli_exports_cypher_and_the_html_view(base_ws, tmp_path):
    root, _, _ = base_ws
    env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(root))
    for fmt in ("cypher", "html"):
        out = subprocess.run([sys.executable, "-m", "core", "graph", "export", "--format", fmt, "--out",
                              str(tmp_path / f"g.{fmt}")], cwd=REPO, env=env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
        assert f"wrote {tmp_path / f'g.{fmt}'}" in out.stdout
    assert "MERGE (n:Entity" in (tmp_path / "g.cypher").read_text()
    assert "new vis.Network" in (tmp_path / "g.html").read_text()
