"""The graph explorer's view model: filters over the graph index (graph_index.py) → a bounded subgraph, ready
to draw.

A collection's graph can hold tens of thousands of entities; a browser draws a few hundred comfortably and a few
thousand only without physics. So a view is always bounded (`max_nodes`), says when it was cut and by which rule,
and views above `ExplorerConfig.static_layout_above` nodes come with positions computed here (igraph's
Fruchterman-Reingold, grid-accelerated) so the browser only paints them.
"""
from __future__ import annotations

import dataclasses
import heapq
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from core.presentation.graph.graph_index import SEARCH_LIMIT, GraphIndex, IndexNode
from core.schema.graph import MENTIONED_IN, PAPER_PREFIX
from core.schema.references import CITES
from core.settings.config import ExplorerConfig

COLOR_BY = ("type", "community")
MAX_DEPTH = 3
GRID_LAYOUT_ABOVE = 600  # nodes; below it the exact layout takes under half a second
# The overview shows each paper with its few most connected entities: enough to see what a paper is about and
# which entities papers share, few enough (about a hundred nodes for ten papers) that the main ones can be labelled.
OVERVIEW_PER_PAPER = (3, 8)


class ViewError(ValueError):
    """Filters that cannot describe a view; the message says which and why."""


@dataclass
class ViewFilters:
    types: tuple[str, ...] = ()  # empty: every type
    doc_ids: tuple[str, ...] = ()  # entities from any of these papers; empty: all papers
    communities: tuple[int, ...] = ()
    years: tuple[int, int] | None = None  # publication year range of the papers an entity comes from
    min_degree: int = 0  # relations an entity has in the whole graph
    min_weight: float = 0.0  # edges lighter than this are neither drawn nor followed
    search: str = ""  # name, alias or a misspelling of one: the view is the matching entities
    focus: str = ""  # entity key: the view is its neighbourhood
    depth: int = 1  # neighbourhood depth, 1-3
    max_nodes: int = 300
    include_papers: bool = False  # paper nodes and the edges to them
    color_by: str = "type"
    overview: bool = False  # the papers and the most connected entities of each (unless a search or focus is set)

    def validate(self, config: ExplorerConfig) -> ViewFilters:
        if not 1 <= self.max_nodes <= config.max_nodes_limit:
            raise ViewError(f"maximum nodes must be between 1 and {config.max_nodes_limit}, not {self.max_nodes}")
        if not 1 <= self.depth <= MAX_DEPTH:
            raise ViewError(f"neighbourhood depth must be between 1 and {MAX_DEPTH}, not {self.depth}")
        if self.min_degree < 0 or self.min_weight < 0:
            raise ViewError("minimum degree and edge weight cannot be negative")
        if self.years is not None and self.years[0] > self.years[1]:
            raise ViewError(f"the year range {self.years[0]}–{self.years[1]} is empty")
        if self.color_by not in COLOR_BY:
            raise ViewError(f"colour by must be one of {COLOR_BY}, not {self.color_by!r}")
        return self

    def narrowed_by(self) -> list[str]:
        """The filters (search apart) that narrow the view, for the folded filter box's label: "2 entity types"."""
        counted = [(len(self.types), "entity type"), (len(self.doc_ids), "paper"), (len(self.communities), "community")]
        out = [f"{n} {what if n == 1 else 'communities' if what == 'community' else what + 's'}"
               for n, what in counted if n]
        if self.years is not None:
            out.append(f"years {self.years[0]}–{self.years[1]}")
        if self.min_degree:
            out.append(f"≥ {self.min_degree} relations")
        if self.min_weight:
            out.append(f"edge weight ≥ {self.min_weight:g}")
        if self.focus:
            out.append(f"neighbourhood, depth {self.depth}")
        return out


@dataclass
class ViewNode:
    key: str
    name: str
    type: str
    community: int | None
    degree: int
    doc_ids: tuple[str, ...]
    distance: int | None = None  # hops from the focus entity
    x: float | None = None  # static layout, for large views
    y: float | None = None

    @property
    def is_paper(self) -> bool:
        return self.key.startswith(PAPER_PREFIX)


@dataclass
class ViewEdge:
    source: str
    target: str
    relation: str
    weight: float


@dataclass
class GraphView:
    nodes: list[ViewNode]
    edges: list[ViewEdge]
    matched: int  # nodes that passed the filters, before the cut to max_nodes
    truncated: bool
    note: str  # what is shown, and the rule that cut it
    static_layout: bool
    focus: str = ""
    timings: dict[str, float] = field(default_factory=dict)


def _passes(node: IndexNode, f: ViewFilters, degree: int, types: set, docs: set, communities: set) -> bool:
    if node.is_paper:
        if not f.include_papers or (docs and node.key[len(PAPER_PREFIX):] not in docs):
            return False
    else:
        if types and node.type not in types:
            return False
        if docs and docs.isdisjoint(node.doc_ids):
            return False
        if communities and node.community not in communities:
            return False
        if degree < f.min_degree:
            return False
    if f.years is not None and not any(f.years[0] <= y <= f.years[1] for y in node.years):
        return False
    return True


def _neighbours(index: GraphIndex, key: str, f: ViewFilters) -> Iterable[str]:
    for other, weight in index.related.get(key, {}).items():
        if weight >= f.min_weight:
            yield other
    if f.include_papers:
        yield from index.mentions.get(key, {})


def build_view(index: GraphIndex, filters: ViewFilters, config: ExplorerConfig | None = None) -> GraphView:
    config = config or ExplorerConfig()
    f = filters.validate(config)
    overview = f.overview and not f.focus and not f.search.strip()
    if overview:
        f = dataclasses.replace(f, include_papers=True)  # the papers are what the overview is organised around
    started = time.perf_counter()
    types, docs, communities = set(f.types), set(f.doc_ids), set(f.communities)

    def ok(key: str) -> bool:
        node = index.nodes.get(key)
        return node is not None and _passes(node, f, index.degree(key), types, docs, communities)

    distance: dict[str, int] = {}
    searched: list[tuple[str, float]] = []
    if f.focus:
        if f.focus not in index.nodes:
            raise ViewError("the chosen entity is no longer in the graph (merged or deleted?)")
        distance[f.focus] = 0
        queue = deque([f.focus])
        while queue:  # breadth-first within the filtered graph: a filtered-out node is not walked through
            key = queue.popleft()
            if distance[key] >= f.depth:
                continue
            for other in _neighbours(index, key, f):
                if other not in distance and ok(other):
                    distance[other] = distance[key] + 1
                    queue.append(other)
        candidates = list(distance)
    elif f.search.strip():
        searched = [(k, s) for k, s in index.search(f.search) if ok(k)]
        candidates = [k for k, _ in searched]
    elif overview:
        candidates, overview_note = _overview(index, f, ok)
    else:
        candidates = [k for k in index.nodes if ok(k)]
    t_filter = time.perf_counter()

    if f.focus:
        rank = lambda k: (distance[k], -index.degree(k), index.nodes[k].name.casefold(), k)  # noqa: E731
        rule = "nearest to the chosen entity first, then the most connected"
    elif searched:
        score = dict(searched)
        rank = lambda k: (-score[k], -index.degree(k), index.nodes[k].name.casefold(), k)  # noqa: E731
        rule = "best name matches first"
    else:
        rank = lambda k: (-index.degree(k), index.nodes[k].name.casefold(), k)  # noqa: E731
        rule = "the most connected first (ties by name)"
    chosen = heapq.nsmallest(f.max_nodes, candidates, key=rank) if len(candidates) > f.max_nodes else \
        sorted(candidates, key=rank)
    keep = set(chosen)

    edges: list[ViewEdge] = []
    for key in chosen:
        for other, weight in index.related.get(key, {}).items():
            if key < other and other in keep and weight >= f.min_weight:
                edges.append(ViewEdge(key, other, "RELATED", weight))
        if f.include_papers and not key.startswith(PAPER_PREFIX):
            for paper, weight in index.mentions.get(key, {}).items():
                if paper in keep:
                    edges.append(ViewEdge(key, paper, index.paper_relations.get((key, paper), MENTIONED_IN),
                                          weight))
        if f.include_papers and key.startswith(PAPER_PREFIX):  # the library's own citations, paper to paper
            for other, weight in index.mentions.get(key, {}).items():
                if other in keep and index.paper_relations.get((key, other)) == CITES:
                    edges.append(ViewEdge(key, other, CITES, weight))
    t_edges = time.perf_counter()

    nodes = [ViewNode(key=k, name=index.nodes[k].name, type=index.nodes[k].type, community=index.nodes[k].community,
                      degree=index.degree(k), doc_ids=index.nodes[k].doc_ids, distance=distance.get(k))
             for k in chosen]
    static = len(nodes) > config.static_layout_above
    if static:
        for node, (x, y) in zip(nodes, static_layout([n.key for n in nodes], [(e.source, e.target) for e in edges])):
            node.x, node.y = x, y
    t_layout = time.perf_counter()

    truncated = len(candidates) > len(chosen)
    what = "nodes" if f.include_papers else "entities"
    if overview and candidates:
        note = overview_note + (f" (cut to {f.max_nodes:,} nodes, most connected first)." if truncated else ".")
    elif not candidates:
        note = "Nothing matches these filters." if not f.search.strip() else \
            f"No entity matches “{f.search.strip()}” with these filters (names, aliases and close spellings)."
    elif truncated:
        note = (f"Showing {len(chosen):,} of {len(candidates):,} {what} that match the filters "
                f"(maximum {f.max_nodes:,}): {rule}.")
    else:
        note = f"Showing all {len(chosen):,} {what} that match the filters."
    if len(searched) >= SEARCH_LIMIT:
        note += f" The search keeps its {SEARCH_LIMIT} best matches: type more of the name to narrow it."
    if f.focus:
        note += f" Neighbourhood of {index.nodes[f.focus].name} at depth {f.depth}."
    if static:
        note += " Large view: positions computed on the server, physics off."
    return GraphView(nodes=nodes, edges=edges, matched=len(candidates), truncated=truncated, note=note,
                     static_layout=static, focus=f.focus,
                     timings={"filter_s": t_filter - started, "rank_edges_s": t_edges - t_filter,
                              "layout_s": t_layout - t_edges, "total_s": t_layout - started})


def static_layout(keys: list[str], pairs: list[tuple[str, str]], seed: int = 7) -> list[tuple[float, float]]:
    """Positions in vis-network's pixel space: connected nodes by force-directed layout, nodes without an edge in
    the view on a grid below them (left to the forces they would fly to the edges and shrink everything else)."""
    import random

    import igraph

    if not keys:
        return []
    ends = {k for pair in pairs for k in pair}
    linked = [k for k in keys if k in ends]
    position = {k: i for i, k in enumerate(linked)}
    out: dict[str, tuple[float, float]] = {}
    width = 90.0 * max(len(keys), 1) ** 0.5  # ~90 px per node along each axis
    if linked:
        graph = igraph.Graph(n=len(linked), edges=[(position[a], position[b]) for a, b in pairs])
        rng = random.Random(seed)  # a seeded start: the same view is laid out the same way every time
        # igraph's grid variant only repels nodes in nearby cells: 0.4 s instead of 20 s at 5,000 nodes, but only
        # when the start is spread over about sqrt(n) units (all nodes in one cell is the quadratic case again).
        spread = len(linked) ** 0.5
        start = [(rng.uniform(-spread, spread), rng.uniform(-spread, spread)) for _ in linked]
        coords = graph.layout_fruchterman_reingold(seed=start, niter=300,
                                                   grid=len(linked) > GRID_LAYOUT_ABOVE).coords
        # Scale by the bulk of the nodes, not by the few small components pushed far out, then pull those in.
        xs, ys = sorted(c[0] for c in coords), sorted(c[1] for c in coords)
        lo, hi = int(len(xs) * 0.02), max(int(len(xs) * 0.98) - 1, 0)
        span = max(xs[hi] - xs[lo], ys[hi] - ys[lo], 1e-9)
        cx, cy = (xs[hi] + xs[lo]) / 2, (ys[hi] + ys[lo]) / 2
        side = 90.0 * len(linked) ** 0.5
        limit = side * 0.6
        for key, (x, y) in zip(linked, coords):
            px, py = (x - cx) / span * side, (y - cy) / span * side
            out[key] = (max(-limit, min(limit, px)), max(-limit, min(limit, py)))
        width = side
    alone = [k for k in keys if k not in out]
    if alone:
        columns = max(int(len(alone) ** 0.5 * 2), 1)
        step = max(width / columns, 60.0)
        top = (max(y for _, y in out.values()) + 150.0) if out else 0.0
        for i, key in enumerate(alone):
            out[key] = (-width / 2 + (i % columns) * step, top + (i // columns) * 60.0)
    return [out[k] for k in keys]


# The page keeps its filters in the URL (?view=…), so a reload or a shared link comes back to the same view. The
# parameter is untrusted input: only known fields of the right type are taken, everything else is dropped.
VIEW_STATE_FIELDS: dict[str, type] = {"search": str, "types": list, "papers": list, "communities": list,
                                      "years": list, "min_degree": int, "min_weight": float, "max_nodes": int,
                                      "color_by": str, "include_papers": bool, "neighbourhood": bool, "depth": int,
                                      "overview": bool}


def encode_view_state(values: dict) -> str:
    import json

    return json.dumps({k: v for k, v in values.items() if k in VIEW_STATE_FIELDS}, separators=(",", ":"),
                      sort_keys=True, default=list)


def decode_view_state(text: str) -> dict:
    import json

    try:
        data = json.loads(text or "{}")
    except (ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    out = {}
    for key, kind in VIEW_STATE_FIELDS.items():
        value = data.get(key)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            if kind is list:
                value = [v for v in value[:500] if isinstance(v, (str, int)) and not isinstance(v, bool)]
            if kind is str:
                value = value[:300]
            out[key] = value
    return out


def _overview(index: GraphIndex, f: ViewFilters, ok) -> tuple[list[str], str]:
    """The papers that pass the filters and the most connected entities of each (ties by name), as many per
    paper as `max_nodes` allows within OVERVIEW_PER_PAPER; with more papers than that allows, the papers with
    the most entities. Returns the keys and the note saying what is shown."""
    by_paper: dict[str, list[str]] = {}
    for key, node in index.nodes.items():
        if not node.is_paper and ok(key):
            for doc_id in node.doc_ids:
                by_paper.setdefault(PAPER_PREFIX + doc_id, []).append(key)
    papers = [p for p in by_paper if ok(p)]
    low, high = OVERVIEW_PER_PAPER
    if len(papers) * (1 + low) > f.max_nodes:
        papers = sorted(papers, key=lambda p: (-len(by_paper[p]), p))[:max(f.max_nodes // (1 + low), 1)]
    per_paper = max(low, min(high, (f.max_nodes - len(papers)) // max(len(papers), 1)))
    rank = lambda k: (-index.degree(k), index.nodes[k].name.casefold(), k)  # noqa: E731
    chosen: dict[str, None] = {}
    for paper in papers:
        chosen[paper] = None
        for key in heapq.nsmallest(per_paper, by_paper[paper], key=rank):
            chosen[key] = None
    entities = sum(1 for k in chosen if not k.startswith(PAPER_PREFIX))
    total = len({k for keys in by_paper.values() for k in keys})
    shared = sum(1 for k in chosen if not k.startswith(PAPER_PREFIX)
                 and sum(PAPER_PREFIX + d in chosen for d in index.nodes[k].doc_ids) > 1)
    note = (f"Overview: {len(papers):,} paper(s) and the {per_paper} most connected entities of each — "
            f"{entities:,} of {total:,} entities, {shared:,} of them in more than one paper")
    return list(chosen), note
