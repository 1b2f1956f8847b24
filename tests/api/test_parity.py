"""The same question gets the same answer and the same citations whichever way it comes in: the engine call the
Ask page makes, the service layer, the CLI (`python -m core ask … --json`, another process), REST, MCP (streamable
HTTP) and the OpenAI-compatible chat."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import httpx
import openai
import pytest
from mcp import Client

from core.query.engine import ask as engine_ask
from core.query.records import QueryParams
from core.service import ask as service
from tests.api.helpers import ANSWER_WORD, LiveServer, build_workspace, cited_keys
from tests.paths import REPO

QUESTIONS = [("Which dataset is BERT pre-trained on?", "mix"),
             ("What accuracy does RoBERTa reach on MultiNLI?", "naive")]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    lib, _ = build_workspace(tmp_path_factory.mktemp("parity"))
    with LiveServer(lib) as server:
        yield lib, server


def _cli(lib, question: str, mode: str) -> dict:
    env = {**os.environ, "PAPERGRAPH_WORKSPACE": str(lib.workspace.root)}
    done = subprocess.run([sys.executable, "-m", "core", "ask", question, "--mode", mode, "--json"], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


async def _mcp(url: str) -> list[dict]:
    async with Client(f"{url}/mcp", read_timeout_seconds=60) as client:
        return [(await client.call_tool("ask", {"question": q, "mode": m})).structured_content for q, m in QUESTIONS]


@pytest.mark.slow  # the CLI is another process that loads the models (~8 s)
def test_every_face_gives_the_same_answer_and_citations(served):
    lib, server = served
    inproc = [service.ask(lib, q, m).to_dict() for q, m in QUESTIONS]
    assert ANSWER_WORD in inproc[0]["answer"] and "90.2" in inproc[1]["answer"]
    with httpx.Client(base_url=server.url, timeout=60) as client:
        rest = [client.post("/api/ask", json={"question": q, "mode": m}).json() for q, m in QUESTIONS]
    mcp = asyncio.run(_mcp(server.url))
    chat_client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="none", max_retries=0)
    chat = [chat_client.chat.completions.create(model=f"papergraph-{m}", messages=[{"role": "user", "content": q}])
            for q, m in QUESTIONS]
    for i, (question, mode) in enumerate(QUESTIONS):
        expected = inproc[i]
        keys = cited_keys(expected["citations"])
        assert keys, expected
        page = engine_ask(lib, question, QueryParams.from_config(lib.settings.query, mode=mode))  # the Ask page's
        assert page.answer.text == expected["answer"]
        cli = _cli(lib, question, mode)
        assert cli["answer"]["text"] == expected["answer"]
        by_n = {c["n"]: c for c in cli["citations"]}
        assert [(n, by_n[n]["doc_id"], by_n[n]["page"], by_n[n]["chunk_id"], tuple(by_n[n]["bbox"] or ()))
                for n, *_ in keys] == keys
        for face, got in (("rest", rest[i]), ("mcp", mcp[i])):
            assert got["answer"] == expected["answer"], face
            assert got["citations"] == expected["citations"], face
        assert chat[i].choices[0].message.content.startswith(expected["answer"])
        assert chat[i].model_extra["citations"] == expected["citations"]
