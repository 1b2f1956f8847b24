"""Re-embed every stored vector (chunk windows, entities, relations, community reports) with the configured
embedder: what switching the embedding model or variant to another vector space needs
(core.models.embedding_space). Texts and metadata are kept; only the vectors change. The record says
"re-embedding" until the last batch is written, so an interrupted run is refused by every reader until it is run
again."""
from __future__ import annotations

from collections.abc import Callable

from core.graph.communities.vectors import report_vectors
from core.library import Library
from core.models.embedding import get_embedder
from core.models.embedding_space import REEMBEDDING, record_space

BATCH = 512  # records read, embedded and written at a time: bounded memory on a 100k-window workspace


def reembed_workspace(lib: Library, progress: Callable[[str, int, int], None] | None = None) -> dict[str, int]:
    """Vectors rewritten per collection. Nothing else may write vectors meanwhile (run it with the app stopped)."""
    config = lib.settings.embedding
    embedder = get_embedder(config.model, config.variant)  # not lib.embedder(): that refuses the switch
    record_space(lib.vector_space_record, REEMBEDDING + embedder.space)
    counts = {}
    for name, store in (("windows", lib.windows), ("entities", lib.entity_vectors),
                        ("relations", lib.relation_vectors)):
        ids = store.all_ids()
        for start in range(0, len(ids), BATCH):
            rows = store.fetch(ids[start:start + BATCH])
            vectors = embedder.embed([m.document for m, _ in rows], batch_size=config.batch_size)
            store.upsert([m.id for m, _ in rows], vectors, [m.document for m, _ in rows],
                         [m.metadata for m, _ in rows])
            if progress:
                progress(name, min(start + BATCH, len(ids)), len(ids))
        counts[name] = len(ids)
    record_space(lib.vector_space_record, embedder.space)
    # The community reports' stored vectors are in the old space, so they go unused. Embed them now, not at the
    # first community question (which would embed them too: ~40 CPU-s at 100k chunks).
    reports = lib.graph_sources.community_reports()
    if reports:
        report_vectors(lib, reports)
    counts["community reports"] = len(reports)
    return counts
