"""Likely duplicate entities (embedding similarity of name + description) and merging them.

Suggestions are never applied on their own: "BERT" and "BERT-large" are close but not the same thing, so a
person (or a script that knows better) confirms each merge. A merge rewires provenance, not just the graph:
papers added later map the alias to the kept entity too.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.graph.merge import normalize_key
from core.graph.names import names_related, numbered_variants
from core.library import Library
from core.pipeline.graph.build import entity_vector_id, rebuild_dirty


@dataclass
class DuplicateSuggestion:
    keep: str  # key of the entity with more sources
    merge: str
    keep_name: str
    merge_name: str
    similarity: float


def suggest_duplicates(lib: Library, threshold: float | None = None, limit: int = 50,
                       block: int = 2048) -> list[DuplicateSuggestion]:
    threshold = lib.settings.graph.duplicate_similarity if threshold is None else threshold
    nodes = [n for n in lib.graph.all_nodes() if not n.is_paper]
    if len(nodes) < 2:
        return []
    vectors = lib.entity_vectors.get_embeddings([entity_vector_id(n.key) for n in nodes])
    nodes = [n for n in nodes if entity_vector_id(n.key) in vectors]
    matrix = np.stack([vectors[entity_vector_id(n.key)] for n in nodes]).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-12
    pairs: list[tuple[float, int, int]] = []
    # Blocks keep memory at block × n floats even for 50k entities.
    for start in range(0, len(nodes), block):
        sims = matrix[start:start + block] @ matrix.T
        rows, cols = np.nonzero(sims >= threshold)
        for r, c in zip(rows, cols):
            i = start + int(r)
            if i < int(c):
                pairs.append((float(sims[r, c]), i, int(c)))
    pairs.sort(key=lambda p: (-p[0], nodes[p[1]].key, nodes[p[2]].key))
    out = []
    for sim, i, j in pairs:
        if len(out) >= limit:
            break
        a, b = nodes[i], nodes[j]
        if numbered_variants(a.name, b.name) or not names_related(a.name, b.name):
            continue
        keep, merge = (a, b) if (len(a.source_chunks), -len(a.key)) >= (len(b.source_chunks), -len(b.key)) else (b, a)
        out.append(DuplicateSuggestion(keep=keep.key, merge=merge.key, keep_name=keep.name, merge_name=merge.name,
                                       similarity=round(sim, 4)))
    return out


def merge_entities(lib: Library, names_or_keys: list[str], into: str) -> str:
    """Merge entities into `into` (a name or key of an existing entity); returns the kept key."""
    def resolve(value: str) -> str:
        if lib.graph.get_node(value):
            return value
        key = normalize_key(value)
        key = lib.graph_sources.aliases().get(key, key)
        if not lib.graph.get_node(key):
            raise KeyError(f"no entity named {value!r}")
        return key

    canonical = resolve(into)
    keys = [resolve(v) for v in names_or_keys]
    lib.graph_sources.merge_keys(keys, canonical)
    rebuild_dirty(lib)
    return canonical
