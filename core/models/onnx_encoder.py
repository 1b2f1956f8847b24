"""The `onnx` embedding variant: the sentence-transformers model's transformer exported here, once, with torch.onnx
(nothing is downloaded) and run by ONNX Runtime, with the model's own pooling and normalisation in numpy.

The export is cached on disk under a key of the weights' digest, torch's version and the opset, written beside
its target and renamed into place (two processes exporting at once both end with a whole file). Measured here:
vectors within 1e-5 cosine of torch's, ~1.5x the windows per second, and a one-thread query in 30 ms vs 46.

Once exported, the model loads without torch or sentence-transformers (`OnnxEncoder.from_cache`): the folder's own
sentence-transformers config says what the modules are, and the `tokenizers` library reads its tokenizer. That
import was ~5 of the 5.3 CPU-s a process paid to embed its first text: every compute worker and every app start."""
from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np

from core.models.registry import thread_budget

OPSET = 17
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class OnnxUnavailable(RuntimeError):
    pass


def cache_dir() -> Path:
    """$PAPERGRAPH_CACHE_DIR, else $XDG_CACHE_HOME/papergraph, else ~/.cache/papergraph: a derived file any
    workspace can share, never the repository or the installed package."""
    explicit = os.environ.get("PAPERGRAPH_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "papergraph"


def _weights_digest(model_dir: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(model_dir.glob("*.safetensors")) + sorted(model_dir.glob("*.bin")) + [model_dir / "config.json"]:
        if path.is_file():
            digest.update(path.name.encode())
            with path.open("rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()[:24]


def _export(transformer, target: Path, tokenizer) -> None:
    import torch

    class _Wrapped(torch.nn.Module):  # keyword arguments: transformers 5's forward takes more than these three
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    sample = tokenizer(["an example sentence"], return_tensors="pt")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.stem}-{uuid.uuid4().hex[:8]}.onnx")
    axes = {name: {0: "batch", 1: "tokens"} for name in (*_INPUTS, "last_hidden_state")}
    try:
        with torch.no_grad():
            torch.onnx.export(_Wrapped(transformer).eval(), tuple(sample[k] for k in _INPUTS), str(tmp),
                              input_names=list(_INPUTS), output_names=["last_hidden_state"], dynamic_axes=axes,
                              opset_version=OPSET, dynamo=False)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _torch_version() -> str:
    """torch's version without importing it (seconds): part of the export's cache key."""
    try:
        return version("torch").split("+")[0]
    except PackageNotFoundError:
        return "none"


def export_path(model_dir: Path) -> Path:
    return cache_dir() / "onnx" / f"{_weights_digest(Path(model_dir))}-torch{_torch_version()}-opset{OPSET}.onnx"


def plain_model(model_dir: Path) -> tuple[int, int] | None:
    """(max tokens, dimension) when the folder's sentence-transformers config is a transformer, mean pooling and
    normalisation, read from its JSON files; None for anything else (or unreadable)."""
    try:
        modules = json.loads((model_dir / "modules.json").read_text(encoding="utf-8"))
        if [str(m["type"]).rsplit(".", 1)[-1] for m in modules] != ["Transformer", "Pooling", "Normalize"]:
            return None
        pooling = json.loads((model_dir / modules[1]["path"] / "config.json").read_text(encoding="utf-8"))
        other_modes = ("pooling_mode_cls_token", "pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens")
        if not pooling.get("pooling_mode_mean_tokens") or any(pooling.get(k) for k in other_modes):
            return None
        config = json.loads((model_dir / "sentence_bert_config.json").read_text(encoding="utf-8"))
        return int(config["max_seq_length"]), int(pooling["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


def _hf_tokenize(tokenizer, max_tokens: int) -> Callable[[list[str]], dict[str, np.ndarray]]:
    def tokenize(texts: list[str]) -> dict[str, np.ndarray]:
        enc = tokenizer(texts, padding=True, truncation=True, max_length=max_tokens, return_tensors="np")
        return {k: np.asarray(enc[k], dtype=np.int64) for k in _INPUTS if k in enc}
    return tokenize


def _rust_tokenize(model_dir: Path, max_tokens: int) -> Callable[[list[str]], dict[str, np.ndarray]]:
    """The folder's tokenizer.json through `tokenizers`, truncated and padded as transformers' fast tokenizer
    (which wraps the same file) does for sentence-transformers."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    try:
        special = json.loads((model_dir / "special_tokens_map.json").read_text(encoding="utf-8"))
        pad = special.get("pad_token", "[PAD]")
        pad = pad.get("content", "[PAD]") if isinstance(pad, dict) else str(pad)
    except (OSError, ValueError):
        pad = "[PAD]"
    pad_id = tokenizer.token_to_id(pad)
    if pad_id is None:
        raise OnnxUnavailable(f"the tokenizer of {model_dir.name} has no padding token {pad!r}")
    tokenizer.enable_truncation(max_tokens)
    tokenizer.enable_padding(pad_id=pad_id, pad_token=pad)

    def tokenize(texts: list[str]) -> dict[str, np.ndarray]:
        encodings = tokenizer.encode_batch(texts)
        return {"input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64)}
    return tokenize


class OnnxEncoder:
    """encode(texts) → L2-normalised mean-pooled vectors, as SentenceTransformer.encode gives for MiniLM."""

    @classmethod
    def from_cache(cls, model_dir: Path) -> OnnxEncoder | None:
        """The encoder of an already exported plain model, loaded without torch; None when there is no export yet
        or the model is not plain (the caller loads sentence-transformers and exports)."""
        model_dir = Path(model_dir)
        described = plain_model(model_dir)
        if described is None or not (model_dir / "tokenizer.json").is_file():
            return None
        path = export_path(model_dir)
        if not path.is_file():
            return None
        encoder = cls.__new__(cls)
        encoder.max_tokens, encoder.dim = described
        encoder.path = path
        encoder._tokenize = _rust_tokenize(model_dir, encoder.max_tokens)
        encoder._open_sessions()
        return encoder

    def __init__(self, model_dir: Path, st_model, max_tokens: int):
        modules = list(st_model)
        pooling = modules[1] if len(modules) > 1 else None
        if len(modules) != 3 or getattr(pooling, "pooling_mode", "mean") != "mean" \
                or type(modules[2]).__name__ != "Normalize":
            raise OnnxUnavailable("the onnx variant supports transformer + mean pooling + normalise models only; "
                                  f"this one is {[type(m).__name__ for m in modules]}")
        self.max_tokens = max_tokens
        self.dim = int(st_model.get_embedding_dimension())
        self._tokenize = _hf_tokenize(st_model.tokenizer, max_tokens)
        self.path = export_path(Path(model_dir))
        if not self.path.exists():
            try:
                _export(modules[0].auto_model, self.path, st_model.tokenizer)
            except Exception as exc:  # the `onnx` package missing, an unsupported layer: say so, load nothing
                raise OnnxUnavailable(f"the ONNX export of {model_dir.name} failed: {type(exc).__name__}: {exc}"
                                      ) from exc
        self._open_sessions()

    def _open_sessions(self) -> None:
        import onnxruntime as ort

        try:
            self._sessions = {n: self._session(ort, n) for n in {1, thread_budget()}}
        except Exception as exc:  # e.g. a cached file cut short by a full disk: say so, the caller falls back
            raise OnnxUnavailable(f"ONNX Runtime cannot load {self.path}: {type(exc).__name__}: {exc}") from exc

    def _session(self, ort, threads: int):
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        return ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])

    def encode(self, texts: list[str], one_thread: bool = False) -> np.ndarray:
        feeds = self._tokenize(list(texts))
        if "token_type_ids" not in feeds:
            feeds["token_type_ids"] = np.zeros_like(feeds["input_ids"])
        session = self._sessions[1] if one_thread else self._sessions[max(self._sessions)]
        hidden = session.run(None, feeds)[0]
        mask = feeds["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
