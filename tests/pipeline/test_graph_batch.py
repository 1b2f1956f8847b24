"""The LLM-free graph stage in batches of papers (core.pipeline.graph.batch): the graph, vectors and phrases a batch
builds are those of one paper at a time, and a crash mid-batch is repaired. Real SQLite, Chroma, the embedding
model and spaCy."""
from __future__ import annotations

import pytest

from core.content.content_list import load_content_list
from core.graph.stats import graph_stats
from core.library import open_library
from core.pipeline.documents import add_document
from core.pipeline.graph.batch import claim_batch
from core.pipeline.graph.build import commit_document, current_extractor, extract_document
from core.pipeline.graph.stage import process_graph_queue, recover_graph
from core.pipeline.ingest import process_queue
from core.settings.workspace import Workspace
from tests.graph_papers import fast_workspace
from tests.pipeline.graph_build_helpers import SHARED_ENTITY_DOCS, extraction_times, snapshot


def _workspace(root):
    lib = open_library(fast_workspace(root))
    for title, text in SHARED_ENTITY_DOCS:
        add_document(lib, f"{title}.txt", f"{title}\n\n{text}\n".encode())
    process_queue(lib)
    return lib


def _graph(lib) -> dict:
    """Nodes, edges, vector counts, every entity and relation vector's text and metadata, and the phrases."""
    out = snapshot(lib)
    for name, store in (("entity", lib.entity_vectors), ("relation", lib.relation_vectors)):
        ids = sorted(store.all_ids())
        out[f"{name}_texts"] = store.get_documents(ids)
    out["phrases"] = {chunk: sorted(p) for chunk, p in lib.graph_sources.chunk_phrases().items()}
    return out


@pytest.mark.slow
def test_a_batch_builds_the_graph_of_one_paper_at_a_time(tmp_path):
    one = _workspace(tmp_path / "one")
    while process_graph_queue(one, max_docs=1, communities=False):  # a batch of one paper, as before batching
        pass
    batched = _workspace(tmp_path / "batched")
    done = process_graph_queue(batched, communities=False)
    assert [d.graph_status for d in done] == ["done"] * len(SHARED_ENTITY_DOCS), [d.graph_message for d in done]
    # One batch: every paper was committed before the one rebuild of what they touched.
    assert {d.timings["graph_batch_docs"] for d in done} == {len(SHARED_ENTITY_DOCS)}
    expected, got = _graph(one), _graph(batched)
    assert expected["nodes"] and expected["edges"] and expected["phrases"]
    assert len({n["key"] for n in got["nodes"] if len(n["doc_ids"]) > 1}) >= 3  # shared entities, merged
    assert got == expected


@pytest.mark.slow
def test_a_crash_mid_batch_leaves_whole_papers_and_is_repaired(tmp_path):
    reference = _workspace(tmp_path / "reference")
    process_graph_queue(reference, communities=False)
    lib = _workspace(tmp_path / "crashed")
    batch = claim_batch(lib, "a-graph-worker-that-dies")
    assert len(batch) == len(SHARED_ENTITY_DOCS)
    extractor = current_extractor(lib)
    for doc in batch[:3]:  # half the batch committed, the rest extracted only...
        outcome = extract_document(lib, doc.id, extractor)
        items = load_content_list(lib.workspace.parsed_dir(doc.id) / "content_list.json")
        commit_document(lib, doc.id, doc.display_title, items, outcome)
    for doc in batch[3:4]:
        extract_document(lib, doc.id, extractor)
    # ...and the process dies: no rebuild, every paper left extracting by a worker that is gone.
    assert graph_stats(lib).pending_changes > 0
    with lib.db.connect() as conn:
        committed = {r[0] for r in conn.execute("SELECT DISTINCT doc_id FROM graph_entity_sources")}
    assert committed == {d.id for d in batch[:3]}  # whole papers: those committed, none of the others
    extracted = extraction_times(lib)
    restarted = open_library(Workspace(tmp_path / "crashed"))
    assert sorted(recover_graph(restarted)) == sorted(d.id for d in batch)
    done = process_graph_queue(restarted, communities=False)
    assert sorted(d.graph_status for d in done) == ["done"] * len(SHARED_ENTITY_DOCS)
    assert graph_stats(restarted).pending_changes == 0
    after = extraction_times(restarted)
    assert {c: after[c] for c in extracted} == extracted  # extracted before the crash: reused, not redone
    assert _graph(restarted) == _graph(reference)
