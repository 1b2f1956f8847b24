"""Entity and relation vectors (the `entities` and `relations` Chroma collections), kept in step with the merged
graph by rebuild_dirty (core.pipeline.graph.build)."""
from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Iterable, Sequence

from core.library import Library
from core.schema.graph import PAPER_PREFIX, GraphEdge, GraphNode

log = logging.getLogger(__name__)

# What entity and relation vectors read. MiniLM costs ~0.5 CPU-ms per token here and ten papers give ~3,000
# entities and ~5,000 relations, so these texts are short: an entity is its name, type and the first words of its
# description; a relation its endpoints and keywords (LightRAG's local and global modes match short keywords
# against them). The full descriptions stay in the graph store for the answer context.
_ENTITY_TEXT_CHARS = 60
_RELATION_TEXT_CHARS = 80
# The papers a vector's metadata names: the first ones only. All of them would make a hub entity's record grow
# with the collection (a thousand 64-character ids), and be written again by every paper that mentions it; the
# graph store keeps every paper of every node, and these only let garbage collection see whose records they are.
_VECTOR_DOC_IDS = 16


def entity_vector_id(key: str) -> str:
    return "ent-" + hashlib.sha1(key.encode("utf-8")).hexdigest()


def relation_vector_id(source: str, target: str) -> str:
    return "rel-" + hashlib.sha1(f"{source}\x1f{target}".encode()).hexdigest()


def entity_text(node: GraphNode) -> str:
    return f"{node.name} ({node.type}): {node.description}"[:max(_ENTITY_TEXT_CHARS, len(node.name) + 20)]


def relation_text(edge: GraphEdge, names: dict[str, str]) -> str:
    a, b = names.get(edge.source, edge.source), names.get(edge.target, edge.target)
    return f"{a} — {b}: {edge.keywords}"[:_RELATION_TEXT_CHARS]


def sync_vectors(lib: Library, nodes: Sequence[GraphNode], deleted_keys: Iterable[str], edges: Sequence[GraphEdge],
                 deleted_pairs: Iterable[tuple[str, str]], names: dict[str, str]) -> float:
    """Entity vectors (name, type, description) and relation vectors (endpoints, keywords), as LightRAG keeps
    them, in step with the graph. Returns the seconds spent computing embeddings."""
    gone = list(dict.fromkeys(entity_vector_id(k) for k in deleted_keys if not k.startswith(PAPER_PREFIX)))
    if gone:
        lib.entity_vectors.delete(gone)
    gone_edges = list(dict.fromkeys(relation_vector_id(*p) for p in deleted_pairs
                                    if not p[1].startswith(PAPER_PREFIX)))
    if gone_edges:
        lib.relation_vectors.delete(gone_edges)
    entities = _Pending(lib.entity_vectors, [entity_vector_id(n.key) for n in nodes], [entity_text(n) for n in nodes],
                        [{"key": n.key, "name": n.name, "type": n.type, "doc_ids": _doc_ids(n.doc_ids)} for n in nodes])
    relations = _Pending(lib.relation_vectors, [relation_vector_id(e.source, e.target) for e in edges],
                         [relation_text(e, names) for e in edges],
                         [{"source": e.source, "target": e.target, "keywords": e.keywords[:500],
                           "doc_ids": _doc_ids(e.doc_ids)} for e in edges])
    return _embed_and_write(lib, [entities, relations])


def _doc_ids(doc_ids: Sequence[str]) -> str:
    return ",".join(list(doc_ids)[:_VECTOR_DOC_IDS])  # as Chroma stores a list (comma-joined), to compare


class _Pending:
    """One collection's records to write: those whose stored text is unchanged keep their vector, and are written
    only if their metadata changed (most records a new paper touches read exactly as before)."""

    def __init__(self, store, ids: list[str], texts: list[str], metadatas: list[dict]):
        self.store, self.ids, self.texts, self.metadatas = store, ids, texts, metadatas
        stored = {match.id: match for match, _ in store.fetch(ids)} if ids else {}
        same = [i for i, (id_, text) in enumerate(zip(ids, texts)) if id_ in stored and stored[id_].document == text]
        stale = [i for i in same if stored[ids[i]].metadata != metadatas[i]]
        if stale:
            store.update_metadata([ids[i] for i in stale], [metadatas[i] for i in stale])
        self.changed = sorted(set(range(len(ids))) - set(same))
        log.debug("%s vectors: %d unchanged (%d with new metadata), %d to embed", getattr(store, "name", "graph"),
                  len(same), len(stale), len(self.changed))


def _embed_and_write(lib: Library, pending: list[_Pending]) -> float:
    """Embed only what reads differently from its stored vector (a hub entity touched by every new paper keeps
    its vector while the start of its description, all the embedder reads, is unchanged), each distinct text once
    (an entity and a relation, or two entities, often read the same), entities and relations in one call so the
    embedder's batches stay full. Returns the seconds spent embedding."""
    unique = list(dict.fromkeys(p.texts[i] for p in pending for i in p.changed))
    if not unique:
        return 0.0
    started = time.perf_counter()
    vectors = lib.embedder().embed(unique, batch_size=lib.settings.embedding.batch_size)
    embed_s = time.perf_counter() - started
    row = {text: n for n, text in enumerate(unique)}
    for p in pending:
        if p.changed:
            p.store.upsert([p.ids[i] for i in p.changed], vectors[[row[p.texts[i]] for i in p.changed]],
                           [p.texts[i] for i in p.changed], [p.metadatas[i] for i in p.changed])
    return embed_s
