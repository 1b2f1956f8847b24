"""A total deadline for an HTTP request to an LLM or VLM: connecting, sending, the first byte and the whole body.

httpx's timeouts are per socket operation, so a server that trickles one byte a second never trips a 120 s read
timeout and holds its caller forever. Here every socket operation of a request is given at most the time left
until the caller's deadline, and one started past it fails at once with httpx's own timeout error, so the
openai package and our error mapping see an ordinary timeout.

    client = http_client(timeout_s)        # an httpx.Client whose sockets obey the deadline
    with until(time.monotonic() + 30):     # this thread's requests end within 30 s
        client.get(url)

The deadline is per thread (a thread-local), because the sync openai client and httpx do all of a request's I/O
on the calling thread; a streamed body is read on the thread that iterates it, so the iterator sets it again
around each read. Outside `until`, the sockets keep httpx's per-operation timeouts.

DNS resolution happens inside socket.create_connection and cannot be bounded from Python; it is the only step
not covered.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpcore
import httpx

_local = threading.local()
# Big request bodies (a VLM's base64 images) are sent in slices, so a server that reads slowly is cut at the
# deadline too rather than after one long send.
_WRITE_SLICE = 64 * 1024


@contextmanager
def until(at: float) -> Iterator[float]:
    """Requests made on this thread inside the block end by `at` (time.monotonic()); blocks nest, the inner wins."""
    previous = getattr(_local, "at", None)
    _local.at = at
    try:
        yield at
    finally:
        _local.at = previous


def _bounded(timeout: float | None, error: type[Exception]) -> float | None:
    at = getattr(_local, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise error("the request's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream):
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _bounded(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        view = memoryview(buffer)
        for start in range(0, len(view), _WRITE_SLICE):
            self._inner.write(bytes(view[start:start + _WRITE_SLICE]), _bounded(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname,
                                                     _bounded(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self, inner: httpcore.NetworkBackend):
        self._inner = inner

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.connect_tcp(host, port, _bounded(timeout, httpcore.ConnectTimeout),
                                                       local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.connect_unix_socket(path, _bounded(timeout, httpcore.ConnectTimeout),
                                                               socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def http_client(timeout_s: float, **kwargs: Any) -> httpx.Client:
    """An httpx.Client (as the openai package builds its own: redirects followed, env proxies honoured) whose
    every transport, proxies included, runs its sockets through the deadline."""
    kwargs.setdefault("follow_redirects", True)
    kwargs.setdefault("limits", httpx.Limits(max_connections=1000, max_keepalive_connections=100))
    client = httpx.Client(timeout=timeout_s, **kwargs)
    # httpx 0.28 takes no network backend, but its connection pool (httpcore, also the proxies' base class)
    # does; a change of either package fails here, loudly, rather than silently dropping the deadline.
    for transport in [client._transport, *client._mounts.values()]:
        if transport is None:  # a mount that turns a proxy off
            continue
        pool = getattr(transport, "_pool", None)
        if not isinstance(pool, httpcore.ConnectionPool) or not hasattr(pool, "_network_backend"):
            raise RuntimeError(f"cannot put a deadline on {type(transport).__name__}: httpx or httpcore changed")
        pool._network_backend = _DeadlineBackend(pool._network_backend)
    return client
