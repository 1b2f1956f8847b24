"""The API's security with real requests: tokens (required off loopback, scoped, revocable, expiring), roles,
rate limits, body bounds (a 1 GB upload refused before its body), path-traversal names, hostile questions, host
names and origins, and one workspace only. Accounts and tokens go to each test's own config folder
(tests/conftest.py's private_config), which the servers here read at each request."""
from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time
import uuid

import httpx
import pytest

from core.api.config import ApiConfig
from core.library import open_library
from core.pipeline.documents import add_document
from core.settings.accounts import add_account
from core.settings.tokens import create_token, revoke_token
from tests import graph_papers
from tests.api.helpers import QUESTION, LiveServer, build_workspace
from tests.paths import REPO


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return build_workspace(tmp_path_factory.mktemp("security"))


@pytest.fixture(scope="module")
def guarded(workspace):
    """Served as off loopback: every call needs a token."""
    with LiveServer(workspace[0], ApiConfig(require_tokens=True)) as server:
        yield server


@pytest.fixture(scope="module")
def local(workspace):
    """Served on loopback as `python -m core serve` does by default: no token needed."""
    with LiveServer(workspace[0], ApiConfig(max_upload_bytes=1024 * 1024)) as server:
        yield server


def _token(name: str, role: str, **kw) -> tuple[str, str]:
    add_account(name, "a long enough password", role)
    record, secret = create_token(name, **kw)
    return record.id, secret


def _bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def _code(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["message"]
    return error["code"]


def test_without_a_token_every_call_is_401_when_tokens_are_required(guarded, workspace):
    _, ids = workspace
    calls = [("GET", "/api/status", None), ("GET", "/api/papers", None), ("GET", f"/api/papers/{ids[0]}", None),
             ("GET", "/api/search?q=bert", None), ("POST", "/api/ask", {"question": QUESTION}),
             ("GET", "/v1/models", None), ("POST", "/v1/chat/completions", {"model": "papergraph-mix", "messages": []}),
             ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
             ("DELETE", f"/api/papers/{ids[0]}", None)]
    with httpx.Client(base_url=guarded.url) as client:
        for method, path, body in calls:
            response = client.request(method, path, json=body)
            assert _code(response, 401) == "unauthorized", path
            assert response.headers["www-authenticate"] == "Bearer"
            # An OpenAI client's placeholder key is no token here.
            assert _code(client.request(method, path, json=body, headers=_bearer("none")), 401) == "unauthorized"
        assert client.get("/health").status_code == 200  # liveness only: no workspace data
    assert len(open_library(workspace[0].workspace).documents.list()) == 2  # the DELETE did nothing


def test_a_viewer_token_reads_but_cannot_upload_or_delete(guarded, workspace):
    _, ids = workspace
    _, secret = _token("vera", "viewer")
    with httpx.Client(base_url=guarded.url, headers=_bearer(secret), timeout=60) as client:
        assert client.get("/api/papers").status_code == 200
        assert client.post("/api/ask", json={"question": QUESTION, "mode": "naive"}).status_code == 200
        assert _code(client.post("/api/papers", params={"filename": "x.md"}, content=b"# x"), 403) == "forbidden"
        assert _code(client.delete(f"/api/papers/{ids[0]}"), 403) == "forbidden"
    assert len(workspace[0].documents.list()) == 2


def test_an_editor_token_deletes_and_the_audit_line_names_its_id_never_its_secret(guarded, workspace, caplog):
    lib, _ = workspace
    token_id, secret = _token("edith", "editor")
    added = add_document(lib, "scratch.md", f"# Scratch {uuid.uuid4()}\n\nTo be deleted.\n".encode())
    with caplog.at_level(logging.INFO, logger="papergraph.audit"), \
            httpx.Client(base_url=guarded.url, headers=_bearer(secret)) as client:
        assert client.delete(f"/api/papers/{added.doc_id}").status_code == 200
    lines = [r.getMessage() for r in caplog.records if r.name == "papergraph.audit"]
    assert len(lines) == 1 and added.doc_id[:12] in lines[0] and token_id in lines[0] and "edith" in lines[0]
    assert secret not in caplog.text and secret.split("_", 2)[2] not in caplog.text


def test_a_revoked_an_expired_and_an_orphaned_token_fail(guarded):
    token_id, secret = _token("rita", "viewer")
    _, stale = create_token("rita", expires_days=1, now=time.time() - 2 * 86400)
    _, orphan = _token("otto", "viewer")
    with httpx.Client(base_url=guarded.url) as client:
        assert client.get("/api/status", headers=_bearer(secret)).status_code == 200
        assert client.get("/api/status", headers=_bearer(orphan)).status_code == 200
        assert revoke_token(token_id)
        assert _code(client.get("/api/status", headers=_bearer(secret)), 401) == "unauthorized"
        assert _code(client.get("/api/status", headers=_bearer(stale)), 401) == "unauthorized"
        from core.settings.accounts import remove_account

        remove_account("otto")
        assert _code(client.get("/api/status", headers=_bearer(orphan)), 401) == "unauthorized"
        forged = secret.rsplit(secret.split("_", 2)[2], 1)[0] + "A" * 43  # its id kept, its secret part replaced
        assert _code(client.get("/api/status", headers=_bearer(forged)), 401) == "unauthorized"


def test_a_token_sent_on_loopback_is_checked_too(local):
    token_id, secret = _token("lou", "viewer")
    revoke_token(token_id)
    with httpx.Client(base_url=local.url) as client:
        assert client.get("/api/status").status_code == 200  # the local user
        assert _code(client.get("/api/status", headers=_bearer(secret)), 401) == "unauthorized"


def test_rate_limits_per_token_and_per_address(workspace):
    _, secret = _token("rory", "viewer")
    _, other = _token("rhea", "viewer")
    # 12 a minute: a bucket of 2, refilled every 5 s.
    with LiveServer(workspace[0], ApiConfig(require_tokens=True, token_rate_per_minute=12)) as server, \
            httpx.Client(base_url=server.url) as client:
        codes = [client.get("/api/status", headers=_bearer(secret)).status_code for _ in range(4)]
        assert codes[:2] == [200, 200] and codes[-1] == 429
        limited = client.get("/api/status", headers=_bearer(secret))
        assert _code(limited, 429) == "rate_limited" and int(limited.headers["retry-after"]) >= 1
        assert client.get("/api/status", headers=_bearer(other)).status_code == 200  # another token's own bucket
    with LiveServer(workspace[0], ApiConfig(address_rate_per_minute=12)) as server, \
            httpx.Client(base_url=server.url) as client:
        codes = [client.get("/api/status").status_code for _ in range(4)]
        assert codes[:2] == [200, 200] and codes[-1] == 429
        assert _code(client.get("/health"), 429) == "rate_limited"  # counted before anything else


def test_a_1_gb_upload_is_refused_before_its_body_is_read(local):
    """The request declares 1 GB and sends none of it: the 413 arrives anyway, so nothing was waited for or kept."""
    with socket.create_connection(("127.0.0.1", local.port), timeout=10) as sock:
        sock.sendall(b"POST /api/papers?filename=big.pdf HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: application/octet-stream\r\nContent-Length: 1073741824\r\n\r\n")
        reply = b""
        while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
            chunk = sock.recv(4096)
            if not chunk:
                break
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413"), reply[:200]
    assert json.loads(body)["error"]["code"] == "payload_too_large"


def test_an_upload_without_a_length_stops_at_the_limit_and_leaves_nothing(local, workspace):
    lib, _ = workspace
    sent = 0

    def body():
        nonlocal sent
        for _ in range(64):  # 64 MB offered, 1 MB allowed on this server
            sent += 1024 * 1024
            yield b"%PDF" + b"\0" * (1024 * 1024 - 4)

    with httpx.Client(base_url=local.url, timeout=30) as client:
        try:
            response = client.post("/api/papers", params={"filename": "big.pdf"}, content=body(),
                                   headers={"Content-Type": "application/pdf"})
            assert _code(response, 413) == "payload_too_large"
        except (httpx.WriteError, httpx.RemoteProtocolError):
            pass  # the server answered and closed while the rest was still being sent
    assert sent < 32 * 1024 * 1024  # the server stopped reading and hung up long before the end
    assert not list(lib.workspace.staging_dir.glob("api-upload-*"))
    assert len(lib.documents.list()) == 2


def test_a_json_body_over_a_megabyte_is_refused(local):
    with httpx.Client(base_url=local.url) as client:
        response = client.post("/api/ask", json={"question": "x" * (2 * 1024 * 1024)})
        assert _code(response, 413) == "payload_too_large"


def test_a_path_traversal_file_name_is_neutralised(local, workspace, tmp_path):
    lib, _ = workspace
    target = tmp_path / f"planted-{uuid.uuid4().hex}.md"
    with httpx.Client(base_url=local.url) as client:
        response = client.post("/api/papers", params={"filename": f"..\\..\\../../../{target}"},
                               content=b"# Planted\n\nA file that must land inside the workspace.\n",
                               headers={"Content-Type": "text/markdown"})
        assert response.status_code == 202, response.text
        added = response.json()
        assert added["file"] == target.name and "/" not in added["file"] and "\\" not in added["file"]
        assert not target.exists()
        stored = list(lib.workspace.doc_dir(added["paper_id"]).iterdir())
        assert stored and all(p.resolve().is_relative_to(lib.workspace.root.resolve()) for p in stored)
        assert client.delete(f"/api/papers/{added['paper_id']}").status_code == 200


@pytest.mark.parametrize("question, says", [
    ("why " * 30_000, "120,000 characters"),
    ("what is BERT\x00 trained on", "control character"),
    ("what is \x1b[2J BERT", "control character"),
    ("   ", "empty"),
])
def test_a_hostile_question_gets_a_4xx_with_its_reason(local, question, says):
    chat = {"model": "papergraph-mix", "messages": [{"role": "user", "content": question}]}
    # A URL cannot carry 120k characters (httpx refuses to send it): the search query gets one over its own limit.
    query, query_says = (question[:4001], "the limit is 4,000") if len(question) > 4001 else (question, says)
    with httpx.Client(base_url=local.url, timeout=30) as client:
        for response, expected in ((client.post("/api/ask", json={"question": question}), says),
                                   (client.post("/api/ask", json={"question": question, "stream": True}), says),
                                   (client.post("/v1/chat/completions", json=chat), says),
                                   (client.get("/api/search", params={"q": query}), query_says)):
            assert 400 <= response.status_code < 500, response.text
            assert expected in response.json()["error"]["message"]


def test_a_lone_surrogate_gets_a_4xx_with_its_reason(local):
    raw = b'{"question": "what is \\ud800 BERT trained on"}'  # valid JSON, not valid Unicode
    with httpx.Client(base_url=local.url) as client:
        response = client.post("/api/ask", content=raw, headers={"content-type": "application/json"})
        assert _code(response, 400) == "invalid_input"
        assert "lone surrogate" in response.json()["error"]["message"]


def test_a_foreign_host_name_or_origin_is_refused(local):
    with httpx.Client(base_url=local.url) as client:
        assert _code(client.get("/api/status", headers={"Host": "attacker.example"}), 421) == "invalid_host"
        assert _code(client.get("/api/status", headers={"Origin": "http://attacker.example"}), 403) == "forbidden"
        assert client.get("/api/status", headers={"Origin": local.url}).status_code == 200
        assert "access-control-allow-origin" not in client.get("/api/status").headers


def test_nothing_from_another_workspace_is_reachable(local, tmp_path):
    other = open_library(graph_papers.fast_workspace(tmp_path / "other"))
    foreign = add_document(other, "other.md", b"# Other\n\nThe ossifrage protocol belongs to another workspace.\n")
    with httpx.Client(base_url=local.url) as client:
        assert _code(client.get(f"/api/papers/{foreign.doc_id}"), 404) == "not_found"
        assert _code(client.get(f"/api/papers/{foreign.doc_id}/passage", params={"page": 1}), 404) == "not_found"
        assert _code(client.get("/api/search", params={"q": "ossifrage", "paper": foreign.doc_id}), 404) == "not_found"
        assert _code(client.get("/api/cite", params={"paper": foreign.doc_id}), 404) == "not_found"
        for probe in (f"/api/papers/..%2F..%2F{foreign.doc_id}", "/api/papers/%2E%2E%2Fsettings.json/passage?page=1"):
            assert client.get(probe).status_code in (400, 404)
        hits = client.get("/api/search", params={"q": "ossifrage protocol", "top_k": 50}).json()["citations"]
        assert foreign.doc_id not in {c["paper_id"] for c in hits}
        status = client.get("/api/status").json()
        assert "/" not in status["workspace"] and status["papers"] == 2


def test_the_command_refuses_to_serve_off_loopback_without_any_account_or_token(tmp_path):
    env = {**os.environ, "PAPERGRAPH_CONFIG_DIR": str(tmp_path / "empty-config")}
    env.pop("PAPERGRAPH_INSECURE", None)
    fresh = tmp_path / "never-created"
    done = subprocess.run([sys.executable, "-m", "core", "serve", "--host", "0.0.0.0", "--port", "1",
                           "--workspace", str(fresh)], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "refusing to serve the API on 0.0.0.0" in done.stderr and "users token create" in done.stderr
    assert not fresh.exists()  # refused before anything was created


NOTEBOOK = "https://notebooks.example.org"


def test_cors_serves_the_listed_origin_only(workspace):
    """Listed with --cors-origin: its preflight is answered without a token and its replies (refusals included)
    carry its origin; any other origin is refused as when CORS is off."""
    _, secret = _token("cora", "viewer")
    preflight = {"Origin": NOTEBOOK, "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "authorization, content-type"}
    with LiveServer(workspace[0], ApiConfig(require_tokens=True, cors_origins=[NOTEBOOK + "/"])) as server, \
            httpx.Client(base_url=server.url, timeout=60) as client:
        answered = client.options("/api/ask", headers=preflight)
        assert answered.status_code == 200, answered.text
        assert answered.headers["access-control-allow-origin"] == NOTEBOOK
        assert "POST" in answered.headers["access-control-allow-methods"]
        assert {"authorization", "content-type"} <= {
            h.strip().lower() for h in answered.headers["access-control-allow-headers"].split(",")}
        assert "access-control-allow-credentials" not in answered.headers  # tokens, not cookies
        read = client.get("/api/status", headers={"Origin": NOTEBOOK, **_bearer(secret)})
        assert read.status_code == 200 and read.headers["access-control-allow-origin"] == NOTEBOOK
        assert "origin" in read.headers["vary"].lower()
        asked = client.post("/api/ask", json={"question": QUESTION, "mode": "naive"},
                            headers={"Origin": NOTEBOOK, **_bearer(secret)})
        assert asked.status_code == 200 and asked.headers["access-control-allow-origin"] == NOTEBOOK
        refused = client.get("/api/status", headers={"Origin": NOTEBOOK})  # no token: the page can read why
        assert _code(refused, 401) == "unauthorized" and refused.headers["access-control-allow-origin"] == NOTEBOOK
        for other in ("https://attacker.example", "https://notebooks.example.org:8443", "http://notebooks.example.org"):
            assert _code(client.options("/api/ask", headers={**preflight, "Origin": other}), 403) == "forbidden"
            denied = client.get("/api/status", headers={"Origin": other, **_bearer(secret)})
            assert _code(denied, 403) == "forbidden" and "access-control-allow-origin" not in denied.headers
        assert "access-control-allow-origin" not in client.get("/api/status", headers=_bearer(secret)).headers


def test_serve_refuses_a_wildcard_or_malformed_cors_origin(capsys):
    from core.cli import build_parser

    for value, says in (("*", "a wildcard would let any web page"), ("https://*.example.org", "wildcard"),
                        ("https://example.org/app", "is not an origin")):
        with pytest.raises(SystemExit) as exited:
            build_parser().parse_args(["serve", "--cors-origin", value])
        assert exited.value.code == 2 and says in capsys.readouterr().err
    args = build_parser().parse_args(["serve", "--cors-origin", "HTTP://LocalHost:3000/", "--cors-origin",
                                      "https://example.org:443"])
    assert args.cors_origins == ["http://localhost:3000", "https://example.org"]
