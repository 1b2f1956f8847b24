"""The prompt cache and its call log, over a real local OpenAI-protocol server: what a cache hit is, per model,
errors logged but never cached, and the usage summary by purpose."""
from __future__ import annotations

import pytest

from core.models.llm.base import LLMError
from core.models.llm.cache import CachedChatModel, usage_summary
from core.models.llm.client import OpenAIChatModel, RetryPolicy
from core.store.sqlite_db import Database
from core.store.sqlite_llm_cache import SQLiteLLMCache
from tests.models.llm_helpers import FAST, HELLO, model_at
from tests.openai_server import Reply


def test_an_identical_call_is_served_from_the_cache_and_a_different_temperature_is_not(server, db):
    server.default = lambda body: Reply(content=f"reply {len(server.chat_requests)}")
    model = CachedChatModel(model_at(server), SQLiteLLMCache(db))
    first = model.chat(HELLO, purpose="extract", temperature=0.0)
    assert not first.cached and len(server.chat_requests) == 1
    again = model.chat([dict(m) for m in HELLO], purpose="extract", temperature=0.0)
    assert again.cached and len(server.chat_requests) == 1
    assert (again.text, again.prompt_tokens, again.completion_tokens) == (first.text, first.prompt_tokens,
                                                                          first.completion_tokens)
    warmer = model.chat(HELLO, purpose="extract", temperature=0.7)
    assert not warmer.cached and warmer.text == "reply 2" and len(server.chat_requests) == 2
    model.chat(HELLO, purpose="extract", temperature=0.0, response_format={"type": "json_object"})
    model.chat(HELLO, purpose="extract", temperature=0.0, max_tokens=10)
    assert len(server.chat_requests) == 4, "response_format and max_tokens are part of the key"

    reopened = CachedChatModel(model_at(server), SQLiteLLMCache(Database(db.path)))  # another process, the next day
    assert reopened.chat(HELLO, purpose="extract", temperature=0.0).cached
    assert len(server.chat_requests) == 4


def test_the_cache_is_per_model(server, db):
    CachedChatModel(model_at(server), SQLiteLLMCache(db)).chat(HELLO)
    server.model = "other-model"
    other = CachedChatModel(OpenAIChatModel(server.url, "other-model", retry=FAST), SQLiteLLMCache(db))
    assert not other.chat(HELLO).cached and len(server.chat_requests) == 2


def test_errors_are_logged_but_not_cached(server, db):
    server.then(Reply(status=500), Reply(content="recovered"))
    model = CachedChatModel(model_at(server, RetryPolicy(max_retries=0)), SQLiteLLMCache(db))
    with pytest.raises(LLMError, match="HTTP 500 once"):
        model.chat(HELLO, purpose="extract")
    reply = model.chat(HELLO, purpose="extract")
    assert reply.text == "recovered" and not reply.cached and len(server.chat_requests) == 2
    with db.connect() as conn:
        errors = [r["error"] for r in conn.execute("SELECT error FROM llm_calls ORDER BY id")]
    assert "HTTP 500" in errors[0] and errors[1] == ""


def test_usage_summary_counts_calls_hits_tokens_and_latency_by_purpose(server, db):
    server.default = Reply(content="twelve chars", delay_s=0.05)  # 3 completion tokens
    model = CachedChatModel(model_at(server, RetryPolicy(max_retries=0)), SQLiteLLMCache(db))
    model.chat(HELLO, purpose="extract")  # 8 prompt tokens
    model.chat(HELLO, purpose="extract")  # hit
    model.chat(HELLO, purpose="extract")  # hit
    model.chat([{"role": "user", "content": "x" * 80}], purpose="answer")  # 20 prompt tokens
    server.then(Reply(status=500))
    with pytest.raises(LLMError):
        model.chat([{"role": "user", "content": "fails"}], purpose="answer")
    assert "".join(model.stream(HELLO, purpose="answer")) == "twelve chars"

    summary = usage_summary(SQLiteLLMCache(db))
    assert (summary["calls"], summary["cache_hits"], summary["errors"]) == (4, 2, 1)
    assert (summary["prompt_tokens"], summary["completion_tokens"]) == (28, 6)
    assert summary["latency_s"] >= 0.15  # two answered calls and a stream of >= 0.05 s each
    assert summary["by_purpose"]["extract"] == {**summary["by_purpose"]["extract"], "calls": 1, "cache_hits": 2,
                                                "errors": 0, "prompt_tokens": 8, "completion_tokens": 3}
    assert summary["by_purpose"]["answer"]["calls"] == 3 and summary["by_purpose"]["answer"]["errors"] == 1
    assert usage_summary(SQLiteLLMCache(Database(db.path.parent / "fresh.sqlite")))["calls"] == 0
