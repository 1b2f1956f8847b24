"""Saved evaluation runs through REST and MCP on a live server: a real run made by core.eval.runner on the small test
workspace (two modes, LLM-free metrics), listed with each mode's means, read row by row, by a viewer's token; bad
and unknown run ids get their codes."""
from __future__ import annotations

import asyncio

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from core.api.config import ApiConfig
from core.eval.runner import EvalOptions, run_eval
from core.schema.eval import DONE, EvalQuestion
from core.settings.accounts import add_account
from core.settings.tokens import create_token
from tests.api.helpers import ANSWER_WORD, QUESTION, LiveServer, build_workspace

MODES = ["naive", "mix"]


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """The workspace with one finished run: a question with a reference answer and passage, one without either."""
    lib, _ = build_workspace(tmp_path_factory.mktemp("eval-api"))
    store = lib.eval_store
    qset = store.save_set("bert questions", [
        EvalQuestion("books", QUESTION, [ANSWER_WORD],
                     ["BERT is pre-trained with a masked language model objective on the BooksCorpus dataset."]),
        EvalQuestion("noref", "What does dynamic masking replace?", []),
    ])
    outcome = run_eval(lib, qset, EvalOptions(modes=MODES, k=5, use_llm=False, ragas=False, ragas_judge=False),
                       label="api test")
    assert outcome.run.status == DONE and len(outcome.results) == 4
    return lib, outcome


@pytest.fixture(scope="module")
def viewer(evaluated):
    """Served as off loopback, read with a viewer's token."""
    with LiveServer(evaluated[0], ApiConfig(require_tokens=True)) as server:
        yield server


def _viewer_headers() -> dict[str, str]:
    add_account("vic", "a long enough password", "viewer")
    _, secret = create_token("vic")
    return {"Authorization": f"Bearer {secret}"}


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def test_a_viewer_lists_the_runs_with_each_modes_means_of_the_stored_scores(evaluated, viewer):
    _, outcome = evaluated
    with httpx.Client(base_url=viewer.url, headers=_viewer_headers(), timeout=60) as client:
        runs = client.get("/api/eval/runs").json()
        assert [r["id"] for r in runs] == [outcome.run.id]
        run = runs[0]
        assert run["question_set"] == "bert questions" and run["label"] == "api test" and run["status"] == "done"
        assert run["modes"] == MODES and run["done"] == run["total"] == 4 and run["created"].endswith("+00:00")
        assert run["options"]["use_llm"] is False and run["options"]["k"] == 5
        assert list(run["summary"]) == MODES
        for mode in MODES:
            mine = [r for r in outcome.results if r.mode == mode]
            metrics = run["summary"][mode]
            assert list(metrics)[:3] == ["em", "f1", "contains_reference"] and list(metrics)[-1] == "seconds"
            for name in ("em", "f1", "contains_reference", "recall@5", "mrr"):
                assert metrics[name]["mean"] == pytest.approx(_mean([r.scores[name].value for r in mine]))
                assert metrics[name]["n"] == 1 and metrics[name]["missing"] == 1  # "noref" has nothing to score
        assert run["summary"]["naive"]["contains_reference"]["mean"] == 1.0  # the extractive answer names it
        assert client.get("/api/eval/runs", params={"question_set": "bert questions"}).json() == runs
        assert client.get("/api/eval/runs", params={"question_set": "other set"}).json() == []
        assert client.get("/api/eval/runs", params={"limit": 0}).json()["error"]["code"] == "invalid_input"
    assert httpx.get(f"{viewer.url}/api/eval/runs").status_code == 401


def test_one_run_gives_a_row_per_question_and_mode_as_stored(evaluated, viewer):
    _, outcome = evaluated
    with httpx.Client(base_url=viewer.url, headers=_viewer_headers(), timeout=60) as client:
        detail = client.get(f"/api/eval/runs/{outcome.run.id}").json()
        assert detail["run"]["id"] == outcome.run.id
        stored = {(r.question_id, r.mode): r for r in outcome.results}
        assert sorted((row["question_id"], row["mode"]) for row in detail["rows"]) == sorted(stored)
        for row in detail["rows"]:
            result = stored[(row["question_id"], row["mode"])]
            assert row["answer"] == result.answer and row["retrieved_chunk_ids"] == result.retrieved_chunk_ids
            assert row["scores"] == {name: s.value for name, s in result.scores.items()}
            assert row["contexts"] is None  # only when asked for
        books = next(row for row in detail["rows"] if row["question_id"] == "books")
        assert books["question"] == QUESTION and books["references"] == [ANSWER_WORD]
        noref = next(row for row in detail["rows"] if row["question_id"] == "noref")
        assert noref["scores"]["em"] is None and noref["missing"]["em"].startswith("no reference answer")
        with_contexts = client.get(f"/api/eval/runs/{outcome.run.id}", params={"contexts": "true"}).json()
        assert all(row["contexts"] for row in with_contexts["rows"])
        unknown = client.get("/api/eval/runs/" + "0" * 12)
        assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
        bad = client.get("/api/eval/runs/..%2Fsettings")
        assert bad.status_code in (400, 404)
        bad = client.get("/api/eval/runs/not-a-run")
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_input"


def test_the_mcp_tool_lists_the_runs_and_reads_one(evaluated, viewer):
    _, outcome = evaluated
    headers = _viewer_headers()

    async def session():
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
                Client(streamable_http_client(f"{viewer.url}/mcp", http_client=http)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            listed = await client.call_tool("list_evaluation_runs", {})
            one = await client.call_tool("list_evaluation_runs", {"run_id": outcome.run.id})
            unknown = await client.call_tool("list_evaluation_runs", {"run_id": "0" * 12})
            return tools["list_evaluation_runs"], listed, one, unknown

    tool, listed, one, unknown = asyncio.run(session())
    assert tool.annotations.read_only_hint and "which mode" in tool.description and "use ask" in tool.description
    assert not listed.is_error and listed.structured_content["runs"][0]["id"] == outcome.run.id
    text = listed.content[0].text
    assert outcome.run.id in text and "bert questions" in text and "naive: em" in text and "mix: em" in text
    assert not one.is_error and len(one.structured_content["rows"]) == 4 and "books [naive]" in one.content[0].text
    assert unknown.is_error and "not_found" in unknown.content[0].text
