"""RAGAS scores (core/eval/ragas_scores.py): ragas' own metric classes on hand-made samples whose values can be
worked out by hand, and the judged metrics against the real local OpenAI-compatible replay server, whose
scripted JSON replies make faithfulness, context precision and recall come out at known fractions. Answer
relevancy runs the workspace's real embedding model. Nothing is mocked: every judge call crosses a socket."""
from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from pathlib import Path

import pytest

from core.eval.ragas_scores import (
    METRIC_NAMES_LLM,
    METRIC_NAMES_NON_LLM,
    RagasSample,
    ragas_judge_available,
    score_llm,
    score_non_llm,
)
from core.library import open_library
from core.models.llm.client import shared_limit
from core.schema.eval import Score
from tests import graph_papers
from tests.openai_server import OpenAIReplayServer, Reply

MODEL = "replay-judge"
QUESTION = "Which objectives is BERT pre-trained with?"
ANSWER = "BERT is pre-trained with masked language modelling. It also uses next sentence prediction."
MLM = "BERT is pre-trained with a masked language model objective that predicts hidden tokens."
NSP = "BERT adds a next sentence prediction task during pre-training."
OFF_TOPIC = "The Eiffel Tower is a wrought-iron lattice tower in Paris."
REFERENCE = "BERT is pre-trained with masked language modelling and next sentence prediction."

# ---------------------------------------------------------------------------------------------- network guard

# CI has no network: nothing here may try to reach one (ragas telemetry, nltk data, tiktoken encodings, a model
# hub). An audit hook sees every name lookup and connect of the process; it only observes.
_LOCAL = ("127.0.0.1", "::1", "localhost")
_lookups: list[str] = []
_connects: list = []


def _audit(event: str, args: tuple) -> None:
    if event == "socket.getaddrinfo":
        _lookups.append(str(args[0]))
    elif event == "socket.connect":
        _connects.append(args[1])


sys.addaudithook(_audit)


@pytest.fixture(autouse=True)
def no_network_beyond_localhost():
    _lookups.clear()
    _connects.clear()
    yield
    assert [h for h in _lookups if h not in _LOCAL] == []
    assert [a for a in _connects if not (isinstance(a, tuple) and a and a[0] in _LOCAL)] == []


# ---------------------------------------------------------------------------------------------- without a model

def _one(**fields) -> dict:
    sample = dict(question=QUESTION, answer=ANSWER, contexts=[MLM], references=[ANSWER], reference_contexts=[])
    sample.update(fields)
    (scores,) = score_non_llm([RagasSample(**sample)])
    assert tuple(scores) == METRIC_NAMES_NON_LLM
    return scores


def test_identical_answer_scores_one_and_a_disjoint_one_scores_low():
    same = _one()
    assert same["string_similarity"].value == 1.0
    assert same["bleu"].value == pytest.approx(1.0) and same["rouge"].value == pytest.approx(1.0)
    other = _one(answer="Tokyo hosts quiet temples, gardens.", references=[REFERENCE])  # no word in common
    assert other["string_similarity"].value < 0.35
    assert other["bleu"].value < 0.05 and other["rouge"].value == 0.0


def test_several_references_count_the_closest_one():
    best = _one(references=["Something else entirely about tigers.", ANSWER])
    assert best["string_similarity"].value == 1.0 and best["rouge"].value == pytest.approx(1.0)


def test_reference_passage_retrieved_first_ranks_above_retrieved_last():
    first = _one(contexts=[MLM, OFF_TOPIC, "Dogs bark at night."], reference_contexts=[MLM])
    last = _one(contexts=[OFF_TOPIC, "Dogs bark at night.", MLM], reference_contexts=[MLM])
    # Average precision over the verdicts [1, 0, 0] and [0, 0, 1].
    assert first["non_llm_context_precision"].value == pytest.approx(1.0)
    assert last["non_llm_context_precision"].value == pytest.approx(1 / 3)


def test_context_recall_counts_reference_passages_found():
    both = _one(contexts=[NSP, OFF_TOPIC, MLM], reference_contexts=[MLM, NSP])
    half = _one(contexts=[MLM, OFF_TOPIC], reference_contexts=[MLM, NSP])
    assert both["non_llm_context_recall"].value == 1.0
    assert half["non_llm_context_recall"].value == 0.5


# A chunk as the parser makes it: ~1,200 characters of which the evidence sentence is one.
LONG_MLM = ("The model is described in section 3. " * 12 + MLM + " Training runs for a million steps. " * 12)
LONG_OFF = "The Eiffel Tower is a wrought-iron lattice tower in Paris. " * 20


def test_sentence_evidence_inside_long_chunks_scores_by_the_chunk_that_holds_it():
    # Fed the sentence itself, ragas' Levenshtein similarity of a sentence and a 1,200-character chunk is far below
    # 0.5, and both metrics were 0 on every row. The sentence now stands for the retrieved passage holding it.
    first = _one(contexts=[LONG_MLM, LONG_OFF], reference_contexts=[MLM])
    assert first["non_llm_context_precision"].value == pytest.approx(1.0)
    assert first["non_llm_context_recall"].value == 1.0
    # Ranked second of two: average precision = (1/2) / 1.
    second = _one(contexts=[LONG_OFF, LONG_MLM], reference_contexts=[MLM])
    assert second["non_llm_context_precision"].value == pytest.approx(0.5)
    assert second["non_llm_context_recall"].value == 1.0
    # Two evidence sentences, one retrieved: recall 1/2; precision rates the one chunk that holds evidence, first.
    half = _one(contexts=[LONG_MLM, LONG_OFF], reference_contexts=[MLM, NSP])
    assert half["non_llm_context_recall"].value == 0.5
    assert half["non_llm_context_precision"].value == pytest.approx(1.0)
    # Typed with an en dash where the chunk has a hyphen: still held (the normalised rule).
    typed = MLM.replace("pre-trained", "pre\u2013trained")
    assert _one(contexts=[LONG_MLM], reference_contexts=[typed])["non_llm_context_recall"].value == 1.0
    # Evidence nowhere in the context: 0, and that 0 is a real miss.
    miss = _one(contexts=[LONG_OFF], reference_contexts=[MLM])
    assert miss["non_llm_context_recall"].value == 0.0


def test_reference_passages_for_ragas_by_hand():
    from core.eval.ragas_metrics import reference_passages

    for_precision, for_recall = reference_passages([MLM, NSP, MLM[:40]], [LONG_OFF, LONG_MLM])
    assert for_precision == [LONG_MLM, NSP]  # the holder once; the unfound sentence as it is
    assert for_recall == [LONG_MLM, NSP, LONG_MLM]  # one per evidence sentence


def test_bleu_of_answers_shorter_than_four_words_is_missing_not_zero():
    short = _one(answer="86.7", references=["86.7"])
    assert short["bleu"].value is None and "shorter than 4 words" in short["bleu"].error
    assert short["string_similarity"].value == 1.0 and short["rouge"].value == pytest.approx(1.0)


def test_no_evidence_gives_no_value_and_says_why():
    scores = _one(reference_contexts=[])
    for name in ("non_llm_context_precision", "non_llm_context_recall"):
        assert scores[name].value is None and scores[name].error == "no reference passages"
    empty = _one(answer="", references=[])
    assert empty["bleu"].value is None and "reference" in empty["bleu"].error
    unanswered = _one(answer="  ")
    assert unanswered["rouge"].value is None and unanswered["rouge"].error == "no answer to score"
    nothing = _one(contexts=[], reference_contexts=[MLM])
    assert nothing["non_llm_context_recall"].value == 0.0
    assert nothing["non_llm_context_precision"].value is None


def test_non_llm_scores_from_a_thread_and_from_inside_a_running_loop():
    samples = [RagasSample(QUESTION, ANSWER, [MLM], [ANSWER], [MLM])]
    seen = []
    worker = threading.Thread(target=lambda: seen.append(score_non_llm(samples)))
    worker.start()
    worker.join(60)

    async def caller():  # a sync call from async code: asyncio.run would refuse in this thread
        return score_non_llm(samples)

    inside = asyncio.run(caller())
    assert seen[0][0]["string_similarity"].value == inside[0]["string_similarity"].value == 1.0


# ---------------------------------------------------------------------------------------------- the judge

def _input(prompt: str) -> dict:
    """The metric's input, which ragas writes as JSON after the last 'input:' of its prompt."""
    return json.loads(prompt.rsplit("input: ", 1)[1].rsplit("Output:", 1)[0])


def _first_user(body: dict) -> str:
    # On a re-ask, instructor appends the bad reply and a correction request: the task is the first message.
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def judge(body: dict) -> Reply:
    """A judge whose verdicts are set by the passage texts, so each metric's value is known in advance:
    2 statements, the first supported → faithfulness 0.5; a passage is useful when it mentions BERT;
    3 reference statements, 2 attributed → context recall 2/3; the generated question is the asked one."""
    prompt = _first_user(body)
    data = _input(prompt)
    broken = "BROKEN" in json.dumps(data)
    if "analyze the complexity of each sentence" in prompt:
        return Reply(json.dumps({"statements": ["BERT uses masked language modelling.",
                                                "BERT uses next sentence prediction."]}))
    if "judge the faithfulness of a series of statements" in prompt:
        if broken:
            return Reply("I am sorry, I cannot answer in JSON today.")
        return Reply(json.dumps({"statements": [
            {"statement": data["statements"][0], "reason": "stated in the context", "verdict": 1},
            {"statement": data["statements"][1], "reason": "not in the context", "verdict": 0}]}))
    if "Generate a question for the given answer" in prompt:
        return Reply(json.dumps({"question": QUESTION, "noncommittal": 0}))
    if "verify if the context was useful" in prompt:
        return Reply(json.dumps({"reason": "checked", "verdict": int("BERT" in data["context"])}))
    if "classify if the statement can be attributed" in prompt:
        if broken:
            return Reply(json.dumps({"verdicts": "all fine"}))
        return Reply(json.dumps({"classifications": [
            {"statement": "BERT uses masked language modelling.", "reason": "yes", "attributed": 1},
            {"statement": "BERT uses next sentence prediction.", "reason": "yes", "attributed": 1},
            {"statement": "BERT was released in 2018.", "reason": "no", "attributed": 0}]}))
    return Reply("unexpected prompt", status=400)


@pytest.fixture
def server():
    with OpenAIReplayServer(default=judge, model=MODEL) as s:
        yield s


def _lib(root: Path, server: OpenAIReplayServer, **llm):
    settings = dict(provider="openai", base_url=server.url, model=MODEL, max_retries=0, concurrency=2)
    settings.update(llm)
    return open_library(graph_papers.fast_workspace(root, **settings))


GOOD = RagasSample(QUESTION, ANSWER, [MLM, OFF_TOPIC, NSP], [REFERENCE], [MLM])
# Calls per sample: 2 for faithfulness, 3 for answer relevancy (ragas' strictness), one per passage for
# context precision, 1 for context recall.
GOOD_CALLS = 2 + 3 + 3 + 1


def test_judged_metrics_come_out_as_the_judge_decided_and_are_cached(tmp_path, server):
    lib = _lib(tmp_path / "ws", server)
    assert ragas_judge_available(lib) == ""
    ticks = []
    samples = [GOOD, RagasSample("What does the tower in Paris use?", ANSWER, [OFF_TOPIC, MLM], [REFERENCE], [])]
    first = score_llm(lib, samples, on_progress=lambda done, total: ticks.append((done, total)))
    assert [tuple(r) for r in first] == [METRIC_NAMES_LLM] * 2
    good, second_row = first
    assert good["faithfulness"].value == 0.5
    assert good["context_precision"].value == pytest.approx((1 + 2 / 3) / 2)  # verdicts 1, 0, 1
    assert good["context_recall"].value == pytest.approx(2 / 3)
    assert good["answer_relevancy"].value == pytest.approx(1.0, abs=1e-4)  # the same question, embedded
    assert second_row["context_precision"].value == pytest.approx(0.5)  # verdicts 0, 1
    # The generated question ("Which objectives is BERT…") differs from the asked one: cosine well below 1.
    assert second_row["answer_relevancy"].value < 0.9
    assert len(server.chat_requests) == GOOD_CALLS + (2 + 3 + 2 + 1)
    assert sorted(ticks)[-1] == (2, 2) and len(ticks) == 2
    assert all(r["response_format"] == {"type": "json_object"} for r in server.chat_requests)

    again = score_llm(lib, samples)
    assert len(server.chat_requests) == GOOD_CALLS + 8  # not one more call
    assert again == first
    assert any(isinstance(a, tuple) and a[0] == "127.0.0.1" for a in _connects)  # the guard does see calls


def test_an_unreadable_reply_loses_that_metric_only_and_is_retried_next_time(tmp_path, server):
    lib = _lib(tmp_path / "ws", server)
    # The marker reaches the faithfulness and recall prompts through the passages.
    broken = RagasSample(QUESTION, ANSWER, [MLM, "BROKEN " + NSP], [REFERENCE], [])
    (scores,) = score_llm(lib, [broken])
    faith, recall = scores["faithfulness"], scores["context_recall"]
    assert faith.value is None and recall.value is None
    assert "the judge's reply could not be read (not valid JSON)" in faith.error
    assert "I am sorry, I cannot answer in JSON today." in faith.error
    assert "classifications" in recall.error and "Field required" in recall.error and "all fine" in recall.error
    assert scores["context_precision"].value == pytest.approx(1.0)
    assert scores["answer_relevancy"].ok
    # Each unreadable reply was re-asked once: faithfulness 1 + 2, recall 2; precision 2; relevancy 3.
    assert len(server.chat_requests) == 3 + 2 + 2 + 3
    score_llm(lib, [broken])
    assert len(server.chat_requests) == 10 + 3 + 2  # only the two failures are asked again


def test_http_errors_timeouts_and_keys_in_messages(tmp_path, server, monkeypatch):
    secret = "sk-test-4c0ffee4c0ffee4c0ffee"
    monkeypatch.setenv("PAPERGRAPH_LLM_API_KEY", secret)
    monkeypatch.setenv("PAPERGRAPH_LLM_BASE_URL", server.url)  # the endpoint the key belongs to
    lib = _lib(tmp_path / "ws", server, concurrency=1, timeout_s=0.5)
    # One row, one call at a time: faithfulness asks first, then answer relevancy.
    server.then(Reply(status=400, raw_body=json.dumps({"error": {"message": f"key {secret} is not allowed"}})),
                Reply(status=503))
    (scores,) = score_llm(lib, [GOOD])
    assert scores["faithfulness"] == Score(None, "the judge answered HTTP 400: key [redacted] is not allowed")
    assert scores["answer_relevancy"].value is None
    assert scores["answer_relevancy"].error == "the judge answered HTTP 503: replayed HTTP 503"
    assert scores["context_precision"].ok and scores["context_recall"].ok
    assert all(secret not in s.error for s in scores.values())
    assert all(r.get("model") == MODEL for r in server.chat_requests)
    assert set(server.auth_headers) == {f"Bearer {secret}"}, "the judge sends the key only where it belongs"

    server.when("Generate a question for the given answer",
                Reply(json.dumps({"question": QUESTION, "noncommittal": 0}), delay_s=1.5))
    (slow,) = score_llm(lib, [GOOD])  # the two failures are asked again; relevancy now times out
    assert slow["faithfulness"].value == 0.5
    assert slow["answer_relevancy"] == Score(None, "the judge did not answer within 0.5 s")
    assert (slow["context_precision"], slow["context_recall"]) == (scores["context_precision"],
                                                                   scores["context_recall"])


@pytest.mark.slow
def test_rows_run_concurrently_within_the_endpoint_limit_and_cancel_stops_the_rest(tmp_path):
    in_flight, peak, lock = [0], [0], threading.Lock()

    def slow_judge(body: dict) -> Reply:
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        try:
            time.sleep(0.05)
            return judge(body)
        finally:
            with lock:
                in_flight[0] -= 1

    samples = [RagasSample(f"{QUESTION} ({i})", ANSWER, [MLM], [REFERENCE], []) for i in range(4)]
    with OpenAIReplayServer(default=slow_judge, model=MODEL) as server:
        lib = _lib(tmp_path / "ws", server, concurrency=2)
        results = score_llm(lib, samples)
        assert peak[0] == 2
        assert all(r["faithfulness"].value == 0.5 and r["context_recall"].ok for r in results)

        # A slot of the endpoint's process-wide limit held elsewhere (the graph worker's call): one call at a time.
        slots = shared_limit(server.url, MODEL, 2)
        slots.acquire()
        peak[0] = 0
        try:
            held = score_llm(lib, [RagasSample(f"Held {i}?", ANSWER, [MLM], [REFERENCE], []) for i in range(2)])
        finally:
            slots.release()
        assert peak[0] == 1 and all(r["faithfulness"].value == 0.5 for r in held)

        cancel = threading.Event()
        fresh = [RagasSample(f"Another question {i}?", ANSWER, [MLM], [REFERENCE], []) for i in range(3)]
        before = len(server.chat_requests)
        lib = _lib(tmp_path / "ws2", server, concurrency=1)
        stopped = score_llm(lib, fresh, on_progress=lambda done, total: cancel.set(), cancel=cancel)
    assert all(s.ok for s in stopped[0].values())
    assert all(s.value is None and s.error == "cancelled" for row in stopped[1:] for s in row.values())
    assert len(server.chat_requests) - before == 2 + 3 + 1 + 1


def test_a_run_from_a_worker_thread(tmp_path, server):
    lib = _lib(tmp_path / "ws", server)
    out = []
    worker = threading.Thread(target=lambda: out.append(score_llm(lib, [GOOD])))
    worker.start()
    worker.join(60)
    assert out and out[0][0]["faithfulness"].value == 0.5


@pytest.mark.parametrize("provider, words", [("none", "no LLM is configured"),
                                             ("embedded", "no OpenAI-compatible endpoint")])
def test_without_an_openai_compatible_judge_every_metric_says_why(tmp_path, provider, words):
    lib = open_library(graph_papers.fast_workspace(tmp_path / "ws", provider=provider))
    reason = ragas_judge_available(lib)
    assert words in reason
    results = score_llm(lib, [GOOD, GOOD])
    assert results == [{name: results[0][name] for name in METRIC_NAMES_LLM}] * 2
    assert all(s.value is None and s.error == reason for s in results[0].values())


def test_a_missing_answer_or_reference_is_not_sent_to_the_judge(tmp_path, server):
    lib = _lib(tmp_path / "ws", server)
    (scores,) = score_llm(lib, [RagasSample(QUESTION, "", [MLM], [], [])])
    assert {n: s.error for n, s in scores.items()} == {
        "faithfulness": "no answer to score", "answer_relevancy": "no answer to score",
        "context_precision": "no reference answer", "context_recall": "no reference answer"}
    assert server.chat_requests == []


def test_an_unreadable_credentials_file_is_reported_not_skipped(tmp_path, server):
    from core.models.llm import secrets

    lib = _lib(tmp_path / "ws", server)
    secrets.credentials_path().parent.mkdir(parents=True, exist_ok=True)
    secrets.credentials_path().write_text("{ not json", encoding="utf-8")
    (scores,) = score_llm(lib, [GOOD])
    assert all(s.value is None and "credentials file" in s.error for s in scores.values())
    assert server.chat_requests == []
