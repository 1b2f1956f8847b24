"""`python -m core serve` ends on SIGTERM, even with a call in flight that cannot be interrupted: an MCP tool call of
a session on the SDK's legacy transport (the protocol Claude Desktop, Cursor and the inspector speak) waiting on an
LLM that never answers. Such a call runs in a worker thread; while the tools waited for their thread when cancelled,
it held the server's shutdown until the LLM call gave up (minutes), so SIGTERM seemed to do nothing."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest

from tests.api.helpers import QUESTION, build_workspace
from tests.openai_server import OpenAIReplayServer, Reply
from tests.paths import REPO

LEGACY_PROTOCOL = "2025-06-18"
MCP_ACCEPT = "application/json, text/event-stream"


@pytest.fixture(scope="module")
def stalling_llm_workspace(tmp_path_factory):
    """The test workspace with an LLM whose every request is read and never answered."""
    lib, _ = build_workspace(tmp_path_factory.mktemp("stop"))
    with OpenAIReplayServer(default=Reply(mode="stall"), model="replay-stall") as llm:
        llm.max_hang_s = 120.0
        settings = lib.workspace.settings(apply_environment=False)
        settings.llm.provider, settings.llm.base_url, settings.llm.model = "openai", llm.url, llm.model
        lib.workspace.save_settings(settings)
        yield lib.workspace.root, llm


def _free_ports(count: int) -> list[int]:
    """Distinct free ports: every socket stays bound until all are chosen, so the kernel cannot hand one out twice."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _wait_until(predicate, what: str, process: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert process.poll() is None, f"the server ended (code {process.returncode}) before {what}"
        assert time.monotonic() < deadline, f"no {what} within {seconds:.0f} s"
        time.sleep(0.1)


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _ask_over_a_legacy_session(url: str) -> None:
    """initialize (a legacy protocol version, so the session lives in the server's session manager), then a tools/call
    of `ask`, which waits on the LLM until the server goes away."""
    headers = {"Accept": MCP_ACCEPT, "Content-Type": "application/json"}
    try:
        with httpx.Client(base_url=url, timeout=60) as client:
            opened = client.post("/mcp", headers=headers, json={
                "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": LEGACY_PROTOCOL, "capabilities": {},
                           "clientInfo": {"name": "legacy-client", "version": "1"}}})
            headers |= {"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": LEGACY_PROTOCOL}
            client.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
            client.post("/mcp", headers=headers, json={
                "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "ask", "arguments": {"question": QUESTION, "mode": "naive"}}})
    except (httpx.HTTPError, KeyError):
        pass  # the server stopped under the call: what the test wants


def _serve(root, port: int, log) -> subprocess.Popen:
    with open(log, "wb") as out:
        return subprocess.Popen([sys.executable, "-m", "core", "serve", "--port", str(port), "--workspace", str(root),
                                 "--no-history"], cwd=REPO, env=dict(os.environ), stdout=out, stderr=subprocess.STDOUT)


def _serving(root, log) -> tuple[subprocess.Popen, int]:
    """A server answering on /health. A free port can be taken by another process between the test choosing it and
    the server binding it (CI run 31: `address already in use`); then the test starts again on another port."""
    for _attempt in range(5):
        (port,) = _free_ports(1)
        server = _serve(root, port, log)
        deadline = time.monotonic() + 60
        while server.poll() is None and not _answers(f"http://127.0.0.1:{port}"):
            assert time.monotonic() < deadline, f"no answer on /health within 60 s\n{log.read_text()[-3000:]}"
            time.sleep(0.1)
        if server.poll() is None:
            return server, port
        server.wait()
        assert "address already in use" in log.read_text(), f"the server ended (code {server.returncode})\n" \
            f"{log.read_text()[-3000:]}"
    pytest.fail("five ports taken in a row")


@pytest.mark.slow  # three server processes, each loading the embedding model for its ask (~8 s together)
def test_sigterm_stops_the_server_with_an_mcp_call_stuck_on_the_llm(stalling_llm_workspace, tmp_path):
    root, llm = stalling_llm_workspace
    # Twice in a dozen manual stops hung: three servers, side by side to keep the test short, so a race would show.
    logs = [tmp_path / f"serve-{n}.log" for n in range(3)]
    servers, ports = [], []
    try:
        for log in logs:
            server, port = _serving(root, log)
            servers.append(server)
            ports.append(port)
        asked = len(llm.chat_requests)
        for port in ports:
            threading.Thread(target=_ask_over_a_legacy_session, args=(f"http://127.0.0.1:{port}",),
                             daemon=True).start()
        for server in servers:
            _wait_until(lambda: len(llm.chat_requests) >= asked + len(servers), "LLM request of every MCP ask",
                        server)
        for server in servers:
            server.send_signal(signal.SIGTERM)
        for n, (server, log) in enumerate(zip(servers, logs), 1):
            try:
                code = server.wait(timeout=30)  # a liveness bound: a stop takes about a second
            except subprocess.TimeoutExpired:
                pytest.fail(f"server {n}: still running 30 s after SIGTERM\n{log.read_text()[-3000:]}")
            # Ended by the signal after a graceful stop, as uvicorn ends, not by core.api.serve's stop deadline.
            assert code == -signal.SIGTERM, f"server {n}: exit code {code}\n{log.read_text()[-3000:]}"
    finally:
        for server in servers:
            if server.poll() is None:
                server.kill()
                server.wait()
