"""Calls through the LLM client against a real local OpenAI-protocol server (tests/models/conftest.py): the
request as configured, retries and backoff, errors a retry cannot fix, timeouts, unreachable endpoints, the
concurrency limit and streaming. Nothing is mocked: every call goes through the `openai` package and a socket."""
from __future__ import annotations

import threading
import time

import pytest

from core.models.llm.base import LLMError
from core.models.llm.client import LLMCallError, OpenAIChatModel, RetryPolicy
from tests.models.llm_helpers import FAST, HELLO, MODEL, free_port, model_at
from tests.openai_server import Reply


def test_chat_returns_the_text_with_tokens_latency_and_the_request_as_configured(server):
    server.then(Reply(content="Dijkstra, of course!", delay_s=0.1))
    model = model_at(server, temperature=0.3, max_tokens=77)
    schema = {"type": "json_schema", "json_schema": {"name": "one", "schema": {"type": "object"}}}
    reply = model.chat(HELLO, purpose="answer", response_format=schema)
    assert (reply.text, reply.model, reply.cached) == ("Dijkstra, of course!", "openai:replay-model", False)
    assert (reply.prompt_tokens, reply.completion_tokens) == (8, 5)  # the replay server's usage block
    assert reply.latency_s >= 0.1
    (sent,) = server.chat_requests
    assert sent["messages"] == HELLO and sent["response_format"] == schema
    assert (sent["max_tokens"], sent["temperature"]) == (77, 0.3)

    model.chat(HELLO, max_tokens=5, temperature=0.9)
    assert (server.chat_requests[1]["max_tokens"], server.chat_requests[1]["temperature"]) == (5, 0.9)
    assert "response_format" not in server.chat_requests[1]


def test_a_429_with_retry_after_zero_is_retried_at_once(server):
    server.then(Reply(status=429, headers={"Retry-After": "0"}))
    # Backoff of 60 s: a retry within half of it honoured Retry-After (a bound that tells the two apart on any
    # machine, not a speed target).
    model = model_at(server, RetryPolicy(max_retries=2, backoff_s=60))
    started = time.monotonic()
    assert model.chat(HELLO).text == "ok"
    assert len(server.chat_requests) == 2 and time.monotonic() - started < 30


def test_a_long_retry_after_is_capped(server):
    server.then(Reply(status=503, headers={"Retry-After": "3600"}))
    model = model_at(server, RetryPolicy(max_retries=1, max_retry_after_s=0.2))
    started = time.monotonic()
    assert model.chat(HELLO).text == "ok"
    assert 0.2 <= time.monotonic() - started < 1800  # waited the cap, not the hour asked for


def test_backoff_doubles_with_jitter_up_to_its_cap():
    policy = RetryPolicy(backoff_s=1.0, max_backoff_s=5.0, max_retry_after_s=60)
    for attempt, (low, high) in enumerate([(0.5, 1), (1, 2), (2, 4), (2.5, 5), (2.5, 5)]):
        delays = {policy.delay(attempt, None) for _ in range(50)}
        assert all(low <= d <= high for d in delays) and len(delays) > 1, (attempt, delays)
    assert policy.delay(0, 7.5) == 7.5 and policy.delay(0, 900) == 60 and policy.delay(0, -3) == 0


def test_a_500_that_persists_ends_in_an_error_naming_the_status_and_the_attempts(server):
    server.then(*[Reply(status=500)] * 4, Reply(content="too late"))
    with pytest.raises(LLMCallError, match=r"the LLM endpoint http://127\.0\.0\.1:\d+/v1 answered HTTP 500 four "
                                           r"times") as caught:
        model_at(server, RetryPolicy(max_retries=3, backoff_s=0.01)).chat(HELLO)
    assert caught.value.kind == "http" and caught.value.status == 500
    assert len(server.chat_requests) == 4


@pytest.mark.parametrize("status, expected", [
    (401, r"rejected the API key \(HTTP 401\): none is set"),
    (403, r"refused access \(HTTP 403\)"),
    (400, r"rejected the request \(HTTP 400\): replayed HTTP 400"),
])
def test_errors_a_retry_cannot_fix_are_not_retried(server, status, expected):
    server.then(Reply(status=status), Reply(content="a retry would have got this"))
    with pytest.raises(LLMError, match=expected):
        model_at(server).chat(HELLO)
    assert len(server.chat_requests) == 1


def test_a_wrong_key_is_rejected_once_and_a_missing_model_is_named(server):
    server.api_key = "the-right-key"
    with pytest.raises(LLMCallError, match=r"rejected the API key \(HTTP 401\)$") as caught:
        model_at(server, api_key="a-wrong-key").chat(HELLO)
    assert caught.value.kind == "auth"
    assert model_at(server, api_key="the-right-key").chat(HELLO).text == "ok"

    server.api_key = None
    wrong = OpenAIChatModel(server.url, "gpt-9", retry=FAST)
    with pytest.raises(LLMCallError, match=rf"model 'gpt-9' not found at {server.url}$") as caught:
        wrong.chat(HELLO)
    assert caught.value.kind == "model_missing"
    assert [r["model"] for r in server.chat_requests].count("gpt-9") == 1


def test_a_slow_reply_times_out_and_says_after_how_long(server):
    # Had either attempt waited out the delay, its reply would have come and the call would not fail.
    server.then(Reply(content="late", delay_s=3), Reply(content="late", delay_s=3))
    with pytest.raises(LLMCallError, match=r"timed out after 0\.4 s \(2 attempts\)") as caught:
        model_at(server, RetryPolicy(max_retries=1, backoff_s=0.01), timeout_s=0.4).chat(HELLO)
    assert caught.value.kind == "timeout" and len(server.chat_requests) == 2


def test_unreachable_endpoints_and_non_completions_say_what_happened(server):
    with pytest.raises(LLMCallError, match=r"connection refused: nothing is listening at 127\.0\.0\.1:\d+"):
        OpenAIChatModel(f"http://127.0.0.1:{free_port()}/v1", MODEL, retry=RetryPolicy(max_retries=0)).chat(HELLO)
    server.then(Reply(raw_body="<html><body>Welcome to nginx</body></html>"))
    with pytest.raises(LLMCallError, match="answered with a reply that is not JSON"):
        model_at(server).chat(HELLO)
    server.then(Reply(raw_body='{"id": "x", "object": "list"}'))
    with pytest.raises(LLMCallError, match=r"not a chat completion \(no choices\)"):
        model_at(server).chat(HELLO)
    assert len(server.chat_requests) == 2, "a malformed reply is not retried"


def test_concurrency_is_limited_per_endpoint_and_model_across_instances(server):
    active = peak = 0
    lock = threading.Lock()

    def slow_ok(body):
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        time.sleep(0.25)
        with lock:
            active -= 1
        return Reply(content="ok")

    server.default = slow_ok
    # Six instances, as six pipeline workers would build them: the limit is shared, not per instance.
    models = [model_at(server, concurrency=2) for _ in range(6)]
    errors: list[BaseException] = []

    def call(model):
        try:
            model.chat(HELLO)
        except BaseException as exc:  # noqa: BLE001 - surfaced by the assert below
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(m,)) for m in models]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors and len(server.chat_requests) == 6
    assert peak == 2, f"{peak} requests were in flight at once; the limit is 2"


def test_stream_yields_the_text_in_pieces(server):
    text = "Community detection groups densely linked entities into reports."
    server.then(Reply(content=text))
    pieces = list(model_at(server).stream(HELLO, max_tokens=50))
    assert "".join(pieces) == text and len(pieces) > 3
    assert server.chat_requests[0]["stream"] is True and server.chat_requests[0]["max_tokens"] == 50


def test_a_stream_whose_opening_fails_is_retried_like_a_chat(server):
    server.then(Reply(status=502), Reply(content="second time lucky"))
    assert "".join(model_at(server).stream(HELLO)) == "second time lucky"
    assert len(server.chat_requests) == 2
