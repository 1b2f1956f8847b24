"""What keeps retrieval fast at 100k chunks (bench/scale_query.py): batched vector lookups, and a graph version
that is cheap to check at every question, BM25 queries with bounded postings."""
import numpy as np
import pytest

from core.graph.mention_index import mention_index
from core.library import open_library
from core.schema.graph import RELATED, GraphEdge, GraphNode
from core.schema.records import Chunk
from core.settings.config import Settings, StoreConfig
from core.settings.workspace import Workspace
from core.store import sqlite_fulltext
from core.store.base import VectorFilter
from core.store.chroma_vectors import ChromaVectorStore, chroma_client
from core.store.sqlite_chunks import SQLiteChunkStore
from core.store.sqlite_db import Database
from core.store.sqlite_fulltext import SQLiteFullText
from core.store.sqlite_graph import SQLiteGraphStore


def _vectors(n, dim=8, seed=0):
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def store(tmp_path):
    store = ChromaVectorStore(chroma_client(StoreConfig(), tmp_path / "chroma"), "batched")
    vectors = _vectors(40)
    store.upsert([f"w{i}" for i in range(40)], vectors, [f"text {i}" for i in range(40)],
                 [{"doc_id": "a" if i % 2 else "b", "chunk_id": f"c{i}", "kind": "text"} for i in range(40)])
    return store


def _key(matches):
    return [(m.id, round(m.score, 5), m.document, m.metadata["doc_id"]) for m in matches]


def test_query_many_answers_each_row_as_query_does_in_batches(store):
    probes = _vectors(5, seed=1)
    many = store.query_many(probes, 4, batch_size=2)  # three calls: 2 + 2 + 1 rows
    assert [_key(m) for m in many] == [_key(store.query(v, 4)) for v in probes]
    only_a = VectorFilter(doc_ids=["a"])
    filtered = store.query_many(probes, 3, filters=only_a)
    assert [_key(m) for m in filtered] == [_key(store.query(v, 3, filters=only_a)) for v in probes]
    assert all(m.metadata["doc_id"] == "a" for ms in filtered for m in ms)


def test_query_many_with_nothing_to_ask(store):
    probes = _vectors(3, seed=2)
    assert store.query_many(np.zeros((0, 8), dtype=np.float32), 4) == []
    assert store.query_many(probes, 0) == [[], [], []]
    assert store.query_many(probes, 4, filters=VectorFilter(doc_ids=[])) == [[], [], []]


def _node(key: str, chunks: list[str]) -> GraphNode:
    return GraphNode(key=key, name=key, type="concept", description="", source_chunks=chunks, doc_ids=["d"])


def test_the_sqlite_graph_version_moves_with_every_write_and_not_with_reads(tmp_path):
    graph = SQLiteGraphStore(Database(tmp_path / "db.sqlite"))
    graph.apply(upsert_nodes=[_node("a", ["d:0"]), _node("b", ["d:1"])],
                upsert_edges=[GraphEdge(source="a", target="b", relation=RELATED)])
    before = graph.version()
    graph.counts(), list(graph.all_nodes()), list(graph.edge_outline())
    assert graph.version() == before, "reading leaves it alone"
    seen = {before}
    for write in (lambda: graph.apply(upsert_nodes=[_node("a", ["d:0", "d:2"])]),  # both counts unchanged
                  lambda: graph.set_communities({"a": 1}), graph.clear):
        write()
        assert graph.version() not in seen
        seen.add(graph.version())
    assert SQLiteGraphStore(Database(tmp_path / "db.sqlite")).version() == graph.version(), "stored, not kept"


def test_the_mention_index_sees_a_graph_edit_that_keeps_the_counts(tmp_path):
    ws = Workspace(tmp_path / "ws").ensure()
    ws.save_settings(Settings())
    lib = open_library(ws)
    lib.graph.apply(upsert_nodes=[_node("a", ["d:0"]), _node("b", ["d:1"])],
                    upsert_edges=[GraphEdge(source="a", target="b", relation=RELATED)])
    assert mention_index(lib).passages_of["a"] == ["d:0"]
    assert mention_index(lib) is mention_index(lib), "read once per graph version"
    lib.graph.apply(upsert_nodes=[_node("a", ["d:0", "d:5"])])  # a merge moved a passage: same counts
    assert mention_index(lib).passages_of["a"] == ["d:0", "d:5"]
    assert mention_index(lib).entities_of["d:5"] == ["a"]


def test_bm25_queries_stop_adding_terms_past_the_postings_budget(tmp_path, monkeypatch):
    db = Database(tmp_path / "db.sqlite")
    chunks = SQLiteChunkStore(db)
    # 500 chunks: "alpha" in 5, "beta" in 10, "gamma" in 40, "delta" in 80 (all under COMMON_SHARE of them)
    words = {"alpha": 5, "beta": 10, "gamma": 40, "delta": 80}
    chunks.put_doc_chunks("d", [Chunk(id=f"d:{i}", doc_id="d", index=i, kind="text", tokens=5, pages=[0],
                                      item_indices=[i],
                                      text=" ".join(["filler"] + [w for w, n in words.items() if i < n]))
                                for i in range(500)])
    fulltext = SQLiteFullText(db)
    question = "delta gamma beta alpha?"
    assert fulltext._match(question) == '"alpha" OR "beta" OR "gamma" OR "delta"', "135 postings: under budget"
    monkeypatch.setattr(sqlite_fulltext, "MAX_POSTINGS", 60)
    assert fulltext._match(question) == '"alpha" OR "beta" OR "gamma"', "rarest first, up to 55 postings"
    monkeypatch.setattr(sqlite_fulltext, "MAX_POSTINGS", 1)
    assert fulltext._match(question) == '"alpha" OR "beta"', "never fewer than MIN_TERMS"
    assert {cid for cid, _ in fulltext.search(question, 20)} == {f"d:{i}" for i in range(10)}


def test_document_frequencies_read_the_index_as_it_is_and_never_create_it(tmp_path):
    """The reader's distinctive words (core.query.reading.coverage) come from these counts and have always read
    the index
    as it is: before it exists there are none (every named word counts), and building it stays search's job."""
    db = Database(tmp_path / "db.sqlite")
    chunks = SQLiteChunkStore(db)
    chunks.put_doc_chunks("d", [Chunk(id=f"d:{i}", doc_id="d", index=i, kind="text", tokens=2, pages=[0],
                                      item_indices=[i], text="alpha beta" if i < 3 else "beta")
                                for i in range(10)])
    fulltext = SQLiteFullText(db)
    assert fulltext.document_frequencies(["alpha"]) is None
    with db.connect() as conn:
        assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'chunks_fts'").fetchone() is None
    fulltext.search("alpha", 1)  # the first search builds the index
    assert fulltext.document_frequencies(["alpha", "beta", "gamma"]) == ({"alpha": 3, "beta": 10}, 10)
