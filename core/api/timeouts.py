"""Deadlines on slow clients, in uvicorn's HTTP protocol (below the app, which only sees a request once its head is in).

uvicorn arms no timer before a connection's first request, and a byte received cancels its keep-alive timer until the
next response: a client that opens a connection and sends nothing, or a header a byte at a time, or a declared body a
byte now and then, holds the connection (a file descriptor, a task, its buffers) for as long as it likes. A hundred
such connections stayed open for 45 s and more. Here each connection is always in one of three states:

- waiting for a request head: the head must be complete within `head_timeout_s` of the connection opening (or of the
  previous response ending), and within `max_head_bytes`; else 408 (431) and the connection is closed;
- receiving the request body: it must arrive at `min_body_rate` bytes a second on average after a grace of
  `body_grace_s` (a 1 MB JSON body may take 10 + 64 s, a 500 MB upload hours, but never a trickle); else 408 when the
  app has not answered yet, and the connection is closed;
- the request is in, the app is working or answering (an LLM answer, a server-sent stream): no deadline here.

`limit_concurrency` (core/api/serve.py) bounds how many connections there are at all."""
from __future__ import annotations

import enum
import logging

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from core.api import errors

log = logging.getLogger("papergraph.api")

HEAD_TIMEOUT_S = 10.0
BODY_GRACE_S = 10.0
MIN_BODY_RATE = 16 * 1024  # bytes a second: a 128 kbit/s line
MAX_HEAD_BYTES = 64 * 1024  # a request line and headers; a token, a cookie and an Origin need a few hundred


class Waiting(enum.Enum):
    HEAD = "head"
    BODY = "body"
    APP = "app"


def protocol(head_timeout_s: float = HEAD_TIMEOUT_S, body_grace_s: float = BODY_GRACE_S,
             min_body_rate: float = MIN_BODY_RATE, max_head_bytes: int = MAX_HEAD_BYTES) -> type:
    """uvicorn's httptools protocol with these deadlines: pass it as uvicorn.Config(http=...)."""
    return type("DeadlineHttpProtocol", (DeadlineHttpProtocol,),
                {"head_timeout_s": head_timeout_s, "body_grace_s": body_grace_s, "min_body_rate": min_body_rate,
                 "max_head_bytes": max_head_bytes})


class DeadlineHttpProtocol(HttpToolsProtocol):
    head_timeout_s = HEAD_TIMEOUT_S
    body_grace_s = BODY_GRACE_S
    min_body_rate = MIN_BODY_RATE
    max_head_bytes = MAX_HEAD_BYTES

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.waiting = Waiting.HEAD
        self.since = 0.0  # when the current state began
        self.head_bytes = 0
        self.body_bytes = 0
        self.deadline_task = None

    # --------------------------------------------------------------------------------------------- state changes
    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._wait_for_head()

    def connection_lost(self, exc) -> None:
        self._cancel()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.waiting == Waiting.HEAD:
            self.head_bytes += len(data)
        super().data_received(data)
        if self.waiting == Waiting.HEAD and self.head_bytes > self.max_head_bytes and not self.transport.is_closing():
            self._refuse(errors.HEADERS_TOO_LARGE, f"the request head is over {self.max_head_bytes:,} bytes")

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self.waiting, self.since, self.body_bytes = Waiting.BODY, self.loop.time(), 0
        self._arm(self.body_grace_s)

    def on_body(self, body: bytes) -> None:
        self.body_bytes += len(body)
        super().on_body(body)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        if self.cycle is not None and self.cycle.response_complete and not self.pipeline:
            self._wait_for_head()  # answered before the body was all in (a refusal): the next request may come
        else:
            self.waiting = Waiting.APP
            self._cancel()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.waiting == Waiting.APP and not self.pipeline and not self.transport.is_closing():
            self._wait_for_head()

    # ------------------------------------------------------------------------------------------------- deadlines
    def _wait_for_head(self) -> None:
        self.waiting, self.since, self.head_bytes = Waiting.HEAD, self.loop.time(), 0
        self._arm(self.head_timeout_s)

    def _arm(self, delay: float) -> None:
        self._cancel()
        self.deadline_task = self.loop.call_later(max(delay, 0.0), self._deadline)

    def _cancel(self) -> None:
        if self.deadline_task is not None:
            self.deadline_task.cancel()
            self.deadline_task = None

    def _deadline(self) -> None:
        self.deadline_task = None
        if self.transport is None or self.transport.is_closing():
            return
        if self.waiting == Waiting.HEAD:
            if self.head_bytes:
                self._refuse(errors.REQUEST_TIMEOUT,
                             f"the request head did not arrive within {self.head_timeout_s:g} s")
            else:  # an idle connection, never used or kept alive: nothing to answer
                self.transport.close()
        elif self.waiting == Waiting.BODY:
            due = self.since + self.body_grace_s + self.body_bytes / self.min_body_rate
            if self.loop.time() < due:  # it is still coming at the rate asked for
                self._arm(due - self.loop.time())
            elif self.cycle is not None and not self.cycle.response_started:
                rate, took = int(self.min_body_rate), self.loop.time() - self.since
                self._refuse(errors.REQUEST_TIMEOUT, f"the request body came slower than {rate:,} bytes a second "
                                                     f"({self.body_bytes:,} bytes in {took:.0f} s)")
            else:
                self._close("its request body stopped arriving after the answer")

    def _refuse(self, code: str, message: str) -> None:
        """Answer with the error, then close: the app is not running for this request, or has not answered."""
        status, pairs, data = errors.raw(code, message)
        head = [f"HTTP/1.1 {status} {'Request Timeout' if status == 408 else 'Request Header Fields Too Large'}"
                .encode("ascii")]
        head += [name + b": " + value for name, value in pairs]
        self.transport.write(b"\r\n".join(head) + b"\r\n\r\n" + data)
        self._close(message)

    def _close(self, why: str) -> None:
        peer = self.client[0] if self.client else "?"  # the socket's far end, never a header it sent
        log.info("closed a connection from %s: %s", peer, why)
        self._cancel()
        self.transport.close()
