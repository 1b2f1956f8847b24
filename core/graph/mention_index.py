"""Which passage names which entity, and which entities are related, held in memory per graph version.

The graph store keeps each entity's source chunks but has no index from a chunk to the entities it names, and the
graph walks of local and ppr need both directions for every question: reading them from the store per question
would cost more than the walk. `mention_index` reads them once per graph version (~1 s for 10k entities) and
shares them between the modes and the threads of a Compare run.

Phrase nodes (HippoRAG's): the LLM-free extractor also records every candidate phrase a chunk mentions, terms or
not (core/store/sqlite_phrases.py). The display graph keeps only terms; the walks need the rest, since a name said
once in a short document is the bridge of a two-hop question. With QueryConfig.phrase_nodes they join the index
as nodes keyed PHRASE + key, beside the entities, in the same two maps: every walk reads them as entities with no
relations and no graph node. A chunk's phrase that is one of its entities is left out (the entity stands for it),
and so is a phrase in more than MAX_PHRASE_PASSAGES passages: it links everything and means nothing. A workspace
without phrases (built before them, or by the LLM extractor) walks its entities alone.
"""
from __future__ import annotations

import math
import threading
from collections import defaultdict
from dataclasses import dataclass

from core.graph.merge import normalize_key
from core.library import Library
from core.schema.graph import RELATED

PHRASE = "~"  # phrase node keys; entity keys never start with it (normalize_key drops punctuation)
MAX_PHRASE_PASSAGES = 50


def is_phrase(key: str) -> bool:
    return key.startswith(PHRASE)


def phrase_key(text: str) -> str:
    """The phrase node a question's keyword names, in the key space phrases are stored in (the merge's)."""
    key = normalize_key(text)
    return PHRASE + key if key else ""


@dataclass
class MentionIndex:
    """Entity ↔ passage incidence and RELATED adjacency of one graph version."""

    version: tuple
    passages_of: dict[str, list[str]]  # entity or phrase key -> chunk ids naming it
    entities_of: dict[str, list[str]]  # chunk id -> entity and phrase keys it names
    neighbours: dict[str, list[tuple[str, float]]]  # entity key -> (neighbour, weight), strongest first
    n_passages: int

    def idf(self, key: str) -> float:
        """Specificity: an entity named in three passages says more about a question than one named in 300."""
        return math.log(1.0 + self.n_passages / max(len(self.passages_of.get(key, ())), 1))


_INDEXES: dict[tuple[str, bool], MentionIndex] = {}
_LOCK = threading.Lock()


def mention_index(lib: Library) -> MentionIndex:
    """The index of the workspace's graph as it is now, rebuilt when its version or size changed."""
    version = (lib.graph_sources.meta("version", "0"), lib.graph.version())
    root = (str(lib.workspace.root), bool(lib.settings.query.phrase_nodes))
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
        if root[1]:
            _add_phrases(lib, passages_of, entities_of)
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


def _add_phrases(lib: Library, passages_of: dict[str, list[str]], entities_of: dict[str, list[str]]) -> None:
    """Every (chunk, phrase) row into the two maps: an entity's name joins the entity, another phrase becomes a
    phrase node when named in at most MAX_PHRASE_PASSAGES passages. One pass with no per-row set, string or
    defaultdict: ~800k rows at 100k chunks, 2.6 -> 1.9 CPU-s (the cold first question's largest part)."""
    phrase_passages: dict[str, list[str]] = {}  # phrase key (without PHRASE) -> chunk ids naming it
    get = phrase_passages.get
    for cid, keys in lib.graph_sources.chunk_phrases().items():
        for key in keys:
            if key in passages_of:  # an entity's name where the extractor did not keep it: the entity's passage
                named = entities_of.get(cid)  # the chunk's entities so far: a (chunk, phrase) row is unique
                if named is None:
                    entities_of[cid] = [key]
                elif key in named:
                    continue
                else:
                    named.append(key)
                passages_of[key].append(cid)
                continue
            chunks = get(key)
            if chunks is None:
                phrase_passages[key] = [cid]
            else:
                chunks.append(cid)
    for key, chunks in phrase_passages.items():
        if len(chunks) <= MAX_PHRASE_PASSAGES:
            node = PHRASE + key
            passages_of[node] = chunks
            for cid in chunks:
                entities_of[cid].append(node)
