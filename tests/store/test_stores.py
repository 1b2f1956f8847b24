"""The storage backends for real: SQLite registry and chunks, Chroma embedded and as a server."""
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from core.schema.records import Chunk, DocStatus, Document, GraphStatus, IllegalTransition
from core.settings.config import StoreConfig
from core.store.base import StoreUnavailable, VectorFilter
from core.store.chroma_vectors import ChromaVectorStore, chroma_client
from core.store.sqlite_chunks import SQLiteChunkStore
from core.store.sqlite_db import Database
from core.store.sqlite_documents import SQLiteDocumentRecords, SQLiteStageProgress, SQLiteWorkQueue
from core.store.sqlite_history import QueryHistoryStore
from tests.paths import REPO


def _registry(db: Database) -> tuple[SQLiteDocumentRecords, SQLiteWorkQueue, SQLiteStageProgress]:
    """The three views of one documents table, as the Library holds them (documents, queue, stages)."""
    return SQLiteDocumentRecords(db), SQLiteWorkQueue(db), SQLiteStageProgress(db)


def _vectors(n, dim=8, seed=0):
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_document_registry_status_machine(tmp_path):
    docs, queue, stages = _registry(Database(tmp_path / "db.sqlite"))
    assert docs.insert(Document(id="a", filename="a.pdf"))
    assert not docs.insert(Document(id="a", filename="again.pdf")), "a repeat insert is a no-op"
    assert docs.insert(Document(id="b", filename="b.pdf"))
    claimed = queue.claim_next("worker-1")
    assert claimed.id == "a" and claimed.status == DocStatus.PARSING
    assert queue.claim_next("worker-2").id == "b"
    assert queue.claim_next("worker-3") is None
    with pytest.raises(IllegalTransition):  # parsing goes through indexing
        docs.set_status("a", DocStatus.READY, "done")
    stages.report_stage("a", "parsing: page 2", 0.25)
    assert stages.progress() == {"a": ("parsing: page 2", 0.25), "b": ("", 0.0)}
    docs.set_status("a", DocStatus.INDEXING, pages=3, item_counts={"text": 4})
    assert stages.progress()["a"] == ("parsing: page 2", 0.25), "indexing keeps the live stage until it reports"
    docs.set_status("a", DocStatus.READY, "done", timings={"parse_s": 1.5}, graph=GraphStatus.PENDING,
                    graph_detail="waiting")
    a = docs.get("a")
    assert (a.status, a.message, a.pages, a.timings, a.item_counts) == (DocStatus.READY, "done", 3,
                                                                         {"parse_s": 1.5}, {"text": 4})
    assert a.graph_status == GraphStatus.PENDING and stages.graph_progress() == {"a": ("waiting", 0.0)}
    assert "a" not in stages.progress() and queue.in_progress_workers() == {"b": "worker-2"}
    assert docs.ids_with_status(DocStatus.READY) == ["a"] and [d.id for d in docs.ready_papers()] == ["a"]
    assert docs.ready_titles() == {"a": "a.pdf"}, "the filename until a title is known"
    with pytest.raises(ValueError):
        docs.set_status("b", DocStatus.INDEXING, not_a_field=1)
    with pytest.raises(ValueError):  # live-stage and worker columns are the store's own business
        docs.set_status("b", DocStatus.INDEXING, worker="someone")
    assert docs.get("b").status == DocStatus.PARSING, "a refused write changes nothing"
    docs.set_status("b", DocStatus.FAILED, "broken", graph=GraphStatus.NONE)
    docs.set_status("b", DocStatus.QUEUED, "queued again")
    assert queue.claim_next("worker-4").id == "b"
    docs.delete("a")
    assert docs.get("a") is None and [d.id for d in docs.list()] == ["b"]
    docs.set_status("a", DocStatus.QUEUED)  # a write to a document deleted meanwhile is a no-op
    assert docs.get("a") is None


def test_ready_titles_name_only_the_searchable_papers_by_title_or_filename(tmp_path):
    docs, queue, stages = _registry(Database(tmp_path / "db.sqlite"))
    for doc_id in ("a", "b", "c"):
        docs.insert(Document(id=doc_id, filename=f"{doc_id}.pdf"))
        queue.claim_next("w")
        docs.set_status(doc_id, DocStatus.INDEXING, title="Attention" if doc_id == "b" else "")
    for doc_id in ("a", "b"):
        docs.set_status(doc_id, DocStatus.READY, "done")
    assert docs.ready_titles() == {"a": "a.pdf", "b": "Attention"}
    assert docs.ready_titles() == {d.id: d.display_title for d in docs.ready_papers()}
    docs.insert(Document(id="d", filename="d.pdf"))
    assert docs.status_counts() == {DocStatus.READY: 2, DocStatus.INDEXING: 1, DocStatus.QUEUED: 1}
    assert docs.status_counts() == Counter(d.status for d in docs.list())


def test_graph_stage_status_machine(tmp_path):
    docs, queue, stages = _registry(Database(tmp_path / "db.sqlite"))
    docs.insert(Document(id="a", filename="a.pdf"))
    assert docs.get("a").graph_status == GraphStatus.NONE and queue.claim_graph_next("w") is None
    queue.claim_next("w")
    docs.set_status("a", DocStatus.INDEXING)
    docs.set_status("a", DocStatus.READY, "ok", graph=GraphStatus.PENDING, graph_detail="waiting")
    with pytest.raises(IllegalTransition):  # a pending graph is extracted before it is done
        docs.set_graph_status("a", GraphStatus.DONE)
    claimed = queue.claim_graph_next("worker-1")
    assert claimed.graph_status == GraphStatus.EXTRACTING and queue.graph_workers() == {"a": "worker-1"}
    stages.report_graph_stage("a", "extracting chunk 3 of 9" + "!" * 400, 0.33333)
    assert stages.graph_progress() == {"a": ("extracting chunk 3 of 9" + "!" * 277, 0.333)}
    # Re-queued while extracting (a retry, a cleared graph): the worker's finishing write leaves it queued.
    assert docs.set_graph_status("a", GraphStatus.PENDING, detail="queued")
    assert not docs.set_graph_status("a", GraphStatus.DONE, "12 entities", expect=GraphStatus.EXTRACTING)
    assert docs.get("a").graph_status == GraphStatus.PENDING and queue.graph_workers() == {}
    queue.claim_graph_next("worker-2")
    assert docs.set_graph_status("a", GraphStatus.DONE, "12 entities", fraction=1.0, expect=GraphStatus.EXTRACTING,
                                 timings={"graph_total_s": 2.0})
    a = docs.get("a")
    assert (a.graph_status, a.graph_message, a.timings) == (GraphStatus.DONE, "12 entities", {"graph_total_s": 2.0})
    assert stages.graph_progress() == {} and queue.claim_graph_next("worker-3") is None
    with pytest.raises(IllegalTransition):  # a done graph is queued again before it is extracted again
        docs.set_graph_status("a", GraphStatus.EXTRACTING)
    assert not docs.set_graph_status("gone", GraphStatus.PENDING)


@pytest.mark.slow
def test_claims_are_exclusive_across_processes(tmp_path):
    db_path = tmp_path / "db.sqlite"
    docs = SQLiteDocumentRecords(Database(db_path))
    for i in range(20):
        docs.insert(Document(id=f"d{i:02d}", filename=f"{i}.pdf"))
    script = (
        "import sys; sys.path.insert(0, %r)\n"
        "from core.store.sqlite_db import Database\n"
        "from core.store.sqlite_documents import SQLiteWorkQueue\n"
        "s = SQLiteWorkQueue(Database(%r)); got = []\n"
        "while (d := s.claim_next(sys.argv[1])) is not None: got.append(d.id)\n"
        "print(','.join(got))\n" % (str(REPO), str(db_path)))
    procs = [subprocess.Popen([sys.executable, "-c", script, f"w{i}"], stdout=subprocess.PIPE, text=True)
             for i in range(3)]
    claimed = [p.communicate(timeout=60)[0].strip() for p in procs]
    ids = [x for line in claimed for x in line.split(",") if x]
    assert sorted(ids) == [f"d{i:02d}" for i in range(20)], "every document claimed exactly once"


def test_chunk_store_replaces_a_documents_chunks_atomically(tmp_path):
    chunks = SQLiteChunkStore(Database(tmp_path / "db.sqlite"))
    make = lambda doc, i: Chunk(id=f"{doc}:{i}", doc_id=doc, index=i, kind="text", text=f"t{i}", pages=[0, 1],
                                item_indices=[i], section="S")
    chunks.put_doc_chunks("a", [make("a", i) for i in range(3)])
    chunks.put_doc_chunks("b", [make("b", 0)])
    chunks.put_doc_chunks("a", [make("a", 0)])
    assert [c.id for c in chunks.by_doc("a")] == ["a:0"]
    assert chunks.get_many(["a:0", "b:0", "a:2"]).keys() == {"a:0", "b:0"}
    assert chunks.get_many(["a:0"])["a:0"].pages == [0, 1]
    chunks.delete_doc("a")
    assert chunks.by_doc("a") == [] and chunks.sections() == ["S"]


def _fill(store, n=30):
    vectors = _vectors(n)
    store.upsert([f"w{i}" for i in range(n)], vectors, [f"text {i}" for i in range(n)],
                 [{"doc_id": "a" if i % 2 else "b", "chunk_id": f"c{i}", "kind": "text",
                   "items": [i, i + 1], "bbox": None} for i in range(n)])
    return vectors


@pytest.mark.slow
def test_chroma_persists_and_reopens_in_another_process(tmp_path):
    store = ChromaVectorStore(chroma_client(StoreConfig(), tmp_path / "chroma"), "test_windows")
    vectors = _fill(store)
    match = store.query(vectors[3], 1)[0]
    assert match.id == "w3" and match.score == pytest.approx(1.0, abs=1e-4)
    assert match.metadata["items"] == "3,4"
    assert all(m.metadata["doc_id"] == "b" for m in store.query(vectors[3], 5, filters=VectorFilter(doc_ids=["b"])))
    script = ("import sys; sys.path.insert(0, %r)\n"
              "from core.settings.config import StoreConfig\n"
              "from core.store.chroma_vectors import ChromaVectorStore, chroma_client\n"
              "s = ChromaVectorStore(chroma_client(StoreConfig(), __import__('pathlib').Path(%r)), 'test_windows')\n"
              "print(s.count(), sorted(s.doc_ids()))\n" % (str(REPO), str(tmp_path / "chroma")))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "30 ['a', 'b']", out.stderr
    store.delete_doc("a")
    assert store.count() == 15 and store.doc_ids() == {"b"}


def test_vector_filters_select_by_paper_kind_and_section(tmp_path):
    store = ChromaVectorStore(chroma_client(StoreConfig(), tmp_path / "chroma"), "filtered_windows")
    n = 24
    vectors = _vectors(n, seed=1)
    metas = [{"doc_id": "abc"[i % 3], "chunk_id": f"c{i}", "kind": ("text", "table")[i % 2],
              "section": ("Intro", "Method", "Results", "Method")[i % 4]} for i in range(n)]
    store.upsert([f"w{i}" for i in range(n)], vectors, [f"text {i}" for i in range(n)], metas)

    def found(filters):
        return {m.id for m in store.query(vectors[0], n, filters=filters)}

    def expected(keep):
        return {f"w{i}" for i in range(n) if keep(metas[i])}

    everything = expected(lambda m: True)
    assert found(None) == found(VectorFilter()) == everything, "None is no constraint"
    assert found(VectorFilter(doc_ids=["a", "c"])) == expected(lambda m: m["doc_id"] in "ac")
    assert found(VectorFilter(kinds=["table"])) == expected(lambda m: m["kind"] == "table")
    assert found(VectorFilter(sections=["Method"])) == expected(lambda m: m["section"] == "Method")
    both = VectorFilter(doc_ids=["b"], kinds=["text"], sections=["Intro", "Results"])
    assert found(both) == expected(lambda m: m["doc_id"] == "b" and m["kind"] == "text"
                                   and m["section"] in ("Intro", "Results")) != set()
    for nothing in (VectorFilter(doc_ids=[]), VectorFilter(kinds=[]), VectorFilter(doc_ids=["a"], sections=[])):
        assert store.query(vectors[0], n, filters=nothing) == [], "an empty list matches nothing"
    scores = [m.score for m in store.query(vectors[0], 5, filters=VectorFilter(doc_ids=["a"]))]
    assert scores == sorted(scores, reverse=True) and scores[0] == pytest.approx(1.0, abs=1e-4)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_chroma_server_where_nothing_listens_is_store_unavailable(tmp_path):
    port = _free_port()  # bound then released: nothing listens there now
    config = StoreConfig(chroma_host="127.0.0.1", chroma_port=port)
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match=f"cannot reach the Chroma server at 127.0.0.1:{port}"):
        chroma_client(config, tmp_path / "unused")
    # a liveness bound, not a speed target: the refusal is read at once instead of retried until some timeout
    assert time.monotonic() - started < 60, "a refused connection fails fast, not after a long timeout"


def test_query_history_keeps_the_newest_entries(tmp_path):
    history = QueryHistoryStore(Database(tmp_path / "db.sqlite"))
    for i in range(5):
        history.add(entry_id=f"e{i}", ts=float(i), question=f"q{i}", mode="naive", batch="", summary="s",
                    payload="{}", keep=3)
    assert [r["id"] for r in history.recent(10)] == ["e4", "e3", "e2"]
    assert history.recent(1)[0]["question"] == "q4"
    history.clear()
    assert history.recent(10) == []


@pytest.fixture
def chroma_server(tmp_path):
    chroma = Path(sys.executable).with_name("chroma")
    if not chroma.exists():
        pytest.skip("the chroma command is not installed in this environment")
    port = _free_port()
    env = dict(os.environ, ANONYMIZED_TELEMETRY="False")
    proc = subprocess.Popen([str(chroma), "run", "--host", "127.0.0.1", "--port", str(port), "--path",
                             str(tmp_path / "server")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.3)
        else:
            pytest.fail("chroma server did not start within 60 s")
        yield SimpleNamespace(port=port, proc=proc)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.slow
def test_chroma_http_client_against_a_real_server(chroma_server, tmp_path):
    config = StoreConfig(chroma_host="127.0.0.1", chroma_port=chroma_server.port)
    store = ChromaVectorStore(chroma_client(config, tmp_path / "unused"), "server_windows")
    vectors = _fill(store)
    assert store.query(vectors[7], 1)[0].id == "w7"
    assert {m.metadata["doc_id"] for m in store.query(vectors[7], 30, filters=VectorFilter(doc_ids=["a"]))} == {"a"}
    store.delete_doc("b")
    assert store.count() == 15
    assert not (tmp_path / "unused").exists(), "a server-backed store writes nothing locally"
    chroma_server.proc.terminate()
    chroma_server.proc.wait(timeout=30)
    with pytest.raises(StoreUnavailable, match=f"cannot reach the Chroma server at 127.0.0.1:{chroma_server.port}"):
        store.query(vectors[7], 1)


@pytest.mark.slow
def test_the_whole_pipeline_runs_against_a_chroma_server(chroma_server, tmp_path, monkeypatch):
    from core.library import open_library
    from core.pipeline.documents import add_pdf
    from core.pipeline.ingest import process_queue
    from core.query.search import search
    from core.settings.workspace import Workspace
    from tests import pdfs

    monkeypatch.setenv("CHROMA_HOST", "127.0.0.1")
    monkeypatch.setenv("CHROMA_PORT", str(chroma_server.port))
    lib = open_library(Workspace(tmp_path / "ws"))
    assert lib.settings.store.chroma_host == "127.0.0.1"
    add_pdf(lib, "paper.pdf", pdfs.make_paper_pdf(tmp_path / "paper.pdf", pages=1).read_bytes())
    (doc,) = process_queue(lib)
    assert doc.status.value == "ready", doc.message
    assert not (tmp_path / "ws" / "chroma").exists(), "vectors went to the server, not the workspace"
    hits = search(lib, "purple walrus hypothesis", top_k=2)
    assert hits and "purple walrus" in hits[0].chunk.text
