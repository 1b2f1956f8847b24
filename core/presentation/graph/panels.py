"""What the Graph page shows about one entity or one relation: its record, its papers, the passages it comes from
(with paper and page, for a link to the page view) and its neighbours. Plain data; the page only lays it out."""
from __future__ import annotations

from dataclasses import dataclass, field

from core.library import Library
from core.presentation.graph.graph_index import GraphIndex
from core.presentation.graph.paths import Passage, chunk_passages
from core.schema.graph import PAPER_PREFIX, RELATED, GraphEdge, GraphNode

MAX_PASSAGES = 8
MAX_NEIGHBOURS = 60


@dataclass
class Neighbour:
    key: str
    name: str
    type: str
    relation: str
    weight: float


@dataclass
class EntityPanel:
    node: GraphNode
    degree: int
    papers: list[tuple[str, str]]  # (doc id, title)
    passages: list[Passage]
    neighbours: list[Neighbour]
    more_passages: int = 0
    more_neighbours: int = 0


@dataclass
class EdgePanel:
    edge: GraphEdge
    source_name: str
    target_name: str
    papers: list[tuple[str, str]] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)


def _papers(index: GraphIndex, doc_ids: list[str]) -> list[tuple[str, str]]:
    return [(d, index.paper_titles.get(d, d[:12])) for d in doc_ids]


def entity_panel(lib: Library, index: GraphIndex, key: str) -> EntityPanel | None:
    node = lib.graph.get_node(key)
    if node is None:
        return None
    names = [node.name] + [alias for alias, canonical in index.aliases.items() if canonical == key][:3]
    chunk_ids = node.source_chunks[:MAX_PASSAGES]
    passages = chunk_passages(lib, chunk_ids, names)
    neighbours = []
    for edge in lib.graph.node_edges(key):
        other = edge.target if edge.source == key else edge.source
        info = index.nodes.get(other)
        neighbours.append(Neighbour(key=other, name=info.name if info else other, type=info.type if info else "",
                                    relation=edge.relation, weight=edge.weight))
    neighbours.sort(key=lambda n: (n.relation != RELATED, -n.weight, n.name.casefold()))
    return EntityPanel(node=node, degree=index.degree(key), papers=_papers(index, node.doc_ids), passages=passages,
                       neighbours=neighbours[:MAX_NEIGHBOURS],
                       more_passages=max(len(node.source_chunks) - len(chunk_ids), 0),
                       more_neighbours=max(len(neighbours) - MAX_NEIGHBOURS, 0))


def edge_panel(lib: Library, index: GraphIndex, source: str, target: str) -> EdgePanel | None:
    edge = lib.graph.get_edge(source, target) or lib.graph.get_edge(target, source)
    if edge is None:
        return None
    names = [index.nodes[k].name if k in index.nodes else k for k in (edge.source, edge.target)]
    # An edge to a paper: where the entity occurs in it; a relation between entities: where both ends do.
    wanted = names[:1] if edge.target.startswith(PAPER_PREFIX) else names
    passages = chunk_passages(lib, edge.source_chunks[:MAX_PASSAGES], wanted)
    return EdgePanel(edge=edge, source_name=names[0], target_name=names[1], papers=_papers(index, edge.doc_ids),
                     passages=passages)


def neighbourhood_papers(index: GraphIndex, panel: EntityPanel) -> list[str]:
    """The papers around an entity, for a BibTeX export: those whose passages mention it (a paper node: itself),
    then those its listed neighbours come from (a neighbouring paper node: that paper), each once, in that order."""
    out = [panel.node.key[len(PAPER_PREFIX):]] if panel.node.key.startswith(PAPER_PREFIX) else []
    out += [d for d, _ in panel.papers]
    for n in panel.neighbours:
        if n.key.startswith(PAPER_PREFIX):
            out.append(n.key[len(PAPER_PREFIX):])
        elif n.key in index.nodes:
            out += index.nodes[n.key].doc_ids
    return [d for d in dict.fromkeys(out) if d in index.paper_titles]
