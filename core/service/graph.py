"""An entity's neighbourhood in the graph (the entities and papers it is linked to, and the passages it was
extracted from) and the shortest paths between two entities (each link with the passage that states it), with
citations, so an assistant can say what connects two things and where it is written."""
from __future__ import annotations

from core.graph.merge import normalize_key
from core.library import Library
from core.presentation.graph.graph_index import load_index
from core.presentation.graph.paths import MAX_PATHS, explain_connection
from core.schema.graph import PAPER_PREFIX, RELATED, GraphNode
from core.service import citations
from core.service.errors import not_found
from core.service.inputs import bounded, clean_text
from core.service.records import Citation, GraphPaths, Hop, Neighbour, Neighbourhood

MAX_NEIGHBOURS = 100
MAX_CITATIONS = 5
MAX_NAME_CHARS = 300


def find_entity(lib: Library, name: str) -> GraphNode:
    """The entity named `name` (any spelling that normalises to its key, an alias merged into it, or its key)."""
    name = clean_text(name, "entity name", MAX_NAME_CHARS)
    key = normalize_key(name)
    candidates = [name] if name.startswith(PAPER_PREFIX) else [key]
    if key and (canonical := lib.graph_sources.aliases().get(key)):
        candidates.append(canonical)
    for candidate in candidates:
        if candidate and (node := lib.graph.get_node(candidate)) is not None:
            return node
    raise not_found(f"no entity named {name[:80]!r} in this workspace's graph (search_papers finds passages "
                    "by meaning; an entity must be named as the papers name it)")


def neighbours(lib: Library, name: str, limit: int = 20) -> Neighbourhood:
    bounded(limit, "limit", 1, MAX_NEIGHBOURS)
    node = find_entity(lib, name)
    edges = lib.graph.node_edges(node.key)
    others = lib.graph.get_nodes([e.target if e.source == node.key else e.source for e in edges])
    found = []
    for edge in edges:
        other_key = edge.target if edge.source == node.key else edge.source
        other = others.get(other_key)
        found.append(Neighbour(key=other_key, name=other.name if other else other_key,
                               type=other.type if other else "", relation=edge.relation,
                               weight=round(float(edge.weight), 4), description=(edge.description or "")[:400]))
    found.sort(key=lambda n: (n.relation != RELATED, -n.weight, n.name.casefold()))
    titles = {d.id: d.display_title for d in lib.documents.list()}
    chunks = lib.chunks.get_many(node.source_chunks[:MAX_CITATIONS])
    cited = [citations.from_chunk(lib, chunk, n, titles.get(chunk.doc_id, chunk.doc_id[:12]), cue=node.name)
             for n, chunk in enumerate((chunks[c] for c in node.source_chunks[:MAX_CITATIONS] if c in chunks), 1)]
    return Neighbourhood(key=node.key, name=node.name, type=node.type, description=(node.description or "")[:1000],
                         papers=[{"id": d, "title": titles.get(d, d[:12])} for d in node.doc_ids],
                         neighbours=found[:limit], citations=cited, more_neighbours=max(len(found) - limit, 0))


def paths(lib: Library, source: str, target: str, k: int = MAX_PATHS) -> GraphPaths:
    """Up to k shortest paths between two entities (core.presentation.graph.paths.explain_connection)."""
    bounded(k, "k", 1, 10)
    a, b = find_entity(lib, source), find_entity(lib, target)
    found = explain_connection(lib, load_index(lib), a.key, b.key, k=k) if a.key != b.key else []
    by_chunk: dict[str, Citation] = {}
    chunks = lib.chunks.get_many([h.passage.chunk_id for p in found for h in p.hops if h.passage])
    out = []
    for path in found:
        hops = []
        for hop in path.hops:
            n = None
            if hop.passage and (chunk := chunks.get(hop.passage.chunk_id)) is not None:
                if chunk.id not in by_chunk:
                    cite = citations.from_chunk(lib, chunk, len(by_chunk) + 1, hop.passage.paper)
                    cite.quote = hop.passage.text[:citations.QUOTE_CHARS]  # the sentence naming both ends
                    by_chunk[chunk.id] = cite
                n = by_chunk[chunk.id].n
            hops.append(Hop(source=hop.source_name, target=hop.target_name,
                            relation_description=(hop.description or "")[:400], citation=n))
        out.append(hops)
    return GraphPaths(source=a.name, target=b.name, paths=out, citations=list(by_chunk.values()))
