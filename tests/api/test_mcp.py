"""The MCP server through the SDK's own client, over stdio (`python -m core mcp --workspace …` spawned) and over
streamable HTTP under `core serve`: every tool on a real workspace returns its citations, in the text the model
reads and in the structured content; resources list and read the papers."""
from __future__ import annotations

import asyncio
import os
import sys

import bibtexparser
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from core.api.config import ApiConfig
from core.settings.accounts import add_account
from core.settings.tokens import create_token
from tests.api.helpers import ANSWER_WORD, QUESTION, LiveServer, build_workspace
from tests.paths import REPO

TOOLS = {"search_papers", "ask", "get_passage", "get_paper", "graph_neighbours", "graph_path", "cite",
         "list_evaluation_runs", "results"}  # their tests: test_eval_api.py (scores, no citations), test_results_api.py


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return build_workspace(tmp_path_factory.mktemp("mcp"))


async def every_tool(client: Client, ids: list[str]) -> dict:
    listed = await client.list_tools()
    assert {t.name for t in listed.tools} == TOOLS
    ask_tool = next(t for t in listed.tools if t.name == "ask")
    assert "ppr" in ask_tool.description and "naive" in ask_tool.description  # when to use which mode
    results = {
        "search_papers": await client.call_tool("search_papers", {"query": "pre-training data of BERT", "top_k": 3}),
        "ask": await client.call_tool("ask", {"question": QUESTION, "mode": "mix"}),
        "get_passage": await client.call_tool("get_passage", {"paper_id": ids[0], "page": 1}),
        "get_paper": await client.call_tool("get_paper", {"paper_id": ids[0][:8]}),
        "graph_neighbours": await client.call_tool("graph_neighbours", {"entity": "RoBERTa", "limit": 5}),
        "graph_path": await client.call_tool("graph_path", {"source": "MultiNLI", "target": "CC-News"}),
        "cite": await client.call_tool("cite", {"paper_ids": ids}),
    }
    resources = await client.list_resources()
    templates = await client.list_resource_templates()
    papers = await client.read_resource("papergraph://papers")
    page = await client.read_resource(f"papergraph://papers/{ids[0]}/pages/1")
    unknown = await client.call_tool("get_paper", {"paper_id": "0" * 64})
    return {"results": results, "resources": [str(r.uri) for r in resources.resources],
            "templates": [t.uri_template for t in templates.resource_templates],
            "papers": papers.contents[0].text, "page": page.contents[0].text, "unknown": unknown}


def check(found: dict, ids: list[str]) -> None:
    for name, result in found["results"].items():
        assert not result.is_error, (name, result.content)
        citations = result.structured_content["citations"]
        assert citations, name
        for c in citations:
            assert c["paper_id"] in ids and c["quote"], (name, c)
        text = result.content[0].text
        assert "[1]" in text or f"[{citations[0]['n']}]" in text, (name, text)
    ask = found["results"]["ask"].structured_content
    assert ANSWER_WORD in ask["answer"] and all(c["page"] == 1 and len(c["box"]) == 4 for c in ask["citations"])
    assert "page 1" in found["results"]["ask"].content[0].text
    entries = bibtexparser.parse_string(found["results"]["cite"].structured_content["bibtex"]).entries
    assert len(entries) == 2 and all("title" in e.fields_dict for e in entries)  # each paper's own metadata
    assert found["results"]["graph_neighbours"].structured_content["name"] == "RoBERTa"
    assert found["resources"] == ["papergraph://papers"] and len(found["templates"]) == 2
    assert all(i in found["papers"] for i in ids) and ANSWER_WORD in found["page"]
    assert found["unknown"].is_error and "not_found" in found["unknown"].content[0].text


@pytest.mark.slow  # a second Python process loads the embedding model and the reader (~10 s)
def test_every_tool_over_stdio_returns_citations(workspace, tmp_path):
    lib, ids = workspace
    env = {k: os.environ[k] for k in ("PATH", "HOME", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "ANONYMIZED_TELEMETRY",
                                       "PAPERGRAPH_CONFIG_DIR") if k in os.environ}
    params = StdioServerParameters(command=sys.executable, args=["-m", "core", "mcp", "--workspace",
                                                                 str(lib.workspace.root)], env=env, cwd=str(REPO))

    async def session():
        async with Client(params, read_timeout_seconds=120) as client:
            return await every_tool(client, ids)

    check(asyncio.run(session()), ids)


def test_every_tool_over_streamable_http_returns_citations(workspace):
    lib, ids = workspace

    async def session(url):
        async with Client(f"{url}/mcp", read_timeout_seconds=60) as client:
            return await every_tool(client, ids)

    with LiveServer(lib) as server:
        check(asyncio.run(session(server.url)), ids)


def test_streamable_http_with_a_token_when_tokens_are_required(workspace):
    lib, ids = workspace
    add_account("mia", "a long enough password", "viewer")
    _, secret = create_token("mia")

    statuses: list[int] = []

    async def seen(response):
        statuses.append(response.status_code)

    async def session(url, headers):
        async with httpx2.AsyncClient(headers=headers, timeout=60, event_hooks={"response": [seen]}) as http, \
                Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
            return await client.call_tool("search_papers", {"query": "RoBERTa dynamic masking", "top_k": 1})

    with LiveServer(lib, ApiConfig(require_tokens=True)) as server:
        result = asyncio.run(session(server.url, {"Authorization": f"Bearer {secret}"}))
        assert not result.is_error and result.structured_content["citations"][0]["paper_id"] == ids[1]
        assert set(statuses) <= {200, 202, 204}
        statuses.clear()
        with pytest.raises(Exception):  # noqa: B017 - the SDK reports the refusal as its own error group
            asyncio.run(session(server.url, {}))
        assert statuses and set(statuses) == {401}  # the handshake (and the session close) refused
