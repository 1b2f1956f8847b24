"""The LLM extractor end to end through the real OpenAI client and cache against a local OpenAI-protocol server:
one call per chunk plus its gleaning rounds, retries, garbage replies, failing endpoints, the cache,
concurrency and JSON mode."""
# The replies are text received whole: breaking their lines would change them.
from __future__ import annotations

import json
import threading
import time

import pytest

from core.graph.extract.llm.extract import LLMExtractor
from core.graph.extract.llm.replies import MAX_LIST_ITEMS
from core.models.llm.factory import get_chat_model
from core.schema.records import Chunk
from core.settings.config import GraphConfig, LLMConfig, Settings
from core.store.sqlite_db import Database
from core.store.sqlite_llm_cache import SQLiteLLMCache
from tests.openai_server import OpenAIReplayServer, Reply
from tests.pipeline.extraction_replies import BERT_REPLY, JSON_REPLY

BERT_TEXT = ("We introduce a new language representation model called BERT. It obtains new state-of-the-art results "
             "on eleven natural language processing tasks, including pushing the GLUE score to 80.5% and MultiNLI "
             "accuracy to 86.7%.")
RESNET_TEXT = ("We present a residual learning framework. On the ImageNet dataset we evaluate residual nets with a "
               "depth of up to 152 layers; an ensemble achieves 3.57% top-5 error.")
ADAM_TEXT = "We introduce Adam, an algorithm for first-order gradient-based optimization of stochastic objectives."
GARBAGE_TEXT = "Table 3: ablation over the number of layers (chunk that confuses the model)."
FAILING_TEXT = "A chunk whose endpoint always fails."

RESNET_REPLY = """("entity"<|>ResNet<|>model<|>ResNet is a residual network of up to 152 layers.)##
("entity"<|>ImageNet<|>dataset<|>ImageNet is the image classification dataset used for evaluation.)##
("relationship"<|>ResNet<|>ImageNet<|>Residual nets are evaluated on ImageNet, reaching 3.57% top-5 error.<|>evaluated on<|>9)##
<|COMPLETE|>"""
ADAM_REPLY = """("entity"<|>Adam<|>method<|>Adam is an algorithm for first-order gradient-based optimization.)##
<|COMPLETE|>"""
GLEAN_REPLY = """("entity"<|>Top-5 Error<|>metric<|>Top-5 error is the classification metric reported.)##
("relationship"<|>ResNet<|>Top-5 Error<|>An ensemble of residual nets reaches 3.57% top-5 error.<|>measured by<|>8)##
<|COMPLETE|>"""
GARBAGE_REPLY = """I think the table shows ablations.
("entity"<|><|>method<|>no name)##
("relationship"<|>Layers)##
("table"<|>3<|>ablation)"""
EXTRACT_REPLIES = {BERT_TEXT: BERT_REPLY, RESNET_TEXT: RESNET_REPLY, ADAM_TEXT: ADAM_REPLY,
                   GARBAGE_TEXT: GARBAGE_REPLY}


def chunk(text: str, n: int = 0) -> Chunk:
    return Chunk(id=f"doc1:{n}", doc_id="doc1", index=n, kind="text", text=text, pages=[0], item_indices=[n])


def first_user_message(body) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def is_glean(body) -> bool:
    return sum(m["role"] == "user" for m in body["messages"]) > 1


def paper_model(body) -> Reply:
    """What a well-behaved model answers: by chunk for the extraction, the missed records when gleaning."""
    text = first_user_message(body)
    if is_glean(body):
        return Reply(GLEAN_REPLY if RESNET_TEXT in text else "<|COMPLETE|>")
    return Reply(next((reply for chunk_text, reply in EXTRACT_REPLIES.items() if chunk_text in text), "<|COMPLETE|>"))


@pytest.fixture
def server():
    with OpenAIReplayServer(default=paper_model) as s:
        yield s


def make_extractor(server, tmp_path, gleaning_rounds=1, concurrency=4, json_mode=False, max_retries=1,
                   db_name="papergraph.sqlite"):
    settings = Settings(llm=LLMConfig(provider="openai", base_url=server.url, model=server.model,
                                      max_retries=max_retries, concurrency=concurrency, timeout_s=10),
                        graph=GraphConfig(gleaning_rounds=gleaning_rounds))
    model = get_chat_model(settings, SQLiteLLMCache(Database(tmp_path / db_name)))
    return LLMExtractor(model, settings.graph, concurrency=concurrency, json_mode=json_mode)


def by_chunk(results):
    return {r.chunk_id: r for r in results}


def test_each_chunk_costs_one_extraction_call_plus_its_gleaning_rounds(server, tmp_path):
    extractor = make_extractor(server, tmp_path, gleaning_rounds=1)
    assert extractor.name == f"llm:openai:{server.model}"
    results = by_chunk(extractor.extract([chunk(BERT_TEXT, 0), chunk(RESNET_TEXT, 1)]))
    assert len(server.chat_requests) == 4
    bert, resnet = results["doc1:0"], results["doc1:1"]
    assert bert.llm_calls == 2 and resnet.llm_calls == 2
    assert {e.name for e in bert.entities} == {"BERT", "GLUE", "MultiNLI", "Accuracy", "SQuAD v1.1"}
    assert bert.extractor == extractor.name and not bert.failed and bert.dropped == 0
    # Gleaning adds what the first call missed, and a gleaned relation may point at a first-round entity.
    assert [e.name for e in resnet.entities] == ["ResNet", "ImageNet", "Top-5 Error"]
    assert [(r.source, r.target) for r in resnet.relations] == [("ResNet", "ImageNet"), ("ResNet", "Top-5 Error")]
    assert resnet.errors == []
    # The gleaning call continues the conversation: system, passage, the first reply, then the glean prompt.
    (glean,) = [b for b in server.chat_requests if is_glean(b) and RESNET_TEXT in first_user_message(b)]
    assert [m["role"] for m in glean["messages"]] == ["system", "user", "assistant", "user"]
    assert glean["messages"][2]["content"] == RESNET_REPLY and "missed" in glean["messages"][3]["content"]
    assert all(b["temperature"] == 0 for b in server.chat_requests)
    assert "response_format" not in glean


def test_more_gleaning_rounds_and_none(server, tmp_path):
    results = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=0).extract([chunk(RESNET_TEXT)]))
    assert len(server.chat_requests) == 1 and results["doc1:0"].llm_calls == 1
    assert [e.name for e in results["doc1:0"].entities] == ["ResNet", "ImageNet"]
    # Two rounds, each finding more, are two gleaning calls.
    server.requests.clear()
    glean_more = Reply('("entity"<|>Residual Learning<|>method<|>Learning residual functions.)##<|COMPLETE|>')
    server.then(Reply(RESNET_REPLY), Reply(GLEAN_REPLY), glean_more)
    results = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=2, db_name="two.sqlite")
                       .extract([chunk(RESNET_TEXT)]))
    assert len(server.chat_requests) == 3 and results["doc1:0"].llm_calls == 3
    assert [e.name for e in results["doc1:0"].entities] == ["ResNet", "ImageNet", "Top-5 Error", "Residual Learning"]


def test_gleaning_stops_when_a_round_adds_nothing(server, tmp_path):
    results = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=3).extract([chunk(ADAM_TEXT)]))
    assert len(server.chat_requests) == 2 and results["doc1:0"].llm_calls == 2
    assert [e.name for e in results["doc1:0"].entities] == ["Adam"]


def test_a_429_is_retried_and_the_chunk_succeeds(server, tmp_path):
    server.then(Reply(status=429, headers={"Retry-After": "0"}))
    results = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=0).extract([chunk(BERT_TEXT)]))
    assert len(server.chat_requests) == 2
    assert not results["doc1:0"].failed and len(results["doc1:0"].entities) == 5


def test_a_garbage_reply_gives_no_records_but_does_not_fail_the_chunk(server, tmp_path):
    results = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=1)
                       .extract([chunk(GARBAGE_TEXT, 0), chunk(ADAM_TEXT, 1)]))
    garbage = results["doc1:0"]
    assert not garbage.failed and garbage.entities == [] and garbage.relations == []
    assert garbage.dropped == 3 and garbage.llm_calls == 2 and len(garbage.errors) == 3
    assert [e.name for e in results["doc1:1"].entities] == ["Adam"]


def test_an_endpoint_that_always_fails_fails_that_chunk_only(server, tmp_path):
    server.when(FAILING_TEXT, Reply(status=500, headers={"Retry-After": "0"}))
    chunks = [chunk(BERT_TEXT, 0), chunk(FAILING_TEXT, 1), chunk(ADAM_TEXT, 2)]
    results = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=0, max_retries=1).extract(chunks))
    assert set(results) == {"doc1:0", "doc1:1", "doc1:2"}
    failed = results["doc1:1"]
    assert failed.failed and failed.entities == [] and failed.relations == [] and failed.llm_calls == 0
    assert len(failed.errors) == 1 and "HTTP 500" in failed.errors[0]
    assert sum(FAILING_TEXT in first_user_message(b) for b in server.chat_requests) == 2  # the call and one retry
    assert not results["doc1:0"].failed and len(results["doc1:0"].entities) == 5
    assert not results["doc1:2"].failed and [e.name for e in results["doc1:2"].entities] == ["Adam"]


def test_a_failed_gleaning_call_fails_the_chunk_so_it_is_retried(server, tmp_path):
    server.then(Reply(RESNET_REPLY), Reply(status=400))
    results = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=1).extract([chunk(RESNET_TEXT)]))
    result = results["doc1:0"]
    assert result.failed and result.entities == [] and "HTTP 400" in result.errors[0]
    # The retry pays only for the gleaning call: the first reply is in the cache.
    server.requests.clear()
    results = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=1).extract([chunk(RESNET_TEXT)]))
    assert len(server.chat_requests) == 1 and results["doc1:0"].llm_calls == 1
    assert [e.name for e in results["doc1:0"].entities] == ["ResNet", "ImageNet", "Top-5 Error"]


def test_running_again_with_the_cache_makes_no_request(server, tmp_path):
    chunks = [chunk(BERT_TEXT, 0), chunk(RESNET_TEXT, 1), chunk(ADAM_TEXT, 2)]
    first = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=1).extract(chunks))
    made = len(server.chat_requests)
    assert made == 6 and sum(r.llm_calls for r in first.values()) == 6
    again = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=1).extract(chunks))
    assert len(server.chat_requests) == made
    assert all(r.llm_calls == 0 for r in again.values())
    for chunk_id, result in first.items():
        assert again[chunk_id].entities == result.entities and again[chunk_id].relations == result.relations


def test_an_empty_chunk_makes_no_call(server, tmp_path):
    results = by_chunk(make_extractor(server, tmp_path).extract([chunk("  \n ", 0)]))
    assert len(server.chat_requests) == 0
    assert results["doc1:0"].entities == [] and results["doc1:0"].llm_calls == 0 and not results["doc1:0"].failed
    assert list(make_extractor(server, tmp_path).extract([])) == []


def test_chunks_run_concurrently_and_are_yielded_as_they_complete(tmp_path):
    lock, in_flight, peak = threading.Lock(), [0], [0]

    def slow_model(body):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(1.0 if BERT_TEXT in first_user_message(body) else 0.3)
        with lock:
            in_flight[0] -= 1
        return paper_model(body)

    with OpenAIReplayServer(default=slow_model) as server:
        chunks = [chunk(BERT_TEXT, 0), chunk(RESNET_TEXT, 1), chunk(ADAM_TEXT, 2)]
        order = [r.chunk_id for r in make_extractor(server, tmp_path, gleaning_rounds=0, concurrency=3)
                 .extract(chunks)]
    assert peak[0] >= 2
    assert sorted(order) == ["doc1:0", "doc1:1", "doc1:2"] and order[-1] == "doc1:0"


def test_json_mode_sends_the_capped_schema_and_reads_json(tmp_path):
    with OpenAIReplayServer(default=Reply(json.dumps(JSON_REPLY))) as server:
        extractor = make_extractor(server, tmp_path, gleaning_rounds=0, json_mode=True)
        (result,) = extractor.extract([chunk("GPT-3 is evaluated on LAMBADA in the few-shot setting.")])
        (body,) = server.chat_requests
    schema = body["response_format"]["json_schema"]["schema"]
    assert body["response_format"]["type"] == "json_schema"
    assert schema["properties"]["entities"]["maxItems"] == MAX_LIST_ITEMS
    assert "concept" in schema["properties"]["entities"]["items"]["properties"]["type"]["enum"]
    assert "JSON" in body["messages"][0]["content"]
    assert [e.name for e in result.entities] == ["GPT-3", "Few-shot learning", "LAMBADA"]
    assert len(result.relations) == 2 and not result.failed
