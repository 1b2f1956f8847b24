"""Adding a paper reads what the paper touches, not the collection: every SQL statement recover and a partial
community refresh run is traced and planned by SQLite, and none may scan a table that grows with the collection
(documents, graph nodes and edges, reports). A scan is what a read of every row costs, whatever Python does
with the rows afterwards."""
from __future__ import annotations

import random
import sqlite3
from contextlib import contextmanager

import numpy as np
import pytest

from core.graph.communities.detect import generate_graph
from core.graph.communities.index import refresh_communities
from core.graph.vectors import entity_text, entity_vector_id, sync_vectors
from core.library import ENTITY_COLLECTION, Library, open_library
from core.pipeline.ingest import recover
from core.schema.graph import GraphNode
from core.schema.records import Document
from core.settings.workspace import Workspace
from core.store.chroma_vectors import ChromaVectorStore, chroma_client
from core.store.sqlite_db import Database
from tests.pipeline.test_communities_incremental import new_paper, write, write_graph

GROWING = {"documents", "graph_nodes", "graph_edges", "graph_community_reports", "graph_entity_sources",
           "graph_papers", "graph_community_vectors"}


@pytest.fixture
def traced(monkeypatch) -> list[str]:
    """Every statement any connection of this process runs from now on, with its parameters inlined."""
    statements: list[str] = []
    original = Database.connect

    @contextmanager
    def connect(self):
        with original(self) as conn:
            conn.set_trace_callback(statements.append)
            yield conn

    monkeypatch.setattr(Database, "connect", connect)
    return statements


def scans(lib: Library, statements: list[str]) -> list[tuple[str, str]]:
    """(statement, plan step) for every step that reads a whole growing table."""
    out = []
    conn = sqlite3.connect(lib.db.path)
    try:
        for sql in statements:
            if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
                continue
            for row in conn.execute("EXPLAIN QUERY PLAN " + sql):
                words = row[3].split()
                if words[:1] == ["SCAN"] and len(words) > 1 and words[1] in GROWING:
                    out.append((sql[:200], row[3]))
    finally:
        conn.close()
    return out


@pytest.fixture
def lib(tmp_path) -> Library:
    return open_library(Workspace(tmp_path / "ws"))


def test_recover_reads_only_the_rows_in_progress(lib, traced):
    for n in range(50):
        lib.documents.insert(Document(id=f"{n:064x}", filename=f"paper-{n}.pdf", size_bytes=100))
    dead = lib.queue.claim_next("somehost-that-is-gone:999999:1")
    traced.clear()
    assert recover(lib) == [dead.id]
    assert any("FROM documents" in s for s in traced)  # the trace sees the store's statements
    assert scans(lib, traced) == []


def test_the_scan_check_sees_a_read_of_every_document(lib, traced):
    lib.documents.insert(Document(id="f" * 64, filename="paper.pdf", size_bytes=100))
    traced.clear()
    lib.documents.list()
    assert [step for _, step in scans(lib, traced)] == ["SCAN documents"]


def test_a_partial_community_refresh_scans_no_table_of_the_graph(lib, traced):
    graph = generate_graph(300, 1200, seed=8, community_size=30, inside=0.9)
    write_graph(lib, graph)
    refresh_communities(lib)
    new, edges = new_paper(sorted(graph), 1, random.Random(5))
    write(lib, new, edges)
    traced.clear()
    assert refresh_communities(lib)["full"] == 0.0
    assert scans(lib, traced) == []


class CountingVectors(ChromaVectorStore):
    """The real Chroma collection, counting metadata writes."""

    updated: list[str]

    def update_metadata(self, ids, metadatas, batch_size: int = 2000):
        self.updated += list(ids)
        return super().update_metadata(ids, metadatas, batch_size)


def test_a_hub_entity_read_as_before_is_not_written_again_and_names_a_bounded_set_of_papers(lib):
    store = CountingVectors(chroma_client(lib.settings.store, lib.workspace.chroma_dir), ENTITY_COLLECTION)
    store.updated = []
    lib.__dict__["entity_vectors"] = store  # Library.entity_vectors is a cached property
    papers = [f"{d:064x}" for d in range(300)]
    hub = GraphNode(key="transformer", name="Transformer", type="method", description="A model.", doc_ids=papers)
    store.upsert([entity_vector_id(hub.key)], np.ones((1, 384), dtype=np.float32), [entity_text(hub)],
                 [{"key": hub.key}])
    assert sync_vectors(lib, [hub], [], [], [], {}) == 0.0  # same text: no embedding, new metadata written
    assert store.updated == [entity_vector_id(hub.key)]
    (match, _), = store.fetch([entity_vector_id(hub.key)])
    assert match.metadata["doc_ids"].split(",") == papers[:16] and match.metadata["name"] == "Transformer"
    hub.doc_ids = papers + [f"{301:064x}"]  # paper 301 mentions it: the record reads as before
    sync_vectors(lib, [hub], [], [], [], {})
    assert store.updated == [entity_vector_id(hub.key)]


def test_the_graph_stage_of_one_more_paper_reads_no_other_paper_record(lib, traced):
    from core.pipeline.documents import add_document
    from core.pipeline.graph.stage import process_graph_queue
    from core.pipeline.ingest import process_queue

    for n, text in enumerate(["Walrus lattices relax in BERT models trained on ImageNet.",
                              "The Transformer of Vaswani et al. reads SQuAD with attention."]):
        add_document(lib, f"paper-{n}.txt", f"Paper {n}\n\n{text}\n".encode())
    process_queue(lib)
    process_graph_queue(lib, communities=False)
    assert len(lib.graph_sources.papers()) == 2
    add_document(lib, "paper-2.txt", b"Paper 2\n\nBERT and the Transformer were evaluated on SQuAD by Devlin.\n")
    process_queue(lib)
    traced.clear()
    assert [d.graph_status.value for d in process_graph_queue(lib, communities=False)] == ["done"]
    assert any("FROM graph_papers" in s for s in traced)
    assert [step for _, step in scans(lib, traced) if "graph_papers" in step] == []
