"""A GraphView drawn as a self-contained HTML page with pyvis (vis-network inlined, nothing fetched).

Everything shown comes from papers and is untrusted. vis-network draws labels on a canvas (never parsed as
HTML); tooltips are built in the page as text nodes (`textContent`), never from an HTML string, and never through
pyvis's `title`, whose "link" template writes titles with innerHTML. The data reaches the page as JSON escaped for
a <script> element, and the legend and note are HTML-escaped. On the Graph page the page is drawn by the graph
component (pages/widgets/graph_component) in a sandboxed frame of its own; a standalone export opens as a file. No
HTML from a paper either way.

Labels: the most connected nodes (LABELLED_PAPERS papers, LABELLED_ENTITIES entities) are "major": once the view
is fitted, the page sizes their font so it reads at that zoom (vis-network's `maxVisible` caps it when zooming
in); the other labels are small and only drawn (`drawThreshold`) once zoomed in, and every node has its tooltip.
A major label that would cover one placed before it (papers first, then by relations) is drawn small like the
others ("crowded": it shows once zoomed in), so the labels at the opening zoom never overlap.

The legend (and a standalone file's title and note) sits above the graph.

Clicking a node or an edge posts {papergraph: "click", kind, id | source, target} to the parent frame (the
component, which hands it to the app without reloading it); nothing else is sent.
"""
from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field

from core.presentation.graph.explorer import GraphView
from core.schema.graph import PAPER_PREFIX
from core.schema.references import CITES
from core.settings.config import ExplorerConfig

PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#86bcb6", "#d37295", "#8cd17d", "#b6992d", "#499894", "#a0cbe8", "#ffbe7d"]
OTHER_COLOR = "#bab0ac"
# The types of fields other than computer science (core/graph/fields.py) have colours of their own, outside the
# palette, so a biology paper's genes and diseases never take a computer-science type's colour.
TYPE_COLORS = {"gene_or_protein": "#1b9e77", "disease": "#d62728", "chemical": "#9467bd", "organism": "#8c564b",
               "cell_or_tissue": "#e7298a", "assay": "#17becf", "material": "#bcbd22", "property": "#c49c94",
               "instrument": "#393b79"}
PAPER_COLOR = "#2f2f2f"
EDGE_PARAM_SEP = "|"  # entity keys never contain it (normalisation keeps letters, digits and spaces)
LABELLED_PAPERS = 12
LABELLED_ENTITIES = (10, 25)  # a third of the entities of the view, within these bounds
MINOR_FONT = 12  # canvas units: drawn from a zoom of about 0.67 (drawThreshold 9: under 8 px on screen)
MAJOR_FONT_PX = 15  # on screen, at the zoom the view opens with
LABEL_MAX_VISIBLE = 22  # on screen: zooming in never draws a label larger
_EXTERNAL = re.compile(r"\s*<(?:link|script)\b[^>]*https?://[^>]*>\s*(?:</script>)?", re.IGNORECASE)


@dataclass
class RenderOptions:
    height_px: int = 680
    color_by: str = "type"  # type | community
    type_order: list[str] = field(default_factory=list)  # every type of the graph: a type keeps its colour
    clickable: bool = True  # post clicks to the parent frame (the graph component); off for a standalone file
    title: str = ""  # shown above the graph in a standalone file
    show_note: bool = True  # the view's note under the graph; off where the app shows it as a caption already


def _script_json(value) -> str:
    """JSON that cannot end a <script> element or open a comment, whatever the strings hold."""
    return (json.dumps(value, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def color_of(node, options: RenderOptions) -> str:
    if node.is_paper:
        return PAPER_COLOR
    if options.color_by == "community":
        return OTHER_COLOR if node.community is None else PALETTE[node.community % len(PALETTE)]
    if node.type in TYPE_COLORS:
        return TYPE_COLORS[node.type]
    order = [t for t in options.type_order if t not in TYPE_COLORS] or [node.type]
    return PALETTE[order.index(node.type) % len(PALETTE)] if node.type in order else OTHER_COLOR


def legend(view: GraphView, options: RenderOptions) -> list[tuple[str, str]]:
    """(label, colour) of what the view's colours mean, most frequent first."""
    counts: dict[str, int] = {}
    colors: dict[str, str] = {}
    for node in view.nodes:
        if node.is_paper:
            label = "paper"
        elif options.color_by == "community":
            label = "no community" if node.community is None else f"community {node.community}"
        else:
            label = node.type
        counts[label] = counts.get(label, 0) + 1
        colors[label] = color_of(node, options)
    return [(label, colors[label]) for label in sorted(counts, key=lambda k: (-counts[k], k))]


def major_nodes(view: GraphView) -> dict[str, int]:
    """The nodes labelled at the opening zoom — the papers and entities with the most relations (ties by name) —
    with the order their labels are placed in (papers first), which decides who keeps a label where two collide."""
    rank = lambda n: (-n.degree, n.name.casefold(), n.key)  # noqa: E731
    papers = sorted((n for n in view.nodes if n.is_paper), key=rank)[:LABELLED_PAPERS]
    entities = [n for n in view.nodes if not n.is_paper]
    low, high = LABELLED_ENTITIES
    top = sorted(entities, key=rank)[:max(low, min(high, len(entities) // 3))]
    return {n.key: place for place, n in enumerate(papers + top)}


def _label(node) -> str:
    limit = 24 if node.is_paper else 40  # titles are long: the full one is in the tooltip
    return node.name if len(node.name) <= limit else node.name[:limit - 2] + "…"


def _node_tip(node, details: dict[str, str]) -> str:
    kind = "paper" if node.is_paper else node.type
    lines = [node.name, f"{kind} · {node.degree} {'mentions' if node.is_paper else 'relations'}"
             + (f" · {len(node.doc_ids)} paper(s)" if not node.is_paper else "")
             + ("" if node.community is None else f" · community {node.community}")]
    if details.get(node.key):
        lines.append(details[node.key][:300])
    lines.append("Click for details.")
    return "\n".join(lines)


def render_html(view: GraphView, options: RenderOptions | None = None, details: dict[str, str] | None = None,
                config: ExplorerConfig | None = None) -> str:
    """The view as one HTML document; `details` maps node keys to a short description for their tooltip."""
    from pyvis.network import Network

    options = options or RenderOptions()
    config = config or ExplorerConfig()
    details = details or {}
    names = {n.key: n.name for n in view.nodes}
    net = Network(height=f"{options.height_px}px", width="100%", cdn_resources="in_line", bgcolor="#ffffff")
    # pyvis's add_node / add_edge check for duplicates with list scans (quadratic: minutes at 5,000 nodes);
    # the view has no duplicates, so its lists are filled directly.
    net.nodes = []
    major = major_nodes(view)
    for node in view.nodes:
        item = {"id": node.key, "label": _label(node), "shape": "square" if node.is_paper else "dot",
                "color": color_of(node, options), "tip": _node_tip(node, details),
                "major": node.key in major, "rank": major.get(node.key, len(major)), "font": {"size": MINOR_FONT}}
        if node.is_paper:  # a paper mentions hundreds of entities: sized by that, it would cover its neighbours
            item["size"] = 14
        else:
            item["value"] = node.degree + 1
        if node.key == view.focus:
            item["borderWidth"] = 4
        if view.static_layout:
            item["x"], item["y"] = round(node.x or 0.0, 1), round(node.y or 0.0, 1)
        net.nodes.append(item)
    net.node_ids = [n.key for n in view.nodes]
    net.node_map = {item["id"]: item for item in net.nodes}
    net.edges = []
    for i, edge in enumerate(view.edges):
        cites = edge.relation == CITES  # paper → paper: drawn as a red arrow
        mention = edge.target.startswith(PAPER_PREFIX) and not cites  # MENTIONED_IN, or a table's BELONGS_TO
        net.edges.append({"id": f"e{i}", "from": edge.source, "to": edge.target, "value": edge.weight,
                          "color": {"color": "#c0392b" if cites else "#c8c8c8" if mention else "#8a8a8a",
                                    "opacity": 0.9 if cites else 0.6},
                          "dashes": mention, **({"arrows": "to"} if cites else {}),
                          "tip": f"{names.get(edge.source, edge.source)} — {names.get(edge.target, edge.target)}\n"
                                 f"{edge.relation} · weight {edge.weight:g}\nClick for details."})
    net.options = {
        # Font sizes are set per node (see `major_nodes` and the page's script), not scaled by value: by value only
        # the one or two largest hubs of a view would get a readable label. `enabled` must be said: vis-network
        # turns an option object given without it on. drawThreshold and maxVisible apply either way.
        "nodes": {"font": {"size": MINOR_FONT, "face": "sans-serif", "strokeWidth": 3, "strokeColor": "#ffffff"},
                  "scaling": {"min": 8, "max": 36, "label": {"enabled": False, "drawThreshold": 9,
                                                             "maxVisible": LABEL_MAX_VISIBLE}}},
        "edges": {"smooth": False, "scaling": {"min": 1, "max": 8}},
        "interaction": {"hover": True, "tooltipDelay": 150, "hideEdgesOnDrag": len(view.nodes) > 300,
                        "navigationButtons": False},
        # forceAtlas2 with strong damping settles a few hundred nodes in well under a second of simulation.
        # Papers are hubs and gather in the centre: a longer spring and a stronger repulsion than vis-network's
        # defaults leave room for their labels.
        "physics": {"enabled": not view.static_layout, "solver": "forceAtlas2Based",
                    "forceAtlas2Based": {"gravitationalConstant": -160, "springLength": 150, "damping": 0.6,
                                         "avoidOverlap": 0.8},
                    "stabilization": {"enabled": True, "iterations": config.stabilization_iterations,
                                      "updateInterval": 25, "fit": True},
                    "minVelocity": 1.5},
        "layout": {"improvedLayout": len(view.nodes) <= 150, "randomSeed": 7},
    }
    page = net.generate_html()
    page = _EXTERNAL.sub("\n", page)  # pyvis always links Bootstrap from a CDN; the page needs none of it
    page = page.replace("<body>", "<body>\n" + _header(view, options), 1)  # the key above the graph
    return page.replace("</body>", _script(view, options) + "\n</body>", 1)


def _header(view: GraphView, options: RenderOptions) -> str:
    items = "".join(f'<span class="pg-key"><span class="pg-dot" style="background:{color}"></span>'
                    f"{html.escape(label)}</span>" for label, color in legend(view, options)[:16])
    title = f"<h2>{html.escape(options.title)}</h2>" if options.title else ""
    return (
        "<style>.pg-legend{font:13px sans-serif;margin:6px 4px;clear:both}.pg-key{margin-right:14px;"
        "white-space:nowrap}.pg-dot{display:inline-block;width:10px;height:10px;border-radius:5px;"
        "margin-right:4px}.pg-note{font:12px sans-serif;color:#555;margin:2px 4px}"
        "h2{font:600 18px sans-serif;margin:6px 4px}</style>"
        f'<div class="pg-legend" id="pg-legend">{title}{items}</div>'
        + (f'<div class="pg-note" id="pg-note">{html.escape(view.note)}</div>' if options.show_note else ""))


def _script(view: GraphView, options: RenderOptions) -> str:
    settings = {"clickable": options.clickable, "focus": view.focus or None, "static": view.static_layout,
                "majorPx": MAJOR_FONT_PX, "minorFont": MINOR_FONT}
    return """
<script>
(function () {
  var S = %s;
  function tip(text) {
    var el = document.createElement("div");
    el.style.whiteSpace = "pre-wrap";
    el.style.maxWidth = "380px";
    el.style.font = "12px sans-serif";
    el.textContent = text || "";  // text, never HTML: names and descriptions come from papers
    return el;
  }
  nodes.update(nodes.get().map(function (n) { return {id: n.id, title: tip(n.tip)}; }));
  edges.update(edges.get().map(function (e) { return {id: e.id, title: tip(e.tip)}; }));
  function labelMajors() {
    // Major labels read at MAJOR_FONT_PX at the zoom the view opens with, however large the view is.
    var scale = network.getScale() || 1;
    var size = Math.max(S.minorFont, S.majorPx / scale);
    nodes.update(nodes.get({filter: function (n) { return n.major; }}).map(function (n) {
      return {id: n.id, font: {size: size, strokeWidth: 3 / Math.min(scale, 1)}};
    }));
    declutter(scale);
    document.body.setAttribute("data-graph-label-scale", String(scale));
  }
  function declutter(scale) {
    // A major label that would cover one placed before it (rank: papers first, then by relations) is drawn small
    // like the others: it shows once zoomed in. Boxes are the nodes' with their labels, measured by a draw.
    network.redraw();
    var pad = 3 / scale, kept = [], crowded = [];
    nodes.get({filter: function (n) { return n.major; }}).sort(function (a, b) { return a.rank - b.rank; })
      .forEach(function (n) {
        var b = network.getBoundingBox(n.id);
        if (!b) { return; }
        var hit = kept.some(function (k) {
          return b.left < k.right + pad && b.right > k.left - pad && b.top < k.bottom + pad && b.bottom > k.top - pad;
        });
        if (hit) { crowded.push(n.id); } else { kept.push(b); }
      });
    nodes.update(crowded.map(function (id) {
      return {id: id, major: false, crowded: true, font: {size: S.minorFont, strokeWidth: 3}};
    }));
    document.body.setAttribute("data-graph-crowded", String(crowded.length));
  }
  function settled() {
    if (!document.body.hasAttribute("data-graph-stable")) {
      if (S.static) { network.fit(); }
      labelMajors();
    }
    var bar = document.getElementById("loadingBar");  // pyvis's progress overlay fades slowly: gone at once
    if (bar) { bar.style.display = "none"; }
    if (!document.body.hasAttribute("data-graph-stable")) {  // how long the browser took, for the benchmark
      document.body.setAttribute("data-graph-settled-ms", String(Math.round(performance.now())));
    }
    document.body.setAttribute("data-graph-stable", "1");
  }
  if (S.static) {
    settled();
  } else {
    network.once("stabilizationIterationsDone", function () { network.setOptions({physics: false}); settled(); });
    setTimeout(settled, 8000);  // never wait for ever on a view that will not settle
  }
  if (S.focus && nodes.get(S.focus)) { network.selectNodes([S.focus]); }
  network.on("click", function (params) {
    if (!S.clickable || window.parent === window) { return; }
    var message;
    if (params.nodes.length) {
      message = {papergraph: "click", kind: "node", id: String(params.nodes[0])};
    } else if (params.edges.length) {
      var e = edges.get(params.edges[0]);
      message = {papergraph: "click", kind: "edge", source: String(e.from), target: String(e.to)};
    } else { return; }
    // The frame is sandboxed (an opaque origin): "*" is the only target that reaches the component, which
    // checks that the message comes from this frame.
    window.parent.postMessage(message, "*");
  });
  document.body.setAttribute("data-graph-nodes", String(nodes.length));
})();
</script>""" % _script_json(settings)
