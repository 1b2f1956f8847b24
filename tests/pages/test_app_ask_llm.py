"""The Ask page with an LLM configured, through AppTest against the OpenAI-protocol replay server: the answer is
streamed into its slot and then drawn once, whole, with its citations (the slot exists only when a model writes
the answer; an extractive answer is drawn directly)."""
from __future__ import annotations

import json
import re

import pytest

from core.library import open_library
from core.pipeline.documents import add_pdf
from core.pipeline.graph.stage import process_graph_queue
from core.pipeline.ingest import process_queue
from core.schema.records import DocStatus
from tests import graph_papers
from tests.openai_server import OpenAIReplayServer, Reply, last_user_message
from tests.pages.app_helpers import ask, run_app, texts

ANSWER = "BERT is pre-trained on the BooksCorpus dataset"


def _reply(body) -> Reply:
    text = last_user_message(body)
    system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
    if graph_papers.is_extraction_request(body) or "JSON report:" in text or text.rstrip().endswith("Description:"):
        return graph_papers.extraction_reply(body)
    if "high_level_keywords" in text:
        return Reply(content=json.dumps({"high_level_keywords": ["pre-training data"],
                                         "low_level_keywords": ["BERT", "BooksCorpus"]}))
    if "Sources (cite as [n])" in system and "France" in text:  # asked what the papers never say
        return Reply(content="Short answer: Paris\nThe capital of France is Paris, a city on the Seine.")
    if "Sources (cite as [n])" in system:
        n = re.search(r"^\[(\d+)\] .*\n.*BooksCorpus", system, re.M)
        return Reply(content=f"{ANSWER} [{n.group(1) if n else '1'}].")
    return Reply(content="ok")


def _bert_workspace(tmp_path, server):
    ws = graph_papers.fast_workspace(tmp_path / "ws", provider="openai", base_url=server.url, model=server.model,
                                     max_retries=1)
    lib = open_library(ws)
    pdf = graph_papers.make_bert_pdf(tmp_path / "pdfs")
    add_pdf(lib, pdf.name, pdf.read_bytes())
    (doc,) = process_queue(lib)
    assert doc.status == DocStatus.READY, doc.message
    process_graph_queue(lib)
    return ws


@pytest.mark.slow
def test_an_llm_answer_streams_and_is_drawn_once_with_its_citation(monkeypatch, tmp_path):
    with OpenAIReplayServer(default=_reply, model="replay-answerer") as server:
        ws = _bert_workspace(tmp_path, server)
        at = ask(run_app(monkeypatch, ws.root, "pages/ask.py"), "Which dataset is BERT pre-trained on?", mode="naive")

        answers = [r for r in server.chat_requests if "Sources (cite as [n])" in str(r["messages"])]
        assert answers and all(r.get("stream") for r in answers), "the answer was asked for as a stream"
        shown = [m.value for m in at.markdown if ANSWER in m.value.replace("\\", "")]
        assert len(shown) == 1, shown  # drawn once, whole: the streaming slot was emptied
        assert "▌" not in shown[0] and "\\[1\\]" in shown[0]
        assert "Extractive answer" not in texts(at.caption)


@pytest.mark.slow
def test_an_llm_answer_the_papers_do_not_hold_is_flagged_whole_and_not_shown_as_the_answer(monkeypatch, tmp_path):
    with OpenAIReplayServer(default=_reply, model="replay-answerer") as server:
        ws = _bert_workspace(tmp_path, server)
        at = ask(run_app(monkeypatch, ws.root, "pages/ask.py"), "What is the capital of France?", mode="naive")
        shown = texts(at.markdown)
        assert "The capital of France is Paris" in shown and "not found in the passages" in shown
        assert "**Paris**" not in shown  # the model's own knowledge is not set in bold as the papers' answer
        assert "Nothing this answer says is in the passages" in texts(at.warning)
        # What was retrieved is not offered as the answer's evidence: folded away under what it is.
        assert "Passages retrieved (none says what the answer says)" in [e.label for e in at.expander]
        assert "#### Sources" not in shown
