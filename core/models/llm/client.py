"""A ChatModel over any OpenAI-compatible endpoint (OpenAI, Ollama /v1, vLLM, LM Studio) through the `openai` package.

The package's own retries are off (max_retries=0): ours count attempts, cap Retry-After, share one concurrency
limit per endpoint and model across instances, and end in an LLMError that says what to fix.

Each attempt has a total deadline of `timeout_s` (core.models.llm.deadline): connecting, the first byte and the
whole body, streamed or not, so a server that trickles or stalls costs at most `timeout_s` per attempt.
"""
from __future__ import annotations

import email.utils
import logging
import random
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
import openai

from core.models.llm.base import ChatReply, LLMError, Message, read_top_logprobs
from core.models.llm.deadline import http_client, until
from core.models.llm.secrets import NO_KEY, missing_key_hint, redact
from core.models.registry import resources
from core.settings.config import LLMConfig

log = logging.getLogger(__name__)
T = TypeVar("T")
_END = object()

# 408/409 are what OpenAI's own client also treats as transient; every other 4xx is the request's fault.
RETRYABLE_STATUS = {408, 409, 429}
_TIMES = {1: "once", 2: "twice", 3: "three times", 4: "four times", 5: "five times", 6: "six times"}


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    backoff_s: float = 1.0  # first wait; doubles each attempt
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 60.0  # a server asking for longer is not waited on for that long

    def delay(self, attempt: int, retry_after_s: float | None) -> float:
        if retry_after_s is not None:
            return min(max(retry_after_s, 0.0), self.max_retry_after_s)
        # Jitter spreads the workers that failed together so they do not retry in lockstep.
        base = min(self.backoff_s * 2 ** attempt, self.max_backoff_s)
        return base * random.uniform(0.5, 1.0)


# ---------------------------------------------------------------------------------------------- concurrency

def shared_limit(base_url: str, model: str, concurrency: int) -> threading.BoundedSemaphore:
    """One semaphore per (endpoint, model, limit) in the process (core.models.registry), so the pipeline's many
    instances share a budget. A changed limit gives new instances another semaphore; calls in flight keep theirs."""
    key = ("llm-limit", base_url.rstrip("/"), model, concurrency)
    return resources.get(key, lambda: threading.BoundedSemaphore(max(1, concurrency)))


# ---------------------------------------------------------------------------------------------- errors

class LLMCallError(LLMError):
    """An LLMError that also says what kind of failure it was, for callers that act on it (the connection check
    lists the served models on "model_missing"; a batch can stop at "auth" rather than fail every chunk)."""

    KINDS = ("timeout", "network", "auth", "model_missing", "no_route", "http", "rejected", "protocol")

    def __init__(self, message: str, *, kind: str, status: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.status = status


def times(n: int) -> str:
    return _TIMES.get(n, f"{n} times")


def seconds(value: float) -> str:
    return f"{value:g} s"


def refused(host: str) -> str:
    return f"connection refused: nothing is listening at {host or 'that address'} (is Ollama, vLLM or LM Studio " \
           "running?)"


def network_failure(exc: BaseException, host: str = "") -> str:
    """What a connection-level failure was, from the OS error under openai's and httpx's wrappers."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, socket.gaierror):
            return f"the DNS name {host!r} was not found" if host else "the DNS name was not found"
        if isinstance(cause, ConnectionRefusedError):
            return refused(host)
        if isinstance(cause, ssl.SSLCertVerificationError):
            return f"TLS error: the server's certificate is not trusted ({cause.verify_message})"
        if isinstance(cause, ssl.SSLError):
            hint = " (is the server plain http?)" if "WRONG_VERSION_NUMBER" in str(cause) else ""
            return f"TLS error: {cause.reason or cause}{hint}"
        if isinstance(cause, (httpx.TimeoutException, openai.APITimeoutError, TimeoutError)):
            return "timed out"
        if isinstance(cause, httpx.RemoteProtocolError):  # it answered, but broke off or did not speak HTTP
            return f"the server broke off its reply or did not answer in HTTP ({str(cause)[:160]})"
        cause = cause.__cause__ or cause.__context__
    text = str(exc)
    # httpcore sometimes keeps only the message of the OS error it wrapped.
    if "Name or service not known" in text or "nodename nor servname" in text or "name resolution" in text:
        return f"the DNS name {host!r} was not found" if host else "the DNS name was not found"
    if "Connection refused" in text:
        return refused(host)
    return f"connection failed ({text or type(exc).__name__})"


def server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        return str(body.get("message") or body.get("detail") or body.get("error") or "")[:300]
    text = str(body or "").strip()
    return "an HTML page" if text.startswith("<") else text[:300]


def is_model_missing(exc: openai.APIStatusError) -> bool:
    """A 404 about the model (OpenAI, vLLM, Ollama all name it) rather than a URL with no such route."""
    body = exc.body if isinstance(exc.body, dict) else {}
    text = f"{body.get('code', '')} {body.get('message', '')}".lower()
    return "model" in text


def retry_after(exc: openai.APIStatusError) -> float | None:
    headers = exc.response.headers
    if headers.get("retry-after-ms"):
        try:
            return float(headers["retry-after-ms"]) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:  # the other form HTTP allows: a date
        return email.utils.parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError):
        return None


# ---------------------------------------------------------------------------------------------- the model

class OpenAIChatModel:
    def __init__(self, base_url: str, model: str, api_key: str | None = None, *, timeout_s: float = 120.0,
                 max_retries: int = 4, concurrency: int = 4, temperature: float = 0.0, max_tokens: int = 2048,
                 retry: RetryPolicy | None = None):
        if not base_url or not model:
            raise LLMError("an OpenAI-compatible LLM needs a base URL and a model name")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{model}"
        self.timeout_s = timeout_s
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.retry = retry or RetryPolicy(max_retries=max_retries)
        self._key = api_key or None  # kept only to redact it from messages
        self._limit = shared_limit(self.base_url, model, concurrency)
        self._client = openai.OpenAI(base_url=self.base_url, api_key=api_key or NO_KEY, max_retries=0,
                                     timeout=timeout_s, http_client=http_client(timeout_s))
        # Resolved now: the first access imports openai's chat resources (~1 s), which must not eat into the
        # first call's deadline.
        self._completions = self._client.chat.completions

    @classmethod
    def from_config(cls, config: LLMConfig, api_key: str | None, retry: RetryPolicy | None = None
                    ) -> OpenAIChatModel:
        return cls(config.base_url, config.model, api_key, timeout_s=config.timeout_s,
                   max_retries=config.max_retries, concurrency=config.concurrency, temperature=config.temperature,
                   max_tokens=config.max_tokens, retry=retry)

    def __repr__(self) -> str:  # never the key
        return f"OpenAIChatModel({self.base_url!r}, {self.model!r})"

    # --- ChatModel ---
    def chat(self, messages: Sequence[Message], *, purpose: str = "", response_format: dict[str, Any] | None = None,
             max_tokens: int | None = None, temperature: float | None = None, top_logprobs: int = 0,
             grammar: str | None = None) -> ChatReply:
        if grammar is not None:
            raise LLMError("an OpenAI-compatible endpoint takes a JSON schema, not a grammar")
        kwargs = self._request(messages, max_tokens, temperature)
        if response_format is not None:
            kwargs["response_format"] = response_format
        if top_logprobs:
            kwargs.update(logprobs=True, top_logprobs=min(top_logprobs, 20))
        with self._limit:
            started = time.monotonic()
            _, completion = self._with_retries(
                lambda: self._timed(lambda: self._completions.create(**kwargs)), purpose)
            latency = time.monotonic() - started
        if not getattr(completion, "choices", None):
            raise LLMCallError(f"the LLM endpoint {self.base_url} answered with something that is not a chat "
                               f"completion (no choices)", kind="protocol")
        usage = completion.usage
        return ChatReply(text=completion.choices[0].message.content or "", model=self.name,
                         prompt_tokens=(usage.prompt_tokens or 0) if usage else 0,
                         completion_tokens=(usage.completion_tokens or 0) if usage else 0, latency_s=latency,
                         top_logprobs=_logprobs_of(completion.choices[0]) if top_logprobs else None)

    def stream(self, messages: Sequence[Message], *, purpose: str = "", max_tokens: int | None = None,
               temperature: float | None = None) -> Iterator[str]:
        kwargs = self._request(messages, max_tokens, temperature)
        with self._limit:
            # Only opening the stream is retried: once text has been handed out, a retry would repeat it.
            at, chunks = self._with_retries(
                lambda: self._timed(lambda: self._completions.create(stream=True, **kwargs)), purpose)
            pieces = iter(chunks)
            try:
                while True:
                    # The body is read here, on the consumer's thread: the opening attempt's deadline goes with it.
                    with until(at):
                        chunk = next(pieces, _END)
                    if chunk is _END:
                        break
                    if chunk.choices and chunk.choices[0].delta.content:
                        yield chunk.choices[0].delta.content
            except (openai.OpenAIError, httpx.HTTPError) as exc:  # the body is read outside openai's wrappers
                raise self._error(exc, 1, streaming=True) from None
            finally:
                chunks.close()

    # --- internals ---
    def _request(self, messages: Sequence[Message], max_tokens: int | None, temperature: float | None
                 ) -> dict[str, Any]:
        return {"model": self.model, "messages": list(messages),
                "max_tokens": self.max_tokens if max_tokens is None else max_tokens,
                "temperature": self.temperature if temperature is None else temperature}

    def _timed(self, call: Callable[[], T]) -> tuple[float, T]:
        """One attempt within its deadline; returns the deadline too, for reading a streamed body later."""
        with until(time.monotonic() + self.timeout_s) as at:
            return at, call()

    def _with_retries(self, call: Callable[[], T], purpose: str) -> T:
        attempt = 0
        while True:
            try:
                return call()
            except (openai.APIConnectionError, openai.APIStatusError) as exc:
                status = getattr(exc, "status_code", None)
                transient = status is None or status in RETRYABLE_STATUS or status >= 500
                if not transient or attempt >= self.retry.max_retries:
                    raise self._error(exc, attempt + 1) from None
                wait = self.retry.delay(attempt, retry_after(exc) if status else None)
                log.info("LLM %s (%s): %s, retry %d/%d in %.1f s", self.name, purpose or "chat",
                         f"HTTP {status}" if status else type(exc).__name__, attempt + 1, self.retry.max_retries,
                         wait)
                time.sleep(wait)
                attempt += 1
            except (openai.OpenAIError, ValueError) as exc:  # a 200 whose body is not JSON, or not a completion
                raise self._error(exc, attempt + 1) from None

    def _error(self, exc: Exception, attempts: int, streaming: bool = False) -> LLMCallError:
        """The message a user can act on. Raised `from None` so the request (and its headers) stays out of
        tracebacks and logs."""
        where = f"the LLM endpoint {self.base_url}"
        tries = f" ({attempts} attempts)" if attempts > 1 else ""
        status = getattr(exc, "status_code", None)
        if isinstance(exc, (openai.APITimeoutError, httpx.TimeoutException)):
            kind, message = "timeout", f"{where} timed out after {seconds(self.timeout_s)}{tries}: " + (
                "the streamed reply was still unfinished at its deadline" if streaming else
                "no complete reply within the deadline")
        elif isinstance(exc, (openai.APIConnectionError, httpx.TransportError)):
            url = httpx.URL(self.base_url)
            host = f"{url.host}:{url.port}" if url.port else url.host
            failure = network_failure(exc, host)
            kind = "protocol" if failure.startswith("the server broke off") else "network"
            message = (f"{where} failed: {failure}{tries}" if kind == "protocol" else
                       f"could not reach {where}: {failure}{tries}")
        elif isinstance(exc, openai.AuthenticationError):
            kind, message = "auth", f"{where} rejected the API key (HTTP 401)" + (
                "" if self._key else f": none is set for this endpoint ({missing_key_hint(self.base_url)})")
        elif isinstance(exc, openai.PermissionDeniedError):
            kind, message = "auth", (f"{where} refused access (HTTP 403): the API key may not be allowed to use "
                                     f"model '{self.model}'")
        elif isinstance(exc, openai.NotFoundError) and is_model_missing(exc):
            kind, message = "model_missing", f"model '{self.model}' not found at {self.base_url}"
        elif isinstance(exc, openai.NotFoundError):
            kind, message = "no_route", (f"{where} has no /chat/completions (HTTP 404): it is not an "
                                         f"OpenAI-compatible endpoint; the URL usually ends in /v1")
        elif isinstance(exc, openai.APIStatusError):
            detail = server_message(exc)
            if exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500:
                kind, message = "http", f"{where} answered HTTP {exc.status_code} {times(attempts)}"
            else:
                kind, message = "rejected", f"{where} rejected the request (HTTP {exc.status_code})"
            message += f": {detail}" if detail else ""
        elif isinstance(exc, ValueError):
            kind, message = "protocol", f"{where} answered with a reply that is not JSON (a chat completion was " \
                                        "expected)"
        else:
            kind, message = "protocol", (f"{where} answered with something that is not a chat completion "
                                         f"({type(exc).__name__}: {exc})")
        return LLMCallError(redact(message, self._key), kind=kind, status=status)



def _logprobs_of(choice: Any) -> list[list[list]] | None:
    content = getattr(getattr(choice, "logprobs", None), "content", None)  # many local servers send none
    return read_top_logprobs([token.model_dump() for token in content] if content else None)
