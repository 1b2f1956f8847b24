"""Fixing what the extractor got wrong: rename an entity, change its type, delete an entity or a relation.

Every edit is an override in the provenance store (core.schema.overrides), and what it changes is marked dirty and
rebuilt at once, so the graph, its vectors and later rebuilds agree: a paper ingested afterwards that mentions a
deleted entity does not bring it back, and a renamed entity keeps its new name. Merging is
core.pipeline.graph.duplicates.merge_entities (it re-keys contributions and records an alias). Paper nodes stand for the
papers themselves and are not editable.
"""
from __future__ import annotations

from dataclasses import dataclass

from core.graph.merge import normalize_key
from core.library import Library
from core.pipeline.graph.build import rebuild_dirty
from core.schema.graph import PAPER_PREFIX, RELATED, GraphEdge, GraphNode, paper_key
from core.schema.overrides import DELETED, RENAME, RETYPE, Override

MAX_NAME_CHARS = 200
MAX_TYPE_CHARS = 40


class EditError(ValueError):
    """An edit that cannot be made; the message says why and nothing was changed."""


@dataclass
class EditRecord:
    """One edit as the page lists it (with names resolved for display)."""

    override: Override
    summary: str


def _entity(lib: Library, key: str) -> GraphNode:
    if key.startswith(PAPER_PREFIX):
        raise EditError("a paper node stands for the paper itself and cannot be edited; delete the paper on the "
                        "Library page instead")
    node = lib.graph.get_node(key)
    if node is None:
        raise EditError(f"no entity with the key {key!r} (it may have been merged or deleted)")
    return node


def _clean(text: str, what: str, limit: int) -> str:
    cleaned = " ".join(str(text or "").split())
    if not cleaned:
        raise EditError(f"the new {what} is empty")
    if len(cleaned) > limit:
        raise EditError(f"the new {what} is longer than {limit} characters")
    return cleaned


def _relation_pairs(lib: Library, key: str) -> list[tuple[str, str]]:
    return [e.pair for e in lib.graph.node_edges(key) if e.relation == RELATED]


def rename_entity(lib: Library, key: str, new_name: str) -> GraphNode:
    """Show the entity under `new_name`. Later papers that write the new name join this entity too, unless that
    name is already another entity's (then merging is the right edit)."""
    node = _entity(lib, key)
    name = _clean(new_name, "name", MAX_NAME_CHARS)
    new_key = normalize_key(name)
    if not new_key:
        raise EditError(f"{name!r} has no letters or digits to name an entity by")
    alias = None
    if new_key != key:
        other_key = lib.graph_sources.aliases().get(new_key, new_key)
        other = lib.graph.get_node(other_key) if other_key != key else None
        if other is not None:
            raise EditError(f"{name!r} is already the name of the entity {other.name!r}: merge the two instead")
        if not lib.graph_sources.has_sources(new_key) and other_key == new_key:
            alias = (new_key, key)
    lib.graph_sources.put_override(Override("node", key, "", RENAME, name), nodes=[key],
                                   edges=_relation_pairs(lib, node.key), alias=alias)
    rebuild_dirty(lib)
    return lib.graph.get_node(key)


def retype_entity(lib: Library, key: str, new_type: str) -> GraphNode:
    _entity(lib, key)
    type_ = _clean(new_type, "type", MAX_TYPE_CHARS).lower()
    if type_ == "paper":
        raise EditError("'paper' is reserved for paper nodes")
    lib.graph_sources.put_override(Override("node", key, "", RETYPE, type_), nodes=[key])
    rebuild_dirty(lib)
    return lib.graph.get_node(key)


def delete_entity(lib: Library, key: str) -> None:
    """Remove the entity and its edges, now and whenever a paper mentions it again."""
    _entity(lib, key)
    edges = [e.pair for e in lib.graph.node_edges(key)]
    lib.graph_sources.put_override(Override("node", key, "", DELETED, "1"), nodes=[key], edges=edges)
    rebuild_dirty(lib)


def delete_relation(lib: Library, source: str, target: str) -> None:
    """Remove a relation between two entities, now and whenever a paper states it again."""
    pair = tuple(sorted((source, target)))
    edge: GraphEdge | None = lib.graph.get_edge(*pair)
    if pair[0].startswith(PAPER_PREFIX) or pair[1].startswith(PAPER_PREFIX):
        raise EditError("an edge to a paper records where the entity occurs; delete the entity instead")
    if edge is None or edge.relation != RELATED:
        raise EditError("no relation between these two entities")
    lib.graph_sources.put_override(Override("edge", pair[0], pair[1], DELETED, "1"), edges=[pair])
    rebuild_dirty(lib)


def undo_edit(lib: Library, override: Override) -> bool:
    """Take an edit back: the node or edge is merged again from what the papers say."""
    if override.kind == "edge":
        nodes, edges = [], [(override.a, override.b)]
    else:
        key = override.a
        nodes = [key]
        edges = lib.graph_sources.relation_pairs_of(key) + [(key, paper_key(d))
                                                           for d in lib.graph_sources.docs_of(key)]
    removed = lib.graph_sources.remove_override(override.kind, override.a, override.b, override.field,
                                                nodes=nodes, edges=edges)
    if removed:
        rebuild_dirty(lib)
    return removed


def list_edits(lib: Library) -> list[EditRecord]:
    overrides = lib.graph_sources.overrides()
    keys = {k for o in overrides for k in (o.a, o.b) if k}
    names = {k: n.name for k, n in lib.graph.get_nodes(keys).items()}

    def shown(key: str) -> str:
        return names.get(key, key)

    out = []
    for o in overrides:
        if o.kind == "edge":
            summary = f"deleted the relation {shown(o.a)} — {shown(o.b)}"
        elif o.field == DELETED:
            summary = f"deleted the entity {o.a}"
        elif o.field == RENAME:
            summary = f"renamed {o.a} to {o.value}"
        else:
            summary = f"{shown(o.a)}: type set to {o.value}"
        out.append(EditRecord(override=o, summary=summary))
    return out
