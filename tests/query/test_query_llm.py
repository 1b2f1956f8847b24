"""The query modes with an LLM, against the OpenAI-protocol replay server: answers that stream and cite, keyword
JSON that cannot be read, one shared keyword call in Compare, community map-reduce, the LLM reranker and the VLM."""
from __future__ import annotations

import json
import re

import pytest

from core.library import open_library
from core.pipeline.documents import add_pdf
from core.pipeline.ingest import process_queue
from core.query.engine import ask, compare
from core.query.records import QueryParams
from core.settings.workspace import Workspace
from tests import graph_papers
from tests.openai_server import OpenAIReplayServer, Reply, last_user_message
from tests.query.query_helpers import QUESTION, ingest


# ---------------------------------------------------------------------------------------------- with an LLM
def _llm_reply(body):
    text = last_user_message(body)
    system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
    if graph_papers.is_extraction_request(body) or "JSON report:" in text or text.rstrip().endswith("Description:"):
        return graph_papers.extraction_reply(body)
    if "high_level_keywords" in text:
        if "broken" in text:
            return Reply(content="Sure! Here are keywords: BERT, datasets")  # no JSON at all
        return Reply(content=json.dumps({"high_level_keywords": ["pre-training data"],
                                         "low_level_keywords": ["BERT", "BooksCorpus"]}))
    if text.startswith("Rate how useful each passage"):  # the LLM reranker: prefers passages not naming RoBERTa
        passages = re.findall(r"^\[(\d+)\] (.*?)(?=\n\n\[\d+\] |\n\nJSON:)", text, re.M | re.S)
        return Reply(content=json.dumps({"scores": [{"id": int(i), "score": 1 if "RoBERTa" in body_ else 9}
                                                    for i, body_ in passages]}))
    if "community report" in text and "JSON" in text:
        return Reply(content=json.dumps({"points": [{"description": "BERT is pre-trained on BooksCorpus.",
                                                     "score": 90}]}))
    if body.get("response_format", {}).get("json_schema", {}).get("name") == "select":  # write's "none" check
        found = re.search(r"^(\d+)\. .*BooksCorpus", text, re.M)
        first = re.search(r"^1\. (\S+ \S+)", text, re.M)  # else the first sentence's first words
        return Reply(content=json.dumps({"answer": "BooksCorpus", "sentence": found.group(1)} if found else
                                        {"answer": first.group(1) if first else "", "sentence": "1"}))
    if "Sources (cite as [n])" in system:
        n = re.search(r"^\[(\d+)\] .*\n.*BooksCorpus", system, re.M)
        cite = n.group(1) if n else "1"
        return Reply(content=f"BERT is pre-trained on the BooksCorpus dataset [{cite}]. "
                             f"This sentence cites nothing. Another claim points nowhere [42].")
    return Reply(content="ok")


@pytest.fixture(scope="module")
def llm_workspace(tmp_path_factory):
    with OpenAIReplayServer(default=_llm_reply, model="replay-answerer") as server:
        root = tmp_path_factory.mktemp("query-llm")
        ws = graph_papers.fast_workspace(root / "ws", provider="openai", base_url=server.url, model=server.model,
                                         max_retries=1)
        ingest(open_library(ws), root / "pdfs")
        yield ws, server


@pytest.mark.slow
def test_llm_answer_streams_cites_sources_and_marks_what_it_cannot_back(llm_workspace):
    ws, server = llm_workspace
    lib = open_library(Workspace(ws.root))
    before = len(server.chat_requests)
    pieces = []
    result = ask(lib, QUESTION, QueryParams(mode="mix"), on_token=pieces.append)
    made = server.chat_requests[before:]
    # keywords, write's "none" check (select), the answer: never more outside community
    assert len(made) == 3 and result.llm_calls == 3 and made[1]["response_format"]["json_schema"]["name"] == "select"
    assert made[2]["stream"] is True and pieces and pieces[-1] == result.answer.text
    assert result.retrieval.keywords.source == "llm:openai:replay-answerer"
    assert result.retrieval.keywords.low == ["BERT", "BooksCorpus"]
    answer = result.answer
    assert not answer.extractive and answer.model == "openai:replay-answerer"
    first = answer.sentences[0]
    assert first.citations and "BooksCorpus" in result.context.source(first.citations[0]).text
    assert [s.text for s in answer.uncited] == ["This sentence cites nothing.",
                                                "Another claim points nowhere [42]."]
    assert answer.unknown_citations == [42]
    # Checked against the passages: the cited sentence is supported, the two claims no passage makes are flagged.
    assert [s.support for s in answer.sentences] == ["cited", "unsupported", "unsupported"]
    assert result.llm_free == [] and result.tokens["prompt"] > 0

    again = ask(lib, QUESTION, QueryParams(mode="mix"))
    assert len(server.chat_requests) == before + 3 and again.llm_calls == 0 and again.llm_cached == 2
    assert again.answer.text == answer.text


def test_keyword_json_that_cannot_be_read_falls_back_to_the_llm_free_keywords(llm_workspace):
    ws, server = llm_workspace
    lib = open_library(Workspace(ws.root))
    result = ask(lib, "Which broken dataset is BERT pre-trained on?", QueryParams(mode="local", context_only=True))
    assert result.retrieval.keywords.source.startswith("spacy (the LLM failed")
    assert "BERT" in result.retrieval.keywords.low and result.context.sources


def test_compare_with_an_llm_shares_one_keyword_call(llm_workspace):
    ws, server = llm_workspace
    lib = open_library(Workspace(ws.root))
    before = len(server.chat_requests)
    results = compare(lib, "What does RoBERTa remove?", ["naive", "local", "mix"])
    keyword_calls = [r for r in server.chat_requests[before:] if "high_level_keywords" in last_user_message(r)]
    assert len(keyword_calls) == 1
    assert all(not r.answer.extractive for r in results.values())
    # naive: write's "none" check + the answer; local: the shared keyword call too
    assert results["naive"].llm_calls == 2 and results["local"].llm_calls == 3


@pytest.mark.slow
def test_community_mode_maps_over_reports_with_the_llm(llm_workspace):
    ws, server = llm_workspace
    lib = open_library(Workspace(ws.root))
    reports = lib.graph_sources.community_reports()
    assert reports
    before = len(server.chat_requests)
    result = ask(lib, "What is BERT trained on?", QueryParams(mode="community", community_top=2))
    maps = [r for r in server.chat_requests[before:] if "community report" in last_user_message(r)]
    # the maps, write's "none" check and the answer
    assert len(maps) == min(2, len(reports)) and result.llm_calls == len(maps) + 2
    assert "BERT is pre-trained on BooksCorpus." in result.context.text


def test_the_llm_reranker_reorders_passages_with_one_more_call(llm_workspace):
    ws, server = llm_workspace
    settings = ws.settings()
    settings.query.reranker = "llm"
    ws.save_settings(settings)
    try:
        lib = open_library(Workspace(ws.root))
        before = len(server.chat_requests)
        result = ask(lib, "Which corpus is BERT pre-trained on, per the first paper?", QueryParams(mode="naive"))
        rerank_calls = [r for r in server.chat_requests[before:]
                        if last_user_message(r).startswith("Rate how useful each passage")]
        # one rerank call, and every request made is counted (write's "none" check, the answer if it is written)
        assert len(rerank_calls) == 1 and result.llm_calls == len(server.chat_requests[before:]) >= 2
        # Without the LLM's scores the best passage for this question names RoBERTa (it is BERT's replication).
        assert "RoBERTa" not in result.retrieval.chunks[0].hit.chunk.text
        assert any(note.startswith("reranked by LLM") for note in result.retrieval.notes)
    finally:
        settings.query.reranker = "auto"
        ws.save_settings(settings)


@pytest.mark.slow
def test_the_vlm_enhanced_answer_sends_the_context_s_table_images(tmp_path):
    from tests import pdfs

    def vlm_reply(body):
        user = body["messages"][-1]["content"]
        if isinstance(user, list):  # the question with images
            return Reply(content="The table reports the solvers' accuracy on the Okapi benchmark [1].")
        return Reply(content="ok")

    with OpenAIReplayServer(default=vlm_reply, model="replay-vision") as server:
        ws = graph_papers.fast_workspace(tmp_path / "ws")
        settings = ws.settings()
        settings.vlm.provider, settings.vlm.base_url, settings.vlm.model = "openai", server.url, "replay-vision"
        ws.save_settings(settings)
        lib = open_library(ws)
        pdf = pdfs.make_paper_pdf(tmp_path / "paper.pdf")
        add_pdf(lib, pdf.name, pdf.read_bytes())
        process_queue(lib)
        question = "What accuracy do the lattice solvers reach on the Okapi benchmark?"
        result = ask(lib, question, QueryParams(mode="naive", vlm_images=True))
        table_sources = [s for s in result.context.sources if s.kind == "table"]
        assert table_sources, [s.kind for s in result.context.sources]
        (request,) = server.chat_requests
        parts = request["messages"][-1]["content"]
        images = [p for p in parts if p["type"] == "image_url"]
        assert images and images[0]["image_url"]["url"].startswith("data:image/png;base64,")
        assert f"Image of source [{table_sources[0].n}]:" in [p.get("text") for p in parts]
        assert result.answer.model == "openai:replay-vision" and not result.answer.extractive
        assert result.answer.sentences[0].citations == [1] and result.llm_calls == 1

        text_only = ask(lib, question, QueryParams(mode="naive"))  # the switch off: no LLM set, extractive
        assert text_only.answer.extractive and len(server.chat_requests) == 1
