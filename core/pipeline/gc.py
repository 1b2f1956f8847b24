"""The garbage collector: what no registered document owns, found in every store and removed.

Older versions could leave such orphans: a paper deleted while it was indexed kept the windows written after the
delete, one deleted while its graph was extracted kept its contributions, nodes, edges, vectors, extractions
and paper record, and a crash half-way through a delete keeps whatever was not removed yet. The collector runs
from `python -m core gc`, at the app's start-up (in the background), before `python -m core graph build`, and
before `python -m core ingest` only after an interrupted run: it scans every store, a cost that must not grow
each ingest with the collection.

A document is known when it has a row in the documents table; everything is removed through the same path as a
delete (core.pipeline.documents.purge_document), so the graph's touched nodes and edges are rebuilt from what
remains. Folders and staging files younger than ORPHAN_AGE_S are left alone: another process may be writing an
upload there right now.
"""
from __future__ import annotations

import logging
import os
import shutil
import time
import uuid
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from core.graph.lock import graph_lock
from core.graph.vectors import entity_vector_id, relation_vector_id
from core.library import Library
from core.pipeline.documents import purge_document
from core.pipeline.graph.build import rebuild_dirty
from core.pipeline.ingest import ORPHAN_AGE_S
from core.pipeline.status import worker_alive
from core.schema.graph import PAPER_PREFIX, RELATED
from core.schema.metadata import ENTRY_PREFIX

log = logging.getLogger(__name__)


def footprint(lib: Library, doc_ids: Iterable[str]) -> Counter:
    """Everything stored under these document ids, per kind, across SQLite, Chroma, the graph and the workspace
    folder (the row itself under "document"). A deleted paper's footprint is all zeros."""
    ids = set(doc_ids)
    counts: Counter = Counter()
    counts["document"] = sum(lib.documents.get(i) is not None for i in ids)
    for kind, per_doc in (("chunks", lib.chunks.doc_counts()), ("windows", lib.windows.doc_counts()),
                          ("entity_vectors", lib.entity_vectors.doc_counts()),
                          ("relation_vectors", lib.relation_vectors.doc_counts()),
                          ("descriptions", lib.descriptions.doc_counts()),
                          ("metadata", lib.metadata.doc_counts()), ("references", lib.references.doc_counts()),
                          ("results", lib.results.doc_counts())):
        counts[kind] = sum(per_doc.get(i, 0) for i in ids)
    counts.update(lib.graph_sources.doc_row_counts(ids))
    counts["graph_nodes"] = sum(1 for n in lib.graph.all_nodes() if ids & set(n.doc_ids))
    counts["graph_edges"] = sum(1 for e in lib.graph.all_edges() if ids & set(e.doc_ids))
    counts["folders"] = sum(lib.workspace.doc_dir(i).exists() for i in ids)
    return counts


def stray_records(lib: Library) -> Counter:
    """What belongs to no document id at all: entity and relation vectors whose node or edge is not in the
    graph, full-text rows whose chunk is gone, graph changes never merged."""
    dirty_nodes, dirty_edges = lib.graph_sources.dirty()
    counts = Counter({kind: len(ids) for kind, ids in _stray_vectors(lib).items()})
    counts.update(fts_rows=lib.fulltext.stale_rows(), graph_dirty=len(dirty_nodes) + len(dirty_edges))
    return counts


def _stray_vectors(lib: Library) -> dict[str, list[str]]:
    """Vector ids of entities and relations the graph does not hold (what sync_vectors would keep, inverted)."""
    nodes = {entity_vector_id(n.key) for n in lib.graph.all_nodes() if not n.key.startswith(PAPER_PREFIX)}
    edges = {relation_vector_id(s, t) for s, t, relation, _ in lib.graph.edge_outline() if relation == RELATED}
    return {"entity_vectors": sorted(set(lib.entity_vectors.all_ids()) - nodes),
            "relation_vectors": sorted(set(lib.relation_vectors.all_ids()) - edges)}


def unknown_doc_ids(lib: Library) -> set[str]:
    """Document ids that some store holds something of, and the documents table does not know."""
    seen = set(lib.chunks.doc_counts()) | lib.windows.doc_ids() | lib.graph_sources.doc_ids()
    seen |= set(lib.descriptions.doc_counts()) | set(lib.references.doc_counts()) | set(lib.results.doc_counts())
    seen |= {d for d in lib.metadata.doc_counts() if not d.startswith(ENTRY_PREFIX)}  # bib: entries have no document
    for store in (lib.entity_vectors, lib.relation_vectors):
        seen |= set(store.doc_counts())
    seen |= {d for n in lib.graph.all_nodes() for d in n.doc_ids}
    seen.discard("")
    return seen - {d.id for d in lib.documents.list()}


def collect_garbage(lib: Library, min_age_s: float = ORPHAN_AGE_S) -> dict[str, int]:
    """Remove every orphan; returns how many of each kind went (kinds with nothing removed are left out)."""
    removed: Counter = Counter()
    orphans = sorted(unknown_doc_ids(lib))
    if orphans:
        before = footprint(lib, orphans)
        purged = []
        for doc_id in orphans:
            # Checked again one by one: a paper registered since the scan (its upload just written) is kept.
            if lib.documents.get(doc_id) is None and not _young(lib.workspace.doc_dir(doc_id), min_age_s):
                purge_document(lib, doc_id)
                purged.append(doc_id)
        _rebuild_ghosts(lib, set(purged))
        removed.update(before - footprint(lib, orphans))
        removed["orphan_doc_ids"] = len(purged)
    removed.update(_sweep_strays(lib))
    removed["folders"] += _sweep(lib, [p for p in lib.workspace.docs_dir.glob("*") if p.is_dir()
                                       and lib.documents.get(p.name) is None], min_age_s)
    if not _ingest_running(lib):  # a live worker's parse folder can be older than any age we could pick
        removed["staging"] += _sweep(lib, list(lib.workspace.staging_dir.glob("*")), min_age_s)
    report = {kind: n for kind, n in sorted(removed.items()) if n > 0}
    if report:
        log.info("garbage collected: %s", report)
    return report


def _rebuild_ghosts(lib: Library, doc_ids: set[str]) -> None:
    """Nodes and edges still naming a removed paper though none of its contributions is left (an older version
    committed after the delete's rebuild): marked and merged again from what remains."""
    if not doc_ids:
        return
    with graph_lock(lib):
        nodes = [n.key for n in lib.graph.all_nodes() if doc_ids & set(n.doc_ids)]
        nodes += [PAPER_PREFIX + d for d in doc_ids if lib.graph.get_node(PAPER_PREFIX + d)]
        edges = [e.pair for e in lib.graph.edges_of(nodes)] if nodes else []
        edges += [e.pair for e in lib.graph.all_edges() if doc_ids & set(e.doc_ids)]
        if nodes or edges:
            lib.graph_sources.mark_dirty(nodes, edges)
            rebuild_dirty(lib)


def _sweep_strays(lib: Library) -> Counter:
    removed: Counter = Counter()
    with graph_lock(lib):  # a rebuild writes nodes before their vectors: none is under way while we compare
        rebuild_dirty(lib)
        stray = _stray_vectors(lib)
        lib.entity_vectors.delete(stray["entity_vectors"])
        lib.relation_vectors.delete(stray["relation_vectors"])
        removed.update({kind: len(ids) for kind, ids in stray.items()})
    stale = lib.fulltext.stale_rows()
    if stale:
        lib.fulltext.rebuild()
        removed["fts_rows"] += stale
    return removed


def _young(path: Path, min_age_s: float) -> bool:
    try:
        return path.stat().st_mtime > time.time() - min_age_s
    except FileNotFoundError:
        return False


def _sweep(lib: Library, paths: list[Path], min_age_s: float) -> int:
    gone = 0
    for path in paths:
        if _young(path, min_age_s) or not path.exists():
            continue
        if path.is_dir() and not path.is_symlink():
            trash = lib.workspace.staging_dir / f"deleted-{uuid.uuid4().hex}"
            try:
                os.replace(path, trash)  # one rename, then the slow part out of the way
            except OSError:
                continue
            shutil.rmtree(trash, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        gone += 1
    return gone


def _ingest_running(lib: Library) -> bool:
    return any(worker and worker_alive(worker) for worker in lib.queue.in_progress_workers().values())
