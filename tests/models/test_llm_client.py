"""The LLM client layer against a real local HTTP server speaking the OpenAI protocol (tests/openai_server.py):
retries, timeouts, the concurrency limit, streaming, the prompt cache and its call log, API key handling and the
connection check. Nothing is mocked: every call goes through the `openai` package and a socket."""
from __future__ import annotations

import functools
import json
import logging
import socket
import stat
import sys
import threading
import time
import traceback
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from core.models.llm import secrets
from core.models.llm.base import LLMError
from core.models.llm.cache import CachedChatModel, usage_summary
from core.models.llm.client import LLMCallError, OpenAIChatModel, RetryPolicy
from core.models.llm.connection import check_connection
from core.models.llm.factory import describe_llm, get_chat_model
from core.settings.config import LLMConfig, Settings
from core.store.sqlite_db import Database
from tests.openai_server import OpenAIReplayServer, Reply
from tests.paths import REPO

MODEL = "replay-model"
SECRET = "sk-test-9f3c1e77d2b94a0e8c5f6a1b2c3d4e5f"
HELLO = [{"role": "user", "content": "Name one graph algorithm in a word."}]  # 35 chars: 8 prompt tokens
FAST = RetryPolicy(max_retries=4, backoff_s=0.01, max_backoff_s=0.05)


@pytest.fixture
def server():
    with OpenAIReplayServer(model=MODEL) as s:
        yield s


@pytest.fixture
def db(tmp_path):
    return Database(tmp_path / "ws" / "papergraph.sqlite")


def model_at(server, retry: RetryPolicy = FAST, **kwargs) -> OpenAIChatModel:
    return OpenAIChatModel(server.url, MODEL, kwargs.pop("api_key", None), retry=retry, **kwargs)


# ---------------------------------------------------------------------------------------------- calls


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
    # Backoff of 30 s: only honouring Retry-After makes this fast.
    model = model_at(server, RetryPolicy(max_retries=2, backoff_s=30))
    started = time.monotonic()
    assert model.chat(HELLO).text == "ok"
    assert len(server.chat_requests) == 2 and time.monotonic() - started < 5


def test_a_long_retry_after_is_capped(server):
    server.then(Reply(status=503, headers={"Retry-After": "3600"}))
    model = model_at(server, RetryPolicy(max_retries=1, max_retry_after_s=0.2))
    started = time.monotonic()
    assert model.chat(HELLO).text == "ok"
    assert 0.2 <= time.monotonic() - started < 5


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
    server.then(Reply(content="late", delay_s=3), Reply(content="late", delay_s=3))
    started = time.monotonic()
    with pytest.raises(LLMCallError, match=r"timed out after 0\.4 s \(2 attempts\)") as caught:
        model_at(server, RetryPolicy(max_retries=1, backoff_s=0.01), timeout_s=0.4).chat(HELLO)
    assert caught.value.kind == "timeout"
    assert time.monotonic() - started < 2.5 and len(server.chat_requests) == 2


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


# ---------------------------------------------------------------------------------------------- cache and log


def test_an_identical_call_is_served_from_the_cache_and_a_different_temperature_is_not(server, db):
    server.default = lambda body: Reply(content=f"reply {len(server.chat_requests)}")
    model = CachedChatModel(model_at(server), db)
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

    reopened = CachedChatModel(model_at(server), Database(db.path))  # another process, the next day
    assert reopened.chat(HELLO, purpose="extract", temperature=0.0).cached
    assert len(server.chat_requests) == 4


def test_the_cache_is_per_model(server, db):
    CachedChatModel(model_at(server), db).chat(HELLO)
    server.model = "other-model"
    other = CachedChatModel(OpenAIChatModel(server.url, "other-model", retry=FAST), db)
    assert not other.chat(HELLO).cached and len(server.chat_requests) == 2


def test_errors_are_logged_but_not_cached(server, db):
    server.then(Reply(status=500), Reply(content="recovered"))
    model = CachedChatModel(model_at(server, RetryPolicy(max_retries=0)), db)
    with pytest.raises(LLMError, match="HTTP 500 once"):
        model.chat(HELLO, purpose="extract")
    reply = model.chat(HELLO, purpose="extract")
    assert reply.text == "recovered" and not reply.cached and len(server.chat_requests) == 2
    with db.connect() as conn:
        errors = [r["error"] for r in conn.execute("SELECT error FROM llm_calls ORDER BY id")]
    assert "HTTP 500" in errors[0] and errors[1] == ""


def test_usage_summary_counts_calls_hits_tokens_and_latency_by_purpose(server, db):
    server.default = Reply(content="twelve chars", delay_s=0.05)  # 3 completion tokens
    model = CachedChatModel(model_at(server, RetryPolicy(max_retries=0)), db)
    model.chat(HELLO, purpose="extract")  # 8 prompt tokens
    model.chat(HELLO, purpose="extract")  # hit
    model.chat(HELLO, purpose="extract")  # hit
    model.chat([{"role": "user", "content": "x" * 80}], purpose="answer")  # 20 prompt tokens
    server.then(Reply(status=500))
    with pytest.raises(LLMError):
        model.chat([{"role": "user", "content": "fails"}], purpose="answer")
    assert "".join(model.stream(HELLO, purpose="answer")) == "twelve chars"

    summary = usage_summary(db)
    assert (summary["calls"], summary["cache_hits"], summary["errors"]) == (4, 2, 1)
    assert (summary["prompt_tokens"], summary["completion_tokens"]) == (28, 6)
    assert summary["latency_s"] >= 0.15  # two answered calls and a stream of >= 0.05 s each
    assert summary["by_purpose"]["extract"] == {**summary["by_purpose"]["extract"], "calls": 1, "cache_hits": 2,
                                                "errors": 0, "prompt_tokens": 8, "completion_tokens": 3}
    assert summary["by_purpose"]["answer"]["calls"] == 3 and summary["by_purpose"]["answer"]["errors"] == 1
    assert usage_summary(Database(db.path.parent / "fresh.sqlite"))["calls"] == 0


# ---------------------------------------------------------------------------------------------- keys


def test_the_api_key_never_reaches_logs_the_database_or_error_messages(server, db, caplog):
    caplog.set_level(logging.DEBUG)
    server.api_key = SECRET
    model = CachedChatModel(model_at(server, RetryPolicy(max_retries=1, backoff_s=0.01), api_key=SECRET), db)
    assert model.chat(HELLO, purpose="extract").text == "ok"
    assert "".join(model.stream(HELLO)) == "ok"
    # A server that echoes the key back in its error (some proxies do).
    echo = json.dumps({"error": {"message": f"key {SECRET} is over quota", "type": "invalid_request_error"}})
    server.then(Reply(status=400, raw_body=echo), Reply(status=500, raw_body=echo), Reply(status=500,
                                                                                         raw_body=echo))
    failures = []
    for content in ("first", "second"):
        with pytest.raises(LLMError) as caught:
            model.chat([{"role": "user", "content": content}], purpose="extract")
        failures.append(caught.value)
    assert "[redacted] is over quota" in str(failures[0])
    server.api_key = "another-key"
    with pytest.raises(LLMError) as caught:
        model.chat([{"role": "user", "content": "third"}])
    failures.append(caught.value)

    assert "Request options" in caplog.text, "the openai package's debug log was captured"
    assert SECRET not in caplog.text
    for failure in failures:
        assert SECRET not in "".join(traceback.format_exception(failure))
    assert SECRET not in repr(model.inner)
    stored = b"".join(p.read_bytes() for p in db.path.parent.iterdir() if p.name.startswith(db.path.name))
    assert b"is over quota" in stored and SECRET.encode() not in stored


def test_a_saved_key_is_private_outside_the_workspace_and_per_endpoint(tmp_path):
    path = secrets.save_api_key("https://api.example.com/v1/", SECRET)
    assert path == tmp_path / "config" / "credentials.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert REPO not in path.resolve().parents and (tmp_path / "ws") not in path.parents
    assert secrets.api_key_for("https://api.example.com/v1") == SECRET
    assert secrets.has_saved_key("https://api.example.com/v1")
    assert secrets.api_key_for("http://localhost:11434/v1") is None, "a key is not sent to another endpoint"
    assert secrets.key_source("https://api.example.com/v1") == "credentials file"
    assert [p.name for p in path.parent.iterdir()] == ["credentials.json"], "no temporary file is left"

    secrets.save_api_key("http://localhost:11434/v1", "second-key")
    assert secrets.api_key_for("https://api.example.com/v1") == SECRET
    assert secrets.forget_api_key("https://api.example.com/v1")
    assert not secrets.has_saved_key("https://api.example.com/v1")
    assert not secrets.forget_api_key("https://api.example.com/v1")
    assert secrets.api_key_for("http://localhost:11434/v1") == "second-key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_key_precedence_never_sends_an_openai_key_to_another_server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "from-openai-env")
    assert secrets.api_key_for("https://api.example.com/v1") is None  # a third-party endpoint
    assert secrets.api_key_for("https://api.openai.com/v1") == "from-openai-env"
    secrets.save_api_key("https://api.example.com/v1", "from-file")
    secrets.save_api_key("https://api.openai.com/v1", "saved-for-openai")
    assert secrets.api_key_for("https://api.example.com/v1") == "from-file"
    assert secrets.api_key_for("https://api.openai.com/v1") == "saved-for-openai"  # saved for it beats the shell
    monkeypatch.setenv("PAPERGRAPH_LLM_API_KEY", "from-papergraph-env")
    # Without PAPERGRAPH_LLM_BASE_URL the environment key belongs to no endpoint and is sent nowhere.
    assert secrets.api_key_for("https://api.example.com/v1") == "from-file"
    assert secrets.api_key_for("https://elsewhere.example.net/v1") is None
    monkeypatch.setenv("PAPERGRAPH_LLM_BASE_URL", "https://api.example.com/v1/")
    assert secrets.api_key_for("https://api.example.com/v1") == "from-papergraph-env"
    assert secrets.key_source("https://api.example.com/v1") == "PAPERGRAPH_LLM_API_KEY"
    assert secrets.api_key_for("https://elsewhere.example.net/v1") is None
    assert secrets.api_key_for("http://api.openai.com/v1") is None, "an OpenAI key never travels in clear text"


def test_keys_are_never_stored_inside_the_repository(monkeypatch):
    target = REPO / "data" / "not-for-keys"
    monkeypatch.setenv("PAPERGRAPH_CONFIG_DIR", str(target))
    with pytest.raises(secrets.SecretsError, match="inside the repository"):
        secrets.save_api_key("https://api.example.com/v1", SECRET)
    assert not target.exists()


def test_redact_hides_the_key_and_leaves_the_placeholder():
    assert secrets.redact(f"Bearer {SECRET} failed", SECRET) == "Bearer [redacted] failed"
    assert secrets.redact("no key here", None) == "no key here"
    assert secrets.redact(f"key {secrets.NO_KEY}", secrets.NO_KEY) == f"key {secrets.NO_KEY}"


# ---------------------------------------------------------------------------------------------- connection check


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def config_for(url: str, model: str = MODEL) -> LLMConfig:
    return LLMConfig(provider="openai", base_url=url, model=model, timeout_s=10)


def test_check_connection_succeeds_with_latency_and_the_served_models(server):
    report = check_connection(config_for(server.url + "/"), None)
    assert report.ok and report.step == "done", report
    assert report.models == [MODEL] and report.latency_s > 0
    assert f"model '{MODEL}' answered in" in report.message
    (probe,) = server.chat_requests
    assert probe["max_tokens"] <= 8


def test_check_connection_names_a_refused_port():
    port = free_port()
    report = check_connection(config_for(f"http://127.0.0.1:{port}/v1"), None)
    assert (report.ok, report.step) == (False, "connect")
    assert f"connection refused: nothing is listening at 127.0.0.1:{port}" in report.message
    assert "Ollama" in report.message


def test_check_connection_names_a_malformed_url_and_an_unknown_host():
    for url in ("localhost:11434/v1", "ftp://example.com/v1", "http:///v1"):
        report = check_connection(config_for(url), None)
        assert (report.ok, report.step) == (False, "url") and "malformed" in report.message, (url, report)
    report = check_connection(config_for("http://no-such-host.invalid/v1"), None)
    assert report.step == "connect" and "DNS name 'no-such-host.invalid' was not found" in report.message


def test_check_connection_says_the_key_was_rejected(server):
    server.api_key = SECRET
    report = check_connection(config_for(server.url), "sk-wrong-key")
    assert (report.ok, report.step) == (False, "auth")
    assert "rejected the API key (HTTP 401)" in report.message and "sk-wrong-key" not in report.message
    assert check_connection(config_for(server.url), SECRET).ok


def test_check_connection_lists_the_served_models_when_the_model_is_missing(server):
    report = check_connection(config_for(server.url, "llama3:70b"), None)
    assert (report.ok, report.step) == (False, "model")
    assert report.message == f"model 'llama3:70b' not found at {server.url}; the server has: {MODEL}"
    assert report.models == [MODEL]


def test_check_connection_recognises_a_web_server_that_is_not_an_openai_endpoint(tmp_path):
    (tmp_path / "index.html").write_text("<html><body>my homepage</body></html>")
    handler = functools.partial(QuietFiles, directory=str(tmp_path))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        report = check_connection(config_for(base), None)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert (report.ok, report.step) == (False, "models")
    assert "is not an OpenAI-compatible endpoint: GET /models answered HTTP 404 with an HTML page" in report.message
    assert f"the URL usually ends in /v1 (try {base}/v1)" in report.message


class QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


# ---------------------------------------------------------------------------------------------- factory


def test_the_factory_builds_what_the_settings_ask_for(server, db):
    settings = Settings()
    assert get_chat_model(settings, db) is None
    assert describe_llm(settings) == "no LLM (LLM-free defaults)"

    settings.llm.provider, settings.llm.base_url, settings.llm.model = "openai", server.url, MODEL
    secrets.save_api_key(server.url, SECRET)
    server.api_key = SECRET  # answered only if the factory found the saved key
    model = get_chat_model(settings, db)
    assert isinstance(model, CachedChatModel) and model.name == "openai:replay-model"
    assert model.chat(HELLO).text == "ok" and model.chat(HELLO).cached
    assert describe_llm(settings) == f"openai:replay-model at {server.url}"

    settings.llm.provider = "embedded"
    assert describe_llm(settings) == "embedded Qwen2.5-Coder-1.5B (slow: ~40 s per chunk)"


def test_an_embedded_llm_that_is_not_installed_says_how_to_install_it(monkeypatch, db):
    settings = Settings()
    settings.llm.provider = "embedded"
    # A None entry is how Python itself marks a module as unimportable.
    monkeypatch.setitem(sys.modules, "core.models.llm.embedded", None)
    with pytest.raises(LLMError, match=r"the embedded LLM is not installed: run `make llm`"):
        get_chat_model(settings, db)


def test_no_config_dir_is_created_by_reading(tmp_path):
    assert secrets.api_key_for("https://api.example.com/v1") is None
    assert not (tmp_path / "config").exists()
