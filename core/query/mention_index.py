"""Which passage names which entity, and which entities are related, held in memory per graph version.

The graph store keeps each entity's source chunks but has no index from a chunk to the entities it names, and the
graph walks of local and ppr need both directions for every question: reading them from the store per question
would cost more than the walk. `mention_index` reads them once per graph version (~1 s for 10k entities) and
shares them between the modes and the threads of a Compare run.
"""
from __future__ import annotations

import math
import threading
from collections import defaultdict
from dataclasses import dataclass

from core.library import Library
from core.schema.graph import RELATED


@dataclass
class MentionIndex:
    """Entity ↔ passage incidence and RELATED adjacency of one graph version."""

    version: tuple
    passages_of: dict[str, list[str]]  # entity key -> chunk ids naming it
    entities_of: dict[str, list[str]]  # chunk id -> entity keys it names
    neighbours: dict[str, list[tuple[str, float]]]  # entity key -> (neighbour, weight), strongest first
    n_passages: int

    def idf(self, key: str) -> float:
        """Specificity: an entity named in three passages says more about a question than one named in 300."""
        return math.log(1.0 + self.n_passages / max(len(self.passages_of.get(key, ())), 1))


_INDEXES: dict[str, MentionIndex] = {}
_LOCK = threading.Lock()


def mention_index(lib: Library) -> MentionIndex:
    """The index of the workspace's graph as it is now, rebuilt when its version or size changed."""
    version = (lib.graph_sources.meta("version", "0"), lib.graph.counts())
    root = str(lib.workspace.root)
    with _LOCK:
        cached = _INDEXES.get(root)
        if cached is not None and cached.version == version:
            return cached
        passages_of: dict[str, list[str]] = {}
        entities_of: dict[str, list[str]] = defaultdict(list)
        for node in lib.graph.all_nodes():
            if node.is_paper or not node.source_chunks:
                continue
            passages_of[node.key] = list(dict.fromkeys(node.source_chunks))
            for cid in passages_of[node.key]:
                entities_of[cid].append(node.key)
        neighbours: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for source, target, relation, weight in lib.graph.edge_outline():
            if relation == RELATED and source in passages_of and target in passages_of:
                neighbours[source].append((target, float(weight)))
                neighbours[target].append((source, float(weight)))
        for items in neighbours.values():
            items.sort(key=lambda kv: -kv[1])
        index = MentionIndex(version, passages_of, dict(entities_of), dict(neighbours), max(len(entities_of), 1))
        _INDEXES[root] = index
        return index
