"""Explain a connection: the shortest chains of relations between two entities, each hop with the passage that
supports it, so a researcher can check every step in the paper it comes from.

Paths run over the entity graph (RELATED edges; paper nodes would connect everything that two papers mention).
The search is breadth-first from both ends to find the distance, then `networkx.shortest_simple_paths` runs on
the few nodes that can lie on a path at most two hops longer, never on the whole graph.
"""
from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field

import networkx as nx

from core.library import Library
from core.presentation.graph.graph_index import GraphIndex
from core.schema.graph import GraphEdge

MAX_PATHS = 3
MAX_HOPS = 6
PASSAGE_CHARS = 420
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")


@dataclass
class Passage:
    doc_id: str
    paper: str  # title
    page: int | None  # 0-based page of the chunk's first page
    chunk_id: str
    text: str


@dataclass
class Hop:
    source: str
    target: str
    source_name: str
    target_name: str
    description: str
    keywords: str
    weight: float
    passage: Passage | None


@dataclass
class ConnectionPath:
    keys: list[str]
    hops: list[Hop] = field(default_factory=list)

    @property
    def length(self) -> int:
        return len(self.keys) - 1


def _distances(index: GraphIndex, start: str, limit: int) -> dict[str, int]:
    seen = {start: 0}
    queue = deque([start])
    while queue:
        key = queue.popleft()
        if seen[key] >= limit:
            continue
        for other in index.related.get(key, {}):
            if other not in seen:
                seen[other] = seen[key] + 1
                queue.append(other)
    return seen


def shortest_paths(index: GraphIndex, source: str, target: str, k: int = MAX_PATHS,
                   max_hops: int = MAX_HOPS) -> list[list[str]]:
    """Up to k simple paths from source to target, shortest first (at most max_hops long)."""
    if source == target or source not in index.related or target not in index.related:
        return []
    from_source, from_target = _distances(index, source, max_hops), _distances(index, target, max_hops)
    best = min((from_source[n] + from_target[n] for n in from_source.keys() & from_target.keys()), default=None)
    if best is None or best > max_hops:
        return []
    slack = min(best + 2, max_hops)  # room for the 2nd and 3rd paths, which may be a hop or two longer
    ball = {n for n in from_source.keys() & from_target.keys() if from_source[n] + from_target[n] <= slack}
    graph = nx.Graph()
    graph.add_nodes_from(ball)
    graph.add_edges_from((a, b) for a in ball for b in index.related.get(a, {}) if b in ball and a < b)
    paths: list[list[str]] = []
    for path in nx.shortest_simple_paths(graph, source, target):
        if len(path) - 1 > max_hops or len(paths) >= k:
            break
        paths.append(path)
    return paths


def supporting_passage(text: str, names: list[str], limit: int = PASSAGE_CHARS) -> str:
    """The sentence of a chunk that names most of `names` (and its neighbour when short): what states the link."""
    sentences = [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]
    if not sentences:
        return ""
    wanted = [n.casefold() for n in names if n]

    def score(i: int) -> tuple[int, int]:
        folded = sentences[i].casefold()
        return (sum(n in folded for n in wanted), -i)

    best = max(range(len(sentences)), key=score)
    passage = sentences[best]
    if len(passage) < 120 and best + 1 < len(sentences):
        passage = f"{passage} {sentences[best + 1]}"
    return passage if len(passage) <= limit else passage[:limit - 1].rstrip() + "…"


def edge_passages(lib: Library, edge: GraphEdge, names: list[str], limit: int = 5) -> list[Passage]:
    """The passages of the chunks an edge comes from (the first `limit`), the best sentence of each."""
    return chunk_passages(lib, edge.source_chunks[:limit], names)


def chunk_passages(lib: Library, chunk_ids: list[str], names: list[str]) -> list[Passage]:
    chunks = lib.chunks.get_many(chunk_ids)
    titles = {d.id: d.display_title for d in lib.documents.list()}
    out = []
    for chunk_id in chunk_ids:
        chunk = chunks.get(chunk_id)
        if chunk is None:
            continue
        out.append(Passage(doc_id=chunk.doc_id, paper=titles.get(chunk.doc_id, chunk.doc_id[:12]),
                           page=chunk.pages[0] if chunk.pages else None, chunk_id=chunk.id,
                           text=supporting_passage(chunk.text, names)))
    return out


def explain_connection(lib: Library, index: GraphIndex, source: str, target: str,
                       k: int = MAX_PATHS) -> list[ConnectionPath]:
    """Up to k shortest paths between two entities, every hop with its relation and supporting passage."""
    paths = shortest_paths(index, source, target, k=k)
    pairs = {tuple(sorted(p)) for path in paths for p in zip(path, path[1:])}
    edges = lib.graph.get_edges(pairs)
    out = []
    for path in paths:
        connection = ConnectionPath(keys=path)
        for a, b in zip(path, path[1:]):
            edge = edges.get(tuple(sorted((a, b))))
            na, nb = index.nodes[a].name, index.nodes[b].name
            passages = edge_passages(lib, edge, [na, nb]) if edge else []
            # The passage that names both ends states the link best; ties go to the earliest.
            passages.sort(key=lambda p: -sum(n.casefold() in p.text.casefold() for n in (na, nb)))
            connection.hops.append(Hop(source=a, target=b, source_name=na, target_name=nb,
                                       description=edge.description if edge else "",
                                       keywords=edge.keywords if edge else "", weight=edge.weight if edge else 0.0,
                                       passage=passages[0] if passages else None))
        out.append(connection)
    return out
