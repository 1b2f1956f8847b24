"""The `onnx` embedding variant: the sentence-transformers model's transformer exported here, once, with torch.onnx
(nothing is downloaded) and run by ONNX Runtime, with the model's own pooling and normalisation in numpy.

The export is cached on disk under a key of the weights' digest, torch's version and the opset, written beside
its target and renamed into place (two processes exporting at once both end with a whole file). Measured here:
vectors within 1e-5 cosine of torch's, ~1.5x the windows per second, and a one-thread query in 30 ms vs 46."""
from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

import numpy as np

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


class OnnxEncoder:
    """encode(texts) → L2-normalised mean-pooled vectors, as SentenceTransformer.encode gives for MiniLM."""

    def __init__(self, model_dir: Path, st_model, max_tokens: int):
        import onnxruntime as ort
        import torch

        modules = list(st_model)
        pooling = modules[1] if len(modules) > 1 else None
        if len(modules) != 3 or getattr(pooling, "pooling_mode", "mean") != "mean" \
                or type(modules[2]).__name__ != "Normalize":
            raise OnnxUnavailable("the onnx variant supports transformer + mean pooling + normalise models only; "
                                  f"this one is {[type(m).__name__ for m in modules]}")
        self.tokenizer = st_model.tokenizer
        self.max_tokens = max_tokens
        key = f"{_weights_digest(Path(model_dir))}-torch{torch.__version__.split('+')[0]}-opset{OPSET}"
        self.path = cache_dir() / "onnx" / f"{key}.onnx"
        if not self.path.exists():
            try:
                _export(modules[0].auto_model, self.path, self.tokenizer)
            except Exception as exc:  # the `onnx` package missing, an unsupported layer: say so, load nothing
                raise OnnxUnavailable(f"the ONNX export of {model_dir.name} failed: {type(exc).__name__}: {exc}"
                                      ) from exc
        try:
            self._sessions = {n: self._session(ort, n) for n in {1, max(1, torch.get_num_threads())}}
        except Exception as exc:  # e.g. a cached file cut short by a full disk: say so, the caller falls back
            raise OnnxUnavailable(f"ONNX Runtime cannot load {self.path}: {type(exc).__name__}: {exc}") from exc

    def _session(self, ort, threads: int):
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        return ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])

    def encode(self, texts: list[str], one_thread: bool = False) -> np.ndarray:
        enc = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.max_tokens,
                             return_tensors="np")
        feeds = {k: np.asarray(enc[k], dtype=np.int64) for k in _INPUTS if k in enc}
        if "token_type_ids" not in feeds:
            feeds["token_type_ids"] = np.zeros_like(feeds["input_ids"])
        session = self._sessions[1] if one_thread else self._sessions[max(self._sessions)]
        hidden = session.run(None, feeds)[0]
        mask = feeds["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
