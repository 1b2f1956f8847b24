"""Safe to share: an API key is sent only to the endpoint it belongs to, every LLM/VLM call has a total deadline,
and a stuck LLM never holds up a new upload. Against real local HTTP servers (tests/openai_server.py) that
trickle, stall, break off or answer garbage; nothing is mocked."""
from __future__ import annotations

import time

import pytest

from core.library import open_library
from core.models.llm import secrets
from core.models.llm.client import LLMCallError, OpenAIChatModel, RetryPolicy
from core.models.llm.connection import check_connection
from core.models.llm.factory import get_chat_model
from core.models.vlm import image_part, text_part, vision_model
from core.pipeline.documents import add_pdf
from core.pipeline.worker import BackgroundIngestor
from core.schema.records import DocStatus, GraphStatus
from core.settings.config import LLMConfig, Settings, VLMConfig
from core.store.sqlite_llm_cache import SQLiteLLMCache
from tests import pdfs
from tests.graph_papers import fast_workspace
from tests.openai_server import OpenAIReplayServer, Reply

MODEL = "replay-model"
SECRET = "sk-deadline-test-0d15ea5e0d15ea5e0d15ea5e"
HELLO = [{"role": "user", "content": "Name one graph algorithm in a word."}]
NO_RETRY = RetryPolicy(max_retries=0)
TIMEOUT = 1.5
# The replay server keeps a bad reply going for max_hang_s (30 s) before it hangs up. A call that ended well before
# then was ended by its own deadline, not by the server: the upper bounds below tell those two apart (a factor of
# ten from TIMEOUT), so they hold on a loaded machine; they are not speed targets (bench/ measures speed).
BEFORE_HANG_UP = 15.0


@pytest.fixture
def other():
    with OpenAIReplayServer(model=MODEL) as s:
        yield s


def model_at(server, **kwargs) -> OpenAIChatModel:
    kwargs.setdefault("retry", NO_RETRY)
    return OpenAIChatModel(server.url, MODEL, kwargs.pop("api_key", None), timeout_s=TIMEOUT, **kwargs)


def timed(call):
    started = time.monotonic()
    with pytest.raises(LLMCallError) as caught:
        call()
    return caught.value, time.monotonic() - started


# ---------------------------------------------------------------------------------------------- deadlines


@pytest.mark.parametrize("mode", ["trickle", "stall"])
def test_a_chat_ends_at_its_deadline_however_the_server_dawdles(server, mode):
    # One byte a second: every read succeeds, so only a total deadline ends it before the ~340 s body does.
    server.then(Reply(content="a reply that takes minutes to arrive", mode=mode, interval_s=1.0))
    error, elapsed = timed(lambda: model_at(server).chat(HELLO))
    assert error.kind == "timeout"
    assert f"timed out after {TIMEOUT:g} s" in str(error)
    assert TIMEOUT - 0.1 <= elapsed < BEFORE_HANG_UP


def test_a_streamed_answer_that_keeps_trickling_is_cut_at_the_deadline(server):
    # A piece every ~0.2 s, forever: each read is quick, the answer never ends.
    server.then(Reply(content="token ", mode="trickle", interval_s=0.05, trickle_bytes=40))
    pieces: list[str] = []

    def consume():
        for piece in model_at(server).stream(HELLO):
            pieces.append(piece)

    error, elapsed = timed(consume)
    assert error.kind == "timeout"
    assert f"timed out after {TIMEOUT:g} s: the streamed reply was still unfinished at its deadline" in str(error)
    assert TIMEOUT - 0.1 <= elapsed < BEFORE_HANG_UP
    assert pieces and set(pieces) == {"token "}, "what came before the deadline was handed out"


def test_a_stream_that_never_starts_ends_at_its_deadline(server):
    server.then(Reply(mode="stall"))
    error, elapsed = timed(lambda: list(model_at(server).stream(HELLO)))
    assert error.kind == "timeout" and elapsed < BEFORE_HANG_UP


def test_each_retry_has_its_own_deadline_and_the_message_counts_them(server):
    server.then(Reply(mode="stall"), Reply(mode="trickle"))
    retry = RetryPolicy(max_retries=1, backoff_s=0.01)
    error, elapsed = timed(lambda: model_at(server, retry=retry).chat(HELLO))
    assert error.kind == "timeout" and f"timed out after {TIMEOUT:g} s (2 attempts)" in str(error)
    assert 2 * TIMEOUT - 0.1 <= elapsed < BEFORE_HANG_UP
    assert len(server.chat_requests) == 2


@pytest.mark.parametrize("mode, said", [
    ("close", "peer closed connection without sending complete message body"),
    ("garbage", "illegal status line"),
])
def test_a_reply_broken_off_or_not_http_fails_at_once_and_says_so(server, mode, said):
    server.then(Reply(content="half of this arrives", mode=mode))
    error, elapsed = timed(lambda: model_at(server).chat(HELLO))
    assert error.kind == "protocol"  # not "timeout": it did not wait for the deadline
    assert "broke off its reply or did not answer in HTTP" in str(error) and said in str(error)
    assert "could not reach" not in str(error), "the server was reached: it is what it answered that was wrong"


def test_the_vlm_has_the_same_deadline(server, db):
    server.then(Reply(mode="trickle"))
    config = VLMConfig(provider="openai", base_url=server.url, model=MODEL, timeout_s=TIMEOUT)
    vlm = vision_model(config, SQLiteLLMCache(db))
    vlm.inner.retry = NO_RETRY
    message = [{"role": "user", "content": [text_part("What does this figure show?"), image_part(b"\x89PNG")]}]
    error, elapsed = timed(lambda: vlm.chat(message, purpose="media"))
    assert error.kind == "timeout" and elapsed < BEFORE_HANG_UP


def test_the_connection_test_reports_a_stalled_chat_within_the_timeout(server):
    server.then(Reply(mode="stall"))
    started = time.monotonic()
    report = check_connection(LLMConfig(provider="openai", base_url=server.url, model=MODEL, timeout_s=TIMEOUT),
                              None)
    assert (report.ok, report.step) == (False, "chat") and "timed out after" in report.message
    assert time.monotonic() - started < BEFORE_HANG_UP


# ---------------------------------------------------------------------------------------------- keys


def openai_settings(url: str) -> Settings:
    settings = Settings()
    settings.llm.provider, settings.llm.base_url, settings.llm.model, settings.llm.max_retries = (
        "openai", url, MODEL, 0)
    return settings


def ask(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]  # a new prompt each time: the prompt cache would answer a repeat


def test_the_environment_key_is_sent_only_to_the_endpoint_it_names(monkeypatch, server, other, db):
    monkeypatch.setenv("PAPERGRAPH_LLM_API_KEY", SECRET)
    # Alone it belongs to no endpoint: pointing the base URL anywhere sends it nowhere.
    get_chat_model(openai_settings(other.url), SQLiteLLMCache(db)).chat(ask("first"))
    assert other.auth_headers and all(SECRET not in (h or "") for h in other.auth_headers)

    monkeypatch.setenv("PAPERGRAPH_LLM_BASE_URL", server.url + "/")
    get_chat_model(openai_settings(server.url), SQLiteLLMCache(db)).chat(ask("second"))
    assert server.auth_headers == [f"Bearer {SECRET}"], "sent to the endpoint it belongs to"
    # Someone changes the base URL (the Settings page, settings.json): the key stays home.
    get_chat_model(openai_settings(other.url), SQLiteLLMCache(db)).chat(ask("third"))
    vlm = vision_model(VLMConfig(provider="openai", base_url=other.url, model=MODEL), SQLiteLLMCache(db))
    vlm.chat([{"role": "user", "content": [text_part("a figure"), image_part(b"\x89PNG")]}])
    check_connection(LLMConfig(provider="openai", base_url=other.url, model=MODEL, timeout_s=5),
                     secrets.api_key_for(other.url))
    assert len(other.auth_headers) == 5 and all(SECRET not in (h or "") for h in other.auth_headers)
    assert secrets.key_source(other.url) is None
    assert "PAPERGRAPH_LLM_API_KEY is set but is sent only to" in secrets.key_notice(other.url)


def test_a_saved_key_is_not_carried_over_to_a_new_base_url(server, other, db):
    server.api_key = SECRET
    secrets.save_api_key(server.url, SECRET)
    assert get_chat_model(openai_settings(server.url), SQLiteLLMCache(db)).chat(ask("first")).text == "ok"
    assert server.auth_headers == [f"Bearer {SECRET}"]
    other.api_key = "the other server's own key"
    with pytest.raises(LLMCallError, match="none is set for this endpoint") as caught:
        get_chat_model(openai_settings(other.url), SQLiteLLMCache(db)).chat(ask("second"))
    assert caught.value.kind == "auth" and SECRET not in str(caught.value)
    assert other.auth_headers and all(SECRET not in (h or "") for h in other.auth_headers)
    assert secrets.key_notice(other.url).startswith(f"No API key is sent to {other.url}")


def test_a_redirect_to_another_server_does_not_carry_the_key(monkeypatch, server, other):
    monkeypatch.setenv("PAPERGRAPH_LLM_API_KEY", SECRET)
    monkeypatch.setenv("PAPERGRAPH_LLM_BASE_URL", server.url)
    server.then(Reply(status=307, headers={"Location": f"{other.url}/chat/completions"}))
    assert model_at(server, api_key=secrets.api_key_for(server.url)).chat(HELLO).text == "ok"
    assert server.auth_headers == [f"Bearer {SECRET}"] and len(other.chat_requests) == 1
    assert other.auth_headers == [None], "httpx drops the key when a redirect leaves the origin"


def test_an_openai_key_goes_only_to_openai_over_https(monkeypatch, server):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    for url in (server.url, "http://api.openai.com/v1", "https://api.openai.com.example.net/v1",
                "https://api.openai.com@example.net/v1"):
        assert secrets.api_key_for(url) is None, url
    assert secrets.api_key_for("https://api.openai.com/v1/") == SECRET


# ---------------------------------------------------------------------------------------------- the app's workers


def wait_for(condition, timeout_s: float, what: str):
    ends = time.monotonic() + timeout_s
    while time.monotonic() < ends:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout_s:g} s: {what}")


@pytest.mark.slow
def test_a_new_upload_is_indexed_while_the_graph_stage_is_stuck_on_the_llm(tmp_path, server):
    server.default = Reply(mode="stall")  # every LLM call hangs (until the deadline, a minute away)
    lib = open_library(fast_workspace(tmp_path / "ws", provider="openai", base_url=server.url, model=MODEL,
                                      timeout_s=60, max_retries=0))
    first = pdfs.make_paper_pdf(tmp_path / "first.pdf", title="Heliotrope Graphs for Retrieval")
    second = pdfs.make_paper_pdf(tmp_path / "second.pdf", title="Marigold Indexes Revisited")
    worker = BackgroundIngestor(lib)
    try:
        a = add_pdf(lib, first.name, first.read_bytes()).doc_id
        worker.kick()
        wait_for(lambda: lib.documents.get(a).graph_status == GraphStatus.EXTRACTING and server.chat_requests,
                 60, "the first paper's graph stage reaching the LLM")

        b = add_pdf(lib, second.name, second.read_bytes()).doc_id
        worker.kick()
        doc = wait_for(lambda: (d := lib.documents.get(b)).status in (DocStatus.READY, DocStatus.FAILED) and d,
                       45, "the second paper being parsed and indexed")
        assert doc.status == DocStatus.READY, doc.message
        assert lib.documents.get(a).graph_status == GraphStatus.EXTRACTING, "the LLM call was still stuck"
    finally:
        worker.stop()
        server.stop()  # ends the stalled reply: the graph thread fails that call and sees the stop
