"""A prompt-hash cache in front of any ChatModel, and a log of every call for the usage summary.

Re-running an extraction over the same chunks with the same model and prompt costs nothing the second time. The
replies and the log live in the library's LLMCacheStore (core.store.sqlite_llm_cache: the workspace's SQLite file); this
module decides what a key hashes and what may be stored. Only replies are stored: never a key, and never an
error (a failure must be retried).
"""
from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator, Sequence
from typing import Any

from core.models.llm.base import ChatModel, ChatReply, LLMError, Message
from core.store.base import LLMCacheStore


def cache_key(model_name: str, messages: Sequence[Message], response_format: dict[str, Any] | None,
              max_tokens: int | None, temperature: float | None, **extra: Any) -> str:
    """sha256 of canonical JSON: the same request, however its dicts were built, is the same key. `extra`: the
    request's other knobs (a grammar, logprobs asked for) when set; unset, keys stay those of earlier versions."""
    payload = [model_name, list(messages), response_format, max_tokens, temperature]
    if any(extra.values()):
        payload.append({k: v for k, v in extra.items() if v})
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class CachedChatModel:
    def __init__(self, inner: ChatModel, store: LLMCacheStore):
        self.inner = inner
        self.store = store
        self.name = inner.name  # what ran is the inner model, cached or not
        self.accepts_grammar = getattr(inner, "accepts_grammar", False)

    def chat(self, messages: Sequence[Message], *, purpose: str = "", response_format: dict[str, Any] | None = None,
             max_tokens: int | None = None, temperature: float | None = None, top_logprobs: int = 0,
             grammar: str | None = None) -> ChatReply:
        key = cache_key(self.name, messages, response_format, max_tokens, temperature, top_logprobs=top_logprobs,
                        grammar=grammar)
        started = time.monotonic()
        row = self.store.get(key)
        if row is not None:
            meta = json.loads(row.get("meta") or "{}")
            reply = ChatReply(text=row["text"], model=self.name, prompt_tokens=row["prompt_tokens"],
                              completion_tokens=row["completion_tokens"], latency_s=time.monotonic() - started,
                              cached=True, top_logprobs=meta.get("top_logprobs"))
            self._log(purpose, reply)
            return reply
        extra: dict[str, Any] = {"top_logprobs": top_logprobs} if top_logprobs else {}
        if grammar is not None:
            extra["grammar"] = grammar
        try:
            reply = self.inner.chat(messages, purpose=purpose, response_format=response_format,
                                    max_tokens=max_tokens, temperature=temperature, **extra)
        except Exception as exc:
            self._log(purpose, None, latency_s=time.monotonic() - started, error=_error_text(exc))
            raise
        meta = {"top_logprobs": reply.top_logprobs} if reply.top_logprobs else None
        self.store.put(key, self.name, reply.text, reply.prompt_tokens, reply.completion_tokens,
                       meta=json.dumps(meta) if meta else None)
        self._log(purpose, reply)
        return reply

    def has_cached_stream(self, messages: Sequence[Message], *, max_tokens: int | None = None,
                          temperature: float | None = None) -> bool:
        """Whether streaming these messages would be replayed from the cache (no call made)."""
        return self.store.has(self._stream_key(messages, max_tokens, temperature))

    def stream(self, messages: Sequence[Message], *, purpose: str = "", max_tokens: int | None = None,
               temperature: float | None = None) -> Iterator[str]:
        """The same prompt streamed again is replayed from the cache in one piece; a stream is stored only once
        it has ended well, so an interrupted answer is never replayed as if complete."""
        key = self._stream_key(messages, max_tokens, temperature)
        started = time.monotonic()
        row = self.store.get(key)
        if row is not None:
            self._log(purpose, ChatReply(text=row["text"], model=self.name, latency_s=time.monotonic() - started,
                                         cached=True), streamed=True)
            yield row["text"]
            return
        error, pieces, finished = "", [], False
        try:
            for piece in self.inner.stream(messages, purpose=purpose, max_tokens=max_tokens, temperature=temperature):
                pieces.append(piece)
                yield piece
            finished = True
        except Exception as exc:
            error = _error_text(exc)
            raise
        finally:
            self._log(purpose, None, latency_s=time.monotonic() - started, error=error, streamed=True)
            if finished:
                self.store.put(key, self.name, "".join(pieces))

    def _stream_key(self, messages: Sequence[Message], max_tokens: int | None, temperature: float | None) -> str:
        # A streamed reply is stored apart from a non-streamed one to the same messages (a marker in the key).
        return cache_key(self.name, messages, {"stream": True}, max_tokens, temperature)

    def _log(self, purpose: str, reply: ChatReply | None, *, latency_s: float = 0.0, error: str = "",
             streamed: bool = False) -> None:
        self.store.log_call(model=self.name, purpose=purpose, prompt_tokens=reply.prompt_tokens if reply else 0,
                            completion_tokens=reply.completion_tokens if reply else 0,
                            latency_s=reply.latency_s if reply else latency_s, cached=bool(reply and reply.cached),
                            streamed=streamed, error=error)


def _error_text(exc: Exception) -> str:
    # LLMError messages are written for users and already redacted; anything else is named, not dumped.
    return str(exc)[:500] if isinstance(exc, LLMError) else type(exc).__name__


def usage_summary(store: LLMCacheStore) -> dict[str, Any]:
    """What the LLM cost so far: calls actually made (misses, streams and failures), cache hits, the tokens and
    seconds those calls spent, overall and per purpose."""
    rows = store.usage_by_purpose()
    keys = ("calls", "cache_hits", "errors", "prompt_tokens", "completion_tokens", "latency_s")
    total: dict[str, Any] = {k: 0 for k in keys}
    by_purpose: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry = {k: row[k] or 0 for k in keys}
        by_purpose[row["purpose"]] = entry
        for k in keys:
            total[k] += entry[k]
    total["latency_s"] = float(total["latency_s"])
    return {**total, "by_purpose": by_purpose}
