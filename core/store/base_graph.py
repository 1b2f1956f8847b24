"""The graph's storage contracts (re-exported by core.store.base, where callers import them from): the merged
graph, the provenance it is rebuilt from, and what the community refresh keeps between runs."""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple, Protocol

import numpy as np

from core.schema.graph import (
    ChunkExtraction,
    EntitySource,
    GraphEdge,
    GraphNode,
    PaperRecord,
    Reference,
    RelationSource,
)
from core.schema.overrides import Override


class GraphStore(Protocol):
    """The merged entity graph (LightRAG's BaseGraphStorage). Edges are keyed by (source, target): RELATED edges
    are undirected with source < target, MENTIONED_IN edges go from an entity to a paper node."""

    def get_node(self, key: str) -> GraphNode | None: ...

    def get_nodes(self, keys: Iterable[str]) -> dict[str, GraphNode]: ...

    def get_edge(self, source: str, target: str) -> GraphEdge | None: ...

    def get_edges(self, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], GraphEdge]: ...

    def node_edges(self, key: str) -> list[GraphEdge]: ...

    def edges_of(self, keys: Iterable[str]) -> list[GraphEdge]:
        """Every edge touching any of the keys, each once."""

    def degrees(self, keys: Iterable[str]) -> dict[str, int]: ...

    def apply(self, upsert_nodes: Sequence[GraphNode] = (), upsert_edges: Sequence[GraphEdge] = (),
              delete_nodes: Sequence[str] = (), delete_edges: Sequence[tuple[str, str]] = ()) -> None:
        """One atomic batch: either all of it is visible afterwards or none of it. Deleting a node deletes
        its edges."""

    def set_communities(self, assignment: dict[str, int | None], keep_others: bool = False) -> None:
        """Nodes' communities; the nodes it does not name lose theirs, unless `keep_others` (an incremental
        refresh names only the nodes of the communities it recomputed)."""

    def counts(self) -> tuple[int, int]:
        """Nodes and edges."""

    def has_nodes(self) -> bool:
        """Whether the graph has any node: checked at every question by the graph modes, so never a count."""

    def version(self) -> str:
        """A token that changes whenever the graph does (apply, set_communities, clear), cheap to read: caches of
        the whole graph (core.graph.mention_index) check it at every question. SQLite counts its writes; Neo4j
        gives its counts for now, so there an edit that keeps both counts goes unseen until the graph sources'
        version moves (as every rebuild from them does)."""

    def all_nodes(self) -> Iterator[GraphNode]: ...

    def all_edges(self) -> Iterator[GraphEdge]: ...

    def edge_outline(self) -> Iterator[tuple[str, str, str, float]]:
        """(source, target, relation, weight) of every edge: what a whole-graph view needs, without the
        descriptions and provenance lists that make `all_edges` several times slower."""

    def clear(self) -> None: ...


class GraphSources(Protocol):
    """The provenance the merged graph is rebuilt from (core.graph.merge): raw per-chunk extractions,
    per-chunk contributions to entities and relations, aliases from merges, the dirty set, paper records,
    bibliography entries, community reports and manual overrides. A change and the marking of what it touched
    commit together, so rebuilding the dirty set after a crash is enough."""

    # --- raw extractions, kept so the graph can be rebuilt without extracting again
    def extracted(self, doc_id: str, extractor: str) -> dict[str, str]:
        """chunk id → text hash of the chunks this extractor already did for the document."""

    def put_extraction(self, doc_id: str, ord_: int, sha: str, extraction: ChunkExtraction) -> None: ...

    def extractions(self, doc_id: str) -> list[tuple[int, ChunkExtraction]]: ...

    def forget_extractions(self, doc_id: str, keep_chunk_ids: Iterable[str] = ()) -> None: ...

    def clear(self, keep_extractions: bool = True) -> None:
        """Forget every contribution, alias, paper record and report (the graph is rebuilt from extractions)."""

    # --- contributions and the dirty set
    def replace_doc(self, doc_id: str, entities: Sequence[EntitySource], relations: Sequence[RelationSource],
                    paper: PaperRecord | None, references: Sequence[Reference] = (),
                    phrases: Sequence[tuple[str, str]] = ()) -> None:
        """Swap a document's contributions (None/empty: remove them) and mark everything touched, atomically;
        `phrases` are its (chunk id, phrase key) pairs, for retrieval only (core/store/sqlite_phrases.py)."""

    def dirty(self) -> tuple[list[str], list[tuple[str, str]]]:
        """Node keys and edge pairs whose merged form must be rebuilt."""

    def clear_dirty(self, nodes: Sequence[str], edges: Sequence[tuple[str, str]], upto: int | None = None) -> None:
        """Unmark; with `upto` (the `meta("version")` read before the sources were), only marks made up to it."""

    def mark_dirty(self, nodes: Iterable[str] = (), edges: Iterable[tuple[str, str]] = ()) -> None: ...

    # --- what each document left, for deletes and the garbage collector
    def doc_ids(self) -> set[str]:
        """Every document with an extraction, a contribution, a paper record or a bibliography entry."""

    def doc_row_counts(self, doc_ids: Iterable[str]) -> dict[str, int]:
        """Rows of these documents per kind: extractions, entity_sources, relation_sources, papers, references,
        phrases."""

    def entity_sources(self, keys: Iterable[str]) -> dict[str, list[EntitySource]]: ...

    def chunk_phrases(self) -> dict[str, list[str]]:
        """chunk id → every candidate phrase key its text mentions (terms or not): the retrieval walks' phrase
        layer, never shown. Empty for chunks of the LLM extractor and for graphs built before phrases existed."""

    def relation_sources(self, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], list[RelationSource]]: ...

    def has_sources(self, key: str) -> bool: ...

    def relation_pairs_of(self, key: str) -> list[tuple[str, str]]:
        """Every relation pair with a contribution touching `key` (whether or not its edge is in the graph)."""

    def docs_of(self, key: str) -> list[str]: ...

    def mentions(self, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], list[str]]:
        """(entity key, doc id) → the chunk ids of that document where the entity occurs."""

    # --- aliases from merges
    def aliases(self) -> dict[str, str]: ...

    def merge_keys(self, keys: Sequence[str], canonical: str) -> None:
        """Re-key every contribution of `keys` to `canonical` and remember the aliases."""

    # --- papers, references, community reports, metadata
    def papers(self, doc_ids: Iterable[str] | None = None) -> dict[str, PaperRecord]:
        """The graph's record of each paper (all, or those of `doc_ids`: a merge reads only the papers it
        touches, not the whole collection)."""

    def references(self, doc_id: str) -> list[Reference]: ...

    def put_community_reports(self, reports: Sequence[dict], version: str) -> None: ...

    def has_community_reports(self) -> bool: ...

    def community_reports(self) -> list[dict]: ...

    def meta(self, key: str, default: str = "") -> str: ...

    # --- manual edits
    def put_override(self, override: Override, nodes: Iterable[str] = (),
                     edges: Iterable[tuple[str, str]] = (), alias: tuple[str, str] | None = None) -> None:
        """Record an edit and mark what it changes dirty (and an alias a rename brings), in one transaction."""

    def remove_override(self, kind: str, a: str, b: str, field: str, nodes: Iterable[str] = (),
                        edges: Iterable[tuple[str, str]] = ()) -> bool: ...

    def overrides(self) -> list[Override]: ...


class VectorRow(NamedTuple):
    """One embedded text of a community report: its community, its place (0 the report, then findings), the hash
    of the text and its vector."""
    community: int
    ord: int
    sha: str
    vector: np.ndarray


class CommunityState(Protocol):
    """What the community refresh keeps between runs, beside the graph sources whatever the graph store: the
    entities and relations changed since the last refresh, the refresh's own state, the reports it writes by
    community, and the vectors of each report's texts (core.graph.communities.index, _vectors)."""

    def changes(self) -> tuple[int, list[str], list[tuple[str, str]]]:
        """(last change id, changed node keys, changed edge pairs) since the last refresh cleared them."""

    def state(self) -> dict | None: ...

    def put_state(self, state: dict | None) -> None: ...

    def reports(self, communities: Iterable[int]) -> dict[int, dict]:
        """The stored reports of these communities (a community of one entity has none)."""

    def write(self, reports: Sequence[dict], drop: Iterable[int], version: str, state: dict, upto: int,
              replace_all: bool = False, vectors: Sequence[VectorRow] = (), space: str = "") -> None:
        """In one transaction: the reports of the communities recomputed (`replace_all`: every report) with their
        `vectors` (of `space`), those of communities that no longer exist dropped with theirs, the version they
        describe, the state, and the changes up to `upto` forgotten."""

    def vectors(self, space: str, communities: Iterable[int]) -> dict[int, dict[int, tuple[str, np.ndarray]]]: ...

    def vectors_by_sha(self, space: str, shas: Iterable[str]) -> dict[str, np.ndarray]: ...

    def put_vectors(self, vectors: Sequence[VectorRow], space: str) -> None: ...
