"""Embedded Chroma and a second process: what the CLI's ingest (or the API server, or the app) writes into the
workspace's vectors is found by the process that had the folder open before, without a restart. Chroma keeps a
folder's index in each process's memory; that process's queries failed with "Error finding id"."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from core.settings.config import StoreConfig
from core.store.base import VectorFilter
from core.store.chroma_vectors import ChromaVectorStore, chroma_client
from tests.paths import REPO

DIM = 16
WRITE_ELSEWHERE = """
import sys; sys.path.insert(0, {repo!r})
import numpy as np
from pathlib import Path
from core.settings.config import StoreConfig
from core.store.chroma_vectors import ChromaVectorStore, chroma_client
s = ChromaVectorStore(chroma_client(StoreConfig(), Path({folder!r})), "windows")
v = np.random.default_rng(7).normal(size=(6, {dim})).astype(np.float32)
s.upsert([f"new{{i}}" for i in range(6)], v, [f"new text {{i}}" for i in range(6)], [{{"doc_id": "new"}}] * 6)
np.save({out!r}, v)
"""


def _store(folder):
    return ChromaVectorStore(chroma_client(StoreConfig(), folder), "windows")


@pytest.mark.slow
def test_vectors_another_process_wrote_are_found_without_a_restart(tmp_path):
    folder = tmp_path / "chroma"
    store = _store(folder)
    old = np.random.default_rng(1).normal(size=(6, DIM)).astype(np.float32)
    store.upsert([f"old{i}" for i in range(6)], old, [f"old text {i}" for i in range(6)], [{"doc_id": "old"}] * 6)
    assert store.query(old[0], 3, filters=VectorFilter(doc_ids=["old", "new"]))[0].id == "old0"

    script = WRITE_ELSEWHERE.format(repo=str(REPO), folder=str(folder), dim=DIM, out=str(tmp_path / "new.npy"))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    new = np.load(tmp_path / "new.npy")

    stale_client = store.client
    hits = store.query(new[2], 3, filters=VectorFilter(doc_ids=["old", "new"]))
    assert hits[0].id == "new2" and hits[0].score == pytest.approx(1.0, abs=1e-4)
    assert store.client is not stale_client  # read again, once
    assert store.count() == 12 and store.doc_ids() == {"old", "new"}
    # Another store of this process on the same folder takes the fresh client instead of opening a third.
    other = _store(folder)
    assert other.client is store.client
    # Writing here after the reopen still works and is found.
    store.upsert(["late"], new[:1] * -1, ["late text"], [{"doc_id": "old"}])
    assert store.query(new[0] * -1, 1)[0].id == "late"


@pytest.mark.slow
def test_a_collection_still_empty_when_opened_here_is_read_once_another_process_filled_it(tmp_path):
    folder = tmp_path / "chroma"
    store = _store(folder)
    assert store.count() == 0  # the app opened a new workspace; then the CLI ingests into it
    script = WRITE_ELSEWHERE.format(repo=str(REPO), folder=str(folder), dim=DIM, out=str(tmp_path / "new.npy"))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    new = np.load(tmp_path / "new.npy")
    assert store.query(new[4], 1)[0].id == "new4"  # failed: "Error creating hnsw segment reader"
    assert store.query(new[5], 1, filters=VectorFilter(doc_ids=["new"]))[0].id == "new5"


def test_any_other_chroma_error_reaches_the_pages_as_store_unavailable(tmp_path):
    from core.store.base import StoreUnavailable

    store = _store(tmp_path / "chroma")
    store.upsert(["x"], np.ones((1, DIM), dtype=np.float32), ["x"], [{"doc_id": "d"}])
    # A query in another vector space (an embedding model switched without `reembed`): said, not a traceback.
    with pytest.raises(StoreUnavailable, match=r"the vector index 'windows' failed: .*dimension"):
        store.query(np.ones(DIM * 2, dtype=np.float32), 1)
