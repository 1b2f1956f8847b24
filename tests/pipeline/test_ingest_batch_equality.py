"""Short documents ingested in one run are computed several to a task and committed several at a time, yet give
exactly what one-at-a-time ingest gives: the same chunks, windows, entities and relations. Real parts throughout:
the local worker pool, the embedding model, SQLite, Chroma, the spaCy extractor."""
from __future__ import annotations

import pytest

from core.library import Library, open_library
from core.pipeline.compute import compute_backend
from core.pipeline.documents import add_document
from core.pipeline.graph.stage import process_graph_queue
from core.pipeline.ingest import process_document, process_queue
from core.pipeline.status import worker_id
from core.query.search import search
from core.schema.records import DocStatus, GraphStatus
from tests.graph_papers import fast_workspace

PLACES = ["Svalbard", "Greenland", "Iceland", "Baffin Island", "Wrangel Island", "Franz Josef Land"]
TEAMS = ["Norwegian Polar Institute", "Alfred Wegener Institute", "British Antarctic Survey"]
N_DOCS = 24
QUERIES = ["walrus survey 7", "telemetry from Greenland", "British Antarctic Survey haul-out sites in 2003"]


def note(n: int) -> bytes:
    place, team, other = PLACES[n % len(PLACES)], TEAMS[n % len(TEAMS)], PLACES[(n + 2) % len(PLACES)]
    return (f"Walrus survey {n}\n\nThe {team} counted {100 + n} walruses on {place} in {1990 + n}. "
            f"Acoustic telemetry tracked the walrus herd from {place} to {other}. "
            f"Sea ice loss near {place} moved the haul-out sites of the herd.\n").encode()


def snapshot(lib: Library) -> dict:
    docs = {d.filename: d for d in lib.documents.list()}
    return {
        "status": {f: (d.status, d.graph_status) for f, d in docs.items()},
        "chunks": {f: [(c.index, c.text) for c in lib.chunks.by_doc(d.id)] for f, d in docs.items()},
        "windows": lib.windows.count(),
        "nodes": sorted(n.key for n in lib.graph.all_nodes()),
        "edges": sorted((e.source, e.target) for e in lib.graph.all_edges()),
        "entity_vectors": sorted(lib.entity_vectors.all_ids()),
        "relation_vectors": sorted(lib.relation_vectors.all_ids()),
        # Each window's vector is its own (a batch's vectors split back to the right documents): same hits.
        "hits": {q: [h.chunk.id for h in search(lib, q, top_k=5)] for q in QUERIES},
    }


def scores(lib: Library) -> list[float]:
    return [h.score for q in QUERIES for h in search(lib, q, top_k=5)]


@pytest.mark.slow
def test_short_documents_in_one_run_are_batched_and_equal_one_at_a_time_ingest(tmp_path):
    batched = open_library(fast_workspace(tmp_path / "batched"))
    single = open_library(fast_workspace(tmp_path / "single"))
    for lib in (batched, single):
        for n in range(N_DOCS):
            add_document(lib, f"note{n:02}.txt", note(n))

    done = process_queue(batched, backend=compute_backend(batched.settings.compute, "local", 2))
    process_graph_queue(batched)
    for _ in range(N_DOCS):  # one document computed, committed and graphed at a time
        doc = single.queue.claim_next(worker_id())
        process_document(single, doc)
        process_graph_queue(single)

    assert {d.status for d in done} == {DocStatus.READY} and len(done) == N_DOCS
    # Fewer compute tasks and commits than documents: several documents shared each.
    shared_task = [d.timings.get("compute_batch_docs", 1) for d in done]
    assert sum(1 / k for k in shared_task) < N_DOCS / 2, shared_task
    commits = sum(1 / d.timings["commit_batch_docs"] for d in done)
    assert commits < N_DOCS / 2, commits
    a, b = snapshot(batched), snapshot(single)
    assert set(a["status"].values()) == {(DocStatus.READY, GraphStatus.DONE)}
    assert a["nodes"] and a["edges"] and a["windows"] >= N_DOCS
    assert a == b
    assert scores(batched) == pytest.approx(scores(single), abs=1e-5)  # batches pad differently: float noise
