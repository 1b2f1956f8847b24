"""API key handling: the key never reaches logs, the database or error messages; saved keys are private, per
endpoint and outside the repository; which key goes to which server; redaction; reading creates nothing."""
from __future__ import annotations

import json
import logging
import stat
import traceback

import pytest

from core.models.llm import secrets
from core.models.llm.base import LLMError
from core.models.llm.cache import CachedChatModel
from core.models.llm.client import RetryPolicy
from core.store.sqlite_llm_cache import SQLiteLLMCache
from tests.models.llm_helpers import HELLO, SECRET, model_at
from tests.openai_server import Reply
from tests.paths import REPO


def test_the_api_key_never_reaches_logs_the_database_or_error_messages(server, db, caplog):
    caplog.set_level(logging.DEBUG)
    server.api_key = SECRET
    inner = model_at(server, RetryPolicy(max_retries=1, backoff_s=0.01), api_key=SECRET)
    model = CachedChatModel(inner, SQLiteLLMCache(db))
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


def test_no_config_dir_is_created_by_reading(tmp_path):
    assert secrets.api_key_for("https://api.example.com/v1") is None
    assert not (tmp_path / "config").exists()
