"""Likely duplicate entities (embedding similarity of name + description) and merging them.

Suggestions are never applied on their own: "BERT" and "BERT-large" are close but not the same thing, so a
person (or a script that knows better) confirms each merge. A merge rewires provenance, not just the graph:
papers added later map the alias to the kept entity too.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from core.library import Library
from core.pipeline.graph.build import entity_vector_id, rebuild_dirty
from core.pipeline.graph.merge import normalize_key


@dataclass
class DuplicateSuggestion:
    keep: str  # key of the entity with more sources
    merge: str
    keep_name: str
    merge_name: str
    similarity: float


_DIGITS = re.compile(r"\d+")


def numbered_variants(a: str, b: str) -> bool:
    """"TAPAS-base 4p" and "TAPAS-base 8p", "Paper-1" and "Paper-2": names that differ only in their numbers
    name different things, however close their embeddings."""
    return a != b and _DIGITS.sub("#", a.casefold()) == _DIGITS.sub("#", b.casefold())


_GLUE_WORDS = {"of", "the", "a", "an", "for", "and", "in", "on", "to", "with", "by", "ie", "eg"}


def _words(name: str) -> list[str]:
    # Hyphens split words here ("BERT-large" shares "bert" with "BERT"), unlike in entity keys.
    return [w for w in re.findall(r"[^\W_]+", name.casefold()) if w not in _GLUE_WORDS]


def names_related(a: str, b: str) -> bool:
    """Whether two names could name one thing: a shared word, or one the initials of the other. Two entities
    described by the same sentence embed close together whatever their names ("ChemProt" and "micro-F1")."""
    wa, wb = _words(a), _words(b)
    if set(wa) & set(wb):
        return True
    for short, long in ((wa, wb), (wb, wa)):
        initials = "".join(w[0] for w in long)
        if len(short) == 1 and len(short[0]) >= 2 and initials in (short[0], short[0].removesuffix("s")):
            return True
    return False


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
