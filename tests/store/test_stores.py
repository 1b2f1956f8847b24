"""The storage backends for real: SQLite registry and chunks, Chroma embedded and as a server."""
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from core.schema.records import Chunk, DocStatus, Document
from core.settings.config import StoreConfig
from core.store.chroma_vectors import ChromaVectorStore, chroma_client
from core.store.sqlite_chunks import SQLiteChunkStore
from core.store.sqlite_db import Database
from core.store.sqlite_documents import SQLiteDocumentStore
from tests.paths import REPO


def _vectors(n, dim=8, seed=0):
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_document_registry_status_machine(tmp_path):
    docs = SQLiteDocumentStore(Database(tmp_path / "db.sqlite"))
    assert docs.insert(Document(id="a", filename="a.pdf"))
    assert not docs.insert(Document(id="a", filename="again.pdf")), "a repeat insert is a no-op"
    assert docs.insert(Document(id="b", filename="b.pdf"))
    claimed = docs.claim_next("worker-1")
    assert claimed.id == "a" and claimed.status == DocStatus.PARSING
    assert docs.claim_next("worker-2").id == "b"
    assert docs.claim_next("worker-3") is None
    docs.set_status("a", DocStatus.READY, "done", pages=3, timings={"parse_s": 1.5}, item_counts={"text": 4})
    a = docs.get("a")
    assert (a.status, a.message, a.pages, a.timings, a.item_counts) == (DocStatus.READY, "done", 3,
                                                                         {"parse_s": 1.5}, {"text": 4})
    assert docs.ids_with_status(DocStatus.READY) == ["a"]
    with pytest.raises(ValueError):
        docs.update("a", not_a_column=1)
    docs.delete("a")
    assert docs.get("a") is None and [d.id for d in docs.list()] == ["b"]


def test_claims_are_exclusive_across_processes(tmp_path):
    db_path = tmp_path / "db.sqlite"
    docs = SQLiteDocumentStore(Database(db_path))
    for i in range(20):
        docs.insert(Document(id=f"d{i:02d}", filename=f"{i}.pdf"))
    script = (
        "import sys; sys.path.insert(0, %r)\n"
        "from core.store.sqlite_db import Database\n"
        "from core.store.sqlite_documents import SQLiteDocumentStore\n"
        "s = SQLiteDocumentStore(Database(%r)); got = []\n"
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


def test_chroma_persists_and_reopens_in_another_process(tmp_path):
    store = ChromaVectorStore(chroma_client(StoreConfig(), tmp_path / "chroma"), "test_windows")
    vectors = _fill(store)
    match = store.query(vectors[3], 1)[0]
    assert match.id == "w3" and match.score == pytest.approx(1.0, abs=1e-4)
    assert match.metadata["items"] == "3,4"
    assert all(m.metadata["doc_id"] == "b" for m in store.query(vectors[3], 5, where={"doc_id": "b"}))
    script = ("import sys; sys.path.insert(0, %r)\n"
              "from core.settings.config import StoreConfig\n"
              "from core.store.chroma_vectors import ChromaVectorStore, chroma_client\n"
              "s = ChromaVectorStore(chroma_client(StoreConfig(), __import__('pathlib').Path(%r)), 'test_windows')\n"
              "print(s.count(), sorted(s.doc_ids()))\n" % (str(REPO), str(tmp_path / "chroma")))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "30 ['a', 'b']", out.stderr
    store.delete_doc("a")
    assert store.count() == 15 and store.doc_ids() == {"b"}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_chroma_http_client_against_a_real_server(chroma_server, tmp_path):
    config = StoreConfig(chroma_host="127.0.0.1", chroma_port=chroma_server)
    store = ChromaVectorStore(chroma_client(config, tmp_path / "unused"), "server_windows")
    vectors = _fill(store)
    assert store.query(vectors[7], 1)[0].id == "w7"
    store.delete_doc("b")
    assert store.count() == 15
    assert not (tmp_path / "unused").exists(), "a server-backed store writes nothing locally"


def test_the_whole_pipeline_runs_against_a_chroma_server(chroma_server, tmp_path, monkeypatch):
    from core.library import open_library
    from core.pipeline.documents import add_pdf
    from core.pipeline.ingest import process_queue
    from core.query.search import search
    from core.settings.workspace import Workspace
    from tests import pdfs

    monkeypatch.setenv("CHROMA_HOST", "127.0.0.1")
    monkeypatch.setenv("CHROMA_PORT", str(chroma_server))
    lib = open_library(Workspace(tmp_path / "ws"))
    assert lib.settings.store.chroma_host == "127.0.0.1"
    add_pdf(lib, "paper.pdf", pdfs.make_paper_pdf(tmp_path / "paper.pdf", pages=1).read_bytes())
    (doc,) = process_queue(lib)
    assert doc.status.value == "ready", doc.message
    assert not (tmp_path / "ws" / "chroma").exists(), "vectors went to the server, not the workspace"
    hits = search(lib, "purple walrus hypothesis", top_k=2)
    assert hits and "purple walrus" in hits[0].chunk.text
