"""Another web page cannot write through the API on loopback, where no token is needed (issue 36's attack pass): a
page's script can make the browser send a "simple" request (a POST with a text/plain, form or untyped body, no
custom header) to http://127.0.0.1:8502 without asking the server first. The requests here carry the headers the
browser sent in that attack: `Origin: http://localhost:9999` (another port), `Origin: null` (a sandboxed iframe)
and `Origin: http://127.0.0.2:9998` (another loopback address). Each added a paper before (202); now each is
refused and nothing is added, while this server's own pages and non-browser tools (JSON, a file's own type, or the
header X-PaperGraph-Request) still write."""
from __future__ import annotations

import httpx
import pytest

from core.api.config import ApiConfig
from core.library import open_library
from tests import graph_papers
from tests.api.helpers import LiveServer

NOTE = b"# Planted note\n\nA page on another origin wrote this into the collection.\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    lib = open_library(graph_papers.fast_workspace(tmp_path_factory.mktemp("cross-site") / "ws"))
    with LiveServer(lib, ApiConfig()) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        yield lib, server, client


def _upload(client: httpx.Client, name: str, headers: dict[str, str]) -> httpx.Response:
    return client.post("/api/papers", params={"filename": name}, content=NOTE, headers=headers)


def _forbidden(response: httpx.Response) -> None:
    assert response.status_code == 403, (response.status_code, response.text)
    assert response.json()["error"]["code"] == "forbidden"


@pytest.mark.parametrize("origin", ["http://localhost:9999", "null", "http://127.0.0.2:9998",
                                    "http://127.0.0.1:9999", "http://[::1]:9999", "https://127.0.0.1"])
def test_a_text_plain_post_from_another_origin_adds_nothing(served, origin):
    lib, _, client = served
    before = len(lib.documents.list())
    _forbidden(_upload(client, "planted.md", {"Origin": origin, "Content-Type": "text/plain;charset=UTF-8"}))
    # Not even with the custom header or JSON: the origin alone is refused (a browser would have asked first).
    _forbidden(_upload(client, "planted.md", {"Origin": origin, "Content-Type": "application/json",
                                              "X-PaperGraph-Request": "1"}))
    _forbidden(client.get("/api/papers", headers={"Origin": origin}))
    assert len(lib.documents.list()) == before


@pytest.mark.parametrize("content_type", ["text/plain", "multipart/form-data; boundary=x",
                                          "application/x-www-form-urlencoded", None])
def test_a_simple_post_without_origin_or_token_is_refused(served, content_type):
    """What a browser that hid the Origin (or an old one) would send from a form or fetch(): refused, saying the way
    out."""
    lib, _, client = served
    before = len(lib.documents.list())
    response = _upload(client, "planted.md", {"Content-Type": content_type} if content_type else {})
    _forbidden(response)
    assert "X-PaperGraph-Request" in response.json()["error"]["message"]
    _forbidden(client.post("/api/ask", content=b'{"question": "what is BERT?"}',
                           headers={"Content-Type": "text/plain"}))
    assert len(lib.documents.list()) == before


def test_this_servers_own_page_and_tools_still_write(served):
    lib, server, client = served
    own = {"Origin": server.url}
    # The server's own origin (its /docs page) with the custom header, or with a file's own type.
    added = _upload(client, "own-page.md", {**own, "Content-Type": "text/plain", "X-PaperGraph-Request": "1"})
    assert added.status_code == 202, added.text
    typed = client.post("/api/papers", params={"filename": "typed.md"}, content=NOTE + b"Typed.\n",
                        headers={**own, "Content-Type": "text/markdown"})
    assert typed.status_code == 202, typed.text
    # JSON from the server's own page; a tool such as curl sends no Origin at all.
    asked = client.post("/api/ask", json={"question": "What was planted?", "mode": "naive"}, headers=own)
    assert asked.status_code in (200, 409), asked.text  # 409: no paper is ready yet; either way it was let in
    curl = client.post("/api/papers", params={"filename": "curl.md"}, content=NOTE + b"By curl.\n",
                       headers={"Content-Type": "application/octet-stream"})
    assert curl.status_code == 202, curl.text
    marked = client.post("/api/papers", params={"filename": "marked.md"}, content=NOTE + b"Marked.\n",
                         headers={"Content-Type": "multipart/form-data; boundary=x", "X-PaperGraph-Request": "1"})
    assert marked.status_code == 202, marked.text
    # A DELETE is never simple (a browser asks first, and the guard refuses any other origin's question).
    assert client.delete(f"/api/papers/{curl.json()['paper_id']}").status_code == 200
    names = {d.filename for d in lib.documents.list()}
    assert {"own-page.md", "typed.md", "marked.md"} <= names and "curl.md" not in names


def test_an_origin_the_user_names_is_let_in(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERGRAPH_CORS_ORIGINS", "http://localhost:3000, https://notebooks.example.org/")
    from core.api.serve import api_config

    config = api_config("127.0.0.1", 0)
    assert config.cors_origins == ["http://localhost:3000", "https://notebooks.example.org"]
    lib = open_library(graph_papers.fast_workspace(tmp_path / "ws"))
    with LiveServer(lib, config) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        read = client.get("/api/papers", headers={"Origin": "http://localhost:3000"})
        assert read.status_code == 200 and read.headers["access-control-allow-origin"] == "http://localhost:3000"
        _forbidden(client.get("/api/papers", headers={"Origin": "http://localhost:3001"}))
    monkeypatch.setenv("PAPERGRAPH_CORS_ORIGINS", "*")
    with pytest.raises(SystemExit, match="wildcard"):
        api_config("127.0.0.1", 0)
