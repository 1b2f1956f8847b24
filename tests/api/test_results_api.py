"""The results through REST and MCP, served for real: the same leaderboard as the service, behind the same guard
(a token off loopback, a viewer's enough), its rows cited; exports as attachments, escaped."""
from __future__ import annotations

import asyncio

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from core.api.config import ApiConfig
from core.library import open_library
from core.service import results as service
from core.settings.accounts import add_account
from core.settings.tokens import create_token
from tests.api.helpers import LiveServer
from tests.graph_papers import fast_workspace
from tests.results_records import SPECTER, add_papers


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    lib = open_library(fast_workspace(tmp_path_factory.mktemp("results-api") / "ws"))
    add_papers(lib, hostile=True)
    with LiveServer(lib, ApiConfig(require_tokens=True)) as server:
        yield lib, server


def _viewer() -> dict[str, str]:
    add_account("vic", "a long enough password", "viewer")
    _, secret = create_token("vic")
    return {"Authorization": f"Bearer {secret}"}


def test_rest_gives_the_services_leaderboard_to_a_viewer_and_nothing_without_a_token(served):
    lib, server = served
    assert httpx.get(f"{server.url}/api/results", params={"dataset": "SciDocs"}).status_code == 401
    with httpx.Client(base_url=server.url, headers=_viewer(), timeout=60) as client:
        got = client.get("/api/results", params={"dataset": "SciDocs", "metric": "avg."})
        assert got.status_code == 200
        assert got.json() == service.leaderboard(lib, dataset="SciDocs", metric="avg.").to_dict()
        top = got.json()["boards"][0]["rows"][0]
        assert (top["method"], top["value_text"], top["paper_id"], top["page"], top["cell"]) == (
            "SPECTER", "80.0", SPECTER, 4, "Table 1, row 8, column 6")
        names = client.get("/api/results/names", params={"kind": "metric", "dataset": "chemprot"}).json()
        assert {n["name"] for n in names} == {"F1", "Error"}
        csv = client.get("/api/results", params={"dataset": "scidocs", "format": "csv"})
        assert csv.headers["content-type"].startswith("text/csv") and "attachment" in csv.headers["content-disposition"]
        assert "'=HYPERLINK" in csv.text and "\x1b" not in csv.text
        assert client.get("/api/results", params={"format": "html"}).status_code in (400, 422)
        bad = client.get("/api/results", params={"year": "soon"})
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_input"


def test_the_mcp_tool_reads_the_leaderboard_with_its_citations(served):
    _, server = served
    headers = _viewer()

    async def session():
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
                Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            found = await client.call_tool("results", {"dataset": "scidocs", "metric": "Avg."})
            none = await client.call_tool("results", {"dataset": "ImageNet"})
            return tools["results"], found, none

    tool, found, none = asyncio.run(session())
    assert tool.annotations.read_only_hint and "leaderboard" in tool.description
    assert not found.is_error
    text = found.content[0].text
    assert "1. SPECTER: 80.0" in text and "[1] SPECTER" in text and "page 4" in text
    first = found.structured_content["citations"][0]
    assert first["paper_id"] == SPECTER and first["page"] == 4 and "Table 1, row 8, column 6" in first["quote"]
    assert "no dataset named 'ImageNet'" in none.content[0].text
