"""Slow clients cannot hold the API's connections (issue 36: 100 connections held open for 45 s). Real sockets against
the API served by uvicorn as `core serve` serves it (tests/api/helpers.LiveServer uses core.api.serve.server_config),
with its deadlines shortened so each test ends in seconds; the last test keeps the defaults."""
from __future__ import annotations

import selectors
import socket
import time

import httpx
import pytest

from core.api.config import ApiConfig
from core.library import open_library
from tests import graph_papers
from tests.api.helpers import LiveServer

HEAD_S, GRACE_S, RATE = 1.5, 1.5, 1024.0
FAST = ApiConfig(head_timeout_s=HEAD_S, body_grace_s=GRACE_S, min_body_rate=RATE, keep_alive_s=1)


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    return open_library(graph_papers.fast_workspace(tmp_path_factory.mktemp("slow") / "ws"))


@pytest.fixture(scope="module")
def served(lib):
    with LiveServer(lib, FAST) as server:
        yield server


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.setblocking(False)
    return sock


def _drip(socks: list[socket.socket], first: bytes, every_s: float, drip: bytes, limit_s: float) -> dict:
    """Send `first` on each socket, then `drip` every `every_s` until the server closes it; for each socket, when it
    closed (seconds after the start, None if still open at `limit_s`) and what it answered."""
    selector = selectors.DefaultSelector()
    start = time.monotonic()
    closed: dict[int, float | None] = {id(s): None for s in socks}
    answers: dict[int, bytes] = {id(s): b"" for s in socks}
    for sock in socks:
        sock.sendall(first)
        selector.register(sock, selectors.EVENT_READ)
    next_drip = start + every_s
    while selector.get_map() and time.monotonic() - start < limit_s:
        for key, _ in selector.select(timeout=0.05):
            sock = key.fileobj
            try:
                data = sock.recv(65536)
            except (ConnectionResetError, BlockingIOError):
                data = b""
            answers[id(sock)] += data
            if not data:
                closed[id(sock)] = time.monotonic() - start
                selector.unregister(sock)
        if time.monotonic() >= next_drip:
            next_drip += every_s
            for key in list(selector.get_map().values()):
                try:
                    key.fileobj.send(drip)
                except OSError:
                    pass
    for sock in socks:
        sock.close()
    return {"closed": [closed[id(s)] for s in socks], "answers": [answers[id(s)] for s in socks]}


def test_a_hundred_connections_dripping_a_header_are_answered_408_and_closed(served):
    socks = [_connect(served.port) for _ in range(100)]
    got = _drip(socks, b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n", 0.3, b"X", limit_s=HEAD_S + 6)
    closed = got["closed"]
    print(f"100 slowloris connections: closed after {min(closed or [0]):.2f}-{max(c or 99 for c in closed):.2f} s "
          f"(head deadline {HEAD_S} s)")
    assert all(c is not None for c in closed), f"{sum(c is None for c in closed)} still open after {HEAD_S + 6} s"
    assert max(closed) < HEAD_S + 4 and min(closed) >= HEAD_S - 0.2, closed
    assert all(a.startswith(b"HTTP/1.1 408") and b"request_timeout" in a for a in got["answers"])
    with httpx.Client(base_url=served.url) as client:  # the server is well
        assert client.get("/api/status").status_code == 200


def test_a_connection_that_never_speaks_is_closed(served):
    got = _drip([_connect(served.port)], b"", 0.5, b"", limit_s=HEAD_S + 5)
    assert got["closed"][0] is not None and got["closed"][0] < HEAD_S + 3 and got["answers"] == [b""], got


def test_a_body_that_trickles_is_answered_408_and_nothing_is_kept(served, lib):
    """An upload declaring 10 MB that sends 64 bytes every 0.3 s (~210 bytes/s, under the 1 KB/s asked for)."""
    head = (b"POST /api/papers?filename=slow.pdf HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/pdf\r\n"
            b"Content-Length: 10485760\r\n\r\n%PDF-1.4\n")
    ask = (b"POST /api/ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
           b"Content-Length: 5000\r\n\r\n{\"question\": \"")
    got = _drip([_connect(served.port)], head, 0.3, b"\0" * 64, limit_s=GRACE_S + 6)
    got_ask = _drip([_connect(served.port)], ask, 0.3, b"w", limit_s=GRACE_S + 6)
    for result in (got, got_ask):
        closed, answer = result["closed"][0], result["answers"][0]
        assert closed is not None and GRACE_S - 0.2 <= closed < GRACE_S + 4, result
        assert answer.startswith(b"HTTP/1.1 408") and b"slower than 1,024 bytes a second" in answer, answer[:300]
    time.sleep(0.5)  # the upload route's clean-up runs once it sees the disconnect
    assert not list(lib.workspace.staging_dir.glob("api-upload-*"))
    assert "slow.pdf" not in {d.filename for d in lib.documents.list()}


def test_a_body_at_a_fair_rate_and_a_kept_alive_connection_are_served(served, lib):
    """40 KB sent over ~2 s (20 KB/s), longer than the grace: it arrives whole; then the connection idles and is
    closed after the keep-alive time."""
    text = b"# Steady upload\n\n" + b"The quokka dataset is steady. " * 1360
    sock = socket.create_connection(("127.0.0.1", served.port), timeout=10)
    sock.sendall(b"POST /api/papers?filename=steady.md HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/markdown\r\n"
                 + f"Content-Length: {len(text)}\r\n\r\n".encode())
    for i in range(0, len(text), 4096):
        sock.sendall(text[i:i + 4096])
        time.sleep(0.2)
    reply = b""
    while b"\r\n\r\n" not in reply or not reply.endswith(b"}"):
        chunk = sock.recv(65536)
        assert chunk, reply
        reply += chunk
    assert reply.startswith(b"HTTP/1.1 202"), reply[:300]
    idle_from = time.monotonic()
    sock.settimeout(10)
    assert sock.recv(1) == b""  # closed by the server
    assert time.monotonic() - idle_from < 4
    sock.close()
    assert "steady.md" in {d.filename for d in lib.documents.list()}


def test_beyond_max_connections_new_requests_wait_for_the_deadline_not_forever(lib):
    """20 connections allowed; 25 idle ones take them: a request is 503 until the deadline frees them, then 200."""
    config = ApiConfig(head_timeout_s=HEAD_S, max_connections=20)
    with LiveServer(lib, config) as server:
        idle = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(25)]
        with httpx.Client(base_url=server.url, timeout=10) as client:
            assert client.get("/health").status_code == 503
            time.sleep(HEAD_S + 1.5)
            assert client.get("/health").status_code == 200
        for sock in idle:
            sock.close()


@pytest.mark.slow  # waits out the default deadline (10 s)
def test_the_default_deadline_closes_a_half_sent_head(lib):
    default = ApiConfig().head_timeout_s
    assert default <= 15
    with LiveServer(lib, ApiConfig()) as server:
        got = _drip([_connect(server.port)], b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n", 1.0, b"X",
                    limit_s=default + 8)
    closed = got["closed"][0]
    assert closed is not None and default - 0.5 <= closed < default + 5, got
    assert got["answers"][0].startswith(b"HTTP/1.1 408")


def test_a_head_over_64_kb_is_refused_while_it_arrives(served):
    """Headers sent fast but without end: refused at 64 KB instead of kept until the deadline (or memory runs out)."""
    sock = socket.create_connection(("127.0.0.1", served.port), timeout=10)
    sock.sendall(b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    sent, reply = 0, b""
    try:
        while sent < 4 << 20 and not reply:
            sock.sendall(b"X-Filler: " + b"a" * 1000 + b"\r\n")
            sent += 1012
            sock.setblocking(False)
            try:
                reply = sock.recv(65536)
            except BlockingIOError:
                pass
            sock.setblocking(True)
    except (BrokenPipeError, ConnectionResetError):
        pass
    sock.settimeout(5)
    while not reply.endswith(b"}"):
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, TimeoutError):
            break
        if not chunk:
            break
        reply += chunk
    sock.close()
    assert reply.startswith(b"HTTP/1.1 431") and b"headers_too_large" in reply, reply[:300]
    assert sent < 4 << 20, sent  # answered before the 4 MB were all sent (the kernel buffers some MB of them)
