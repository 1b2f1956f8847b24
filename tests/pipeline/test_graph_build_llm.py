"""The entity graph built by an LLM, through a real local HTTP server speaking the OpenAI protocol
(tests/openai_server.py): cached calls, description summaries, failures, pauses for uploads and kills."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.library import open_library
from core.pipeline.documents import add_pdf, delete_document, retry_document
from core.pipeline.graph.stage import process_graph_queue
from core.pipeline.ingest import process_queue
from core.schema.records import DocStatus
from core.settings.workspace import Workspace
from tests.graph_papers import (
    extraction_reply,
    fast_workspace,
    is_extraction_request,
)
from tests.openai_server import OpenAIReplayServer, Reply, last_user_message
from tests.paths import REPO
from tests.pipeline.graph_build_helpers import extracted_rows, extraction_times, node_named, snapshot
from tests.presentation.explorer_helpers import ingest

# ------------------------------------------------------------------------------------------------ LLM path

@pytest.fixture()
def llm_server():
    with OpenAIReplayServer(default=extraction_reply, model="replay-extractor") as server:
        yield server


def llm_workspace(root: Path, server: OpenAIReplayServer) -> Workspace:
    return fast_workspace(root, provider="openai", base_url=server.url, model=server.model, max_retries=2)


def test_llm_graph_and_reingesting_makes_no_llm_calls(tmp_path, pdf_dir, llm_server):
    lib = open_library(llm_workspace(tmp_path / "ws", llm_server))
    bert, roberta = ingest(lib, pdf_dir / "bert.pdf", pdf_dir / "roberta.pdf")
    chunks = len(lib.chunks.by_doc(bert)) + len(lib.chunks.by_doc(roberta))
    calls = len(llm_server.chat_requests)
    extraction_calls = sum(map(is_extraction_request, llm_server.chat_requests))
    assert extraction_calls == 2 * chunks  # one extraction and one gleaning round per chunk
    reports = lib.graph_sources.community_reports()
    assert any(r["generated_by"] == "openai:replay-extractor" for r in reports)  # an LLM wrote the reports
    node = node_named(lib, "RoBERTa")
    assert node.type == "method" and node.extractors == ["llm:openai:replay-extractor"]
    assert lib.graph_sources.papers()[bert].llm_calls == 2 * len(lib.chunks.by_doc(bert))
    before = snapshot(lib)
    # Re-parse an unchanged paper, then delete it and upload it again: the graph is rebuilt without one call.
    retry_document(lib, bert)
    process_queue(lib)
    process_graph_queue(lib)
    delete_document(lib, roberta)
    ingest(lib, pdf_dir / "roberta.pdf")
    assert len(llm_server.chat_requests) == calls
    assert snapshot(lib) == before
    from core.models.llm.cache import usage_summary
    from core.presentation.display import llm_usage_text

    usage = usage_summary(lib.llm_cache)
    assert usage["calls"] == calls and usage["cache_hits"] >= 2 * len(lib.chunks.by_doc(roberta))
    assert usage["by_purpose"]["extract"]["calls"] == chunks
    assert f"{calls} LLM calls made" in llm_usage_text(usage)


@pytest.mark.slow
def test_descriptions_past_the_token_budget_are_summarised_by_the_llm(tmp_path, pdf_dir, llm_server):
    ws = llm_workspace(tmp_path / "ws", llm_server)
    settings = ws.settings()
    settings.graph.description_token_budget = 40  # BERT's sentences from several chunks are over it
    ws.save_settings(settings)
    lib = open_library(ws)
    ingest(lib, pdf_dir / "bert.pdf", pdf_dir / "roberta.pdf")
    bert = node_named(lib, "BERT")
    assert len(bert.source_chunks) > 1 and bert.description.startswith("Summary of BERT")
    summaries = [r for r in llm_server.chat_requests if r["messages"][-1]["content"].rstrip().endswith("Description:")]
    bert_prompts = [r["messages"][-1]["content"] for r in summaries if '"BERT"' in r["messages"][-1]["content"]]
    assert bert_prompts and "We introduce BERT" in bert_prompts[0]  # the passages it summarised
    # Without an LLM the same budget cuts the description instead and says how much was left out.
    plain = open_library(fast_workspace(tmp_path / "plain"))
    settings = plain.workspace.settings()
    settings.graph.description_token_budget = 40
    plain.workspace.save_settings(settings)
    plain = open_library(plain.workspace)
    ingest(plain, pdf_dir / "bert.pdf", pdf_dir / "roberta.pdf")
    assert "more passages)" in node_named(plain, "BERT").description


@pytest.mark.slow
def test_llm_failures_and_bad_replies_never_fail_the_paper(tmp_path, pdf_dir, llm_server):
    llm_server.when("RoBERTa removes", Reply(content="this is not an extraction at all ###"))
    llm_server.when("XLNet", Reply(status=500))
    lib = open_library(llm_workspace(tmp_path / "ws", llm_server))
    add_pdf(lib, "roberta.pdf", (pdf_dir / "roberta.pdf").read_bytes())
    process_queue(lib)
    (doc,) = process_graph_queue(lib)
    assert doc.graph_status == "done"
    chunks = len(lib.chunks.by_doc(doc.id))
    assert f"; 1 of {chunks} chunks could not be extracted (" in doc.graph_message, doc.graph_message
    assert "): retry the graph to redo them" in doc.graph_message, doc.graph_message
    assert node_named(lib, "RoBERTa") is not None  # the chunks that worked are in the graph
    # The endpoint recovers: retrying the graph redoes only the failed chunk.
    llm_server.rules.clear()
    before = len(llm_server.chat_requests)
    from core.pipeline.graph.stage import retry_graph

    retry_graph(lib, doc.id)
    (doc,) = process_graph_queue(lib)
    assert doc.graph_status == "done" and "could not" not in doc.graph_message
    # That chunk's extraction and gleaning; the other chunks come from the cache. (Community reports, which
    # change with the graph, are asked for again.)
    assert sum(map(is_extraction_request, llm_server.chat_requests[before:])) == 2
    assert node_named(lib, "XLNet") is not None


@pytest.mark.slow
def test_a_long_extraction_pauses_for_a_new_upload_and_resumes(tmp_path, pdf_dir):
    import threading

    with OpenAIReplayServer(default=lambda body: Reply(content=extraction_reply(body).content, delay_s=0.3),
                            model="replay-extractor") as server:
        lib = open_library(fast_workspace(tmp_path / "ws", provider="openai", base_url=server.url,
                                          model=server.model, concurrency=1))  # one chunk at a time: slow
        bert = add_pdf(lib, "bert.pdf", (pdf_dir / "bert.pdf").read_bytes()).doc_id
        process_queue(lib)
        results: list = []
        worker = threading.Thread(target=lambda: results.extend(
            process_graph_queue(lib, yield_to_uploads=True, communities=False)))
        worker.start()
        deadline = time.time() + 60
        while time.time() < deadline and not extracted_rows(lib):
            time.sleep(0.1)
        roberta = add_pdf(lib, "roberta.pdf", (pdf_dir / "roberta.pdf").read_bytes()).doc_id  # an upload arrives
        worker.join(timeout=120)
        (paused,) = results
        assert paused.id == bert and paused.graph_status == "pending"
        assert lib.documents.get(bert).status == DocStatus.READY  # searchable all along
        assert 0 < extracted_rows(lib) < len(lib.chunks.by_doc(bert))  # stopped part-way, work kept
        assert process_queue(lib)[0].id == roberta  # the upload is parsed first...
        done = process_graph_queue(lib)  # ...then both graphs are built, BERT's from where it stopped
        assert {d.id: d.graph_status for d in done} == {bert: "done", roberta: "done"}
        assert node_named(lib, "RoBERTa") and bert in node_named(lib, "BERT").doc_ids


@pytest.mark.slow
def test_killed_mid_extraction_resumes_to_the_same_graph(tmp_path, pdf_dir):
    with OpenAIReplayServer(default=lambda body: Reply(content=extraction_reply(body).content, delay_s=0.4),
                            model="replay-extractor") as server:
        reference = open_library(llm_workspace(tmp_path / "reference", server))
        ingest(reference, pdf_dir / "bert.pdf", pdf_dir / "roberta.pdf")
        expected = snapshot(reference)

        root = tmp_path / "killed"
        lib = open_library(llm_workspace(root, server))
        for name in ("bert.pdf", "roberta.pdf"):
            add_pdf(lib, name, (pdf_dir / name).read_bytes())
        process_queue(lib)
        env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(root))
        proc = subprocess.Popen([sys.executable, "-m", "core", "graph", "build", "-q"], cwd=REPO, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while time.time() < deadline and not extracted_rows(lib):
            time.sleep(0.2)
        proc.kill()
        proc.wait()
        chunks = {c.id: c.text for d in lib.documents.list() for c in lib.chunks.by_doc(d.id)}
        stored = extraction_times(lib)  # chunk id → when it was extracted, as the kill left them
        assert stored, "the build was killed before it extracted anything"
        assert len(stored) < len(chunks), "the build finished before it was killed: nothing left to resume"
        before = len(server.chat_requests)
        out = subprocess.run([sys.executable, "-m", "core", "graph", "build", "-q"], cwd=REPO, env=env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
        resumed = open_library(Workspace(root))
        assert snapshot(resumed) == expected
        # The resumed build extracted only the chunks the killed one had not stored: those keep their rows, and
        # no extraction prompt of the restart holds their text. (A chunk whose reply the killed build had cached
        # but not stored is taken from the cache, so the restart may ask for fewer than all the missing ones.)
        after = extraction_times(resumed)
        assert set(after) == set(chunks) and {c: after[c] for c in stored} == stored
        prompts = [last_user_message(r) for r in server.chat_requests[before:]
                   if "\nOutput:" in last_user_message(r)]
        asked = [cid for prompt in prompts for cid, text in chunks.items() if text in prompt]
        assert len(asked) == len(prompts) and len(set(asked)) == len(asked), "one prompt per chunk, never twice"
        assert asked and not set(asked) & set(stored), (asked, sorted(stored))
