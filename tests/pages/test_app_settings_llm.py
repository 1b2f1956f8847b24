"""The Settings page's LLM section through Streamlit's AppTest, against a real OpenAI-protocol server
(tests/openai_server.py): saving an endpoint, testing it, and keeping the API key out of the workspace and the
page."""
from __future__ import annotations

import json
import stat

import pytest

from tests.openai_server import OpenAIReplayServer
from tests.pages.app_helpers import run_app, texts
from tests.pages.test_app_settings import save_button

MODEL = "replay-model"
SECRET = "sk-page-test-5b7e0c2a9d14f3e6a8b1c0d9e2f4a6b8"
KEY_WIDGET = "setting_llm_api_key"


@pytest.fixture
def server():
    with OpenAIReplayServer(model=MODEL) as s:
        yield s


def save_endpoint(at, url: str, model: str, key: str | None = None):
    at.selectbox(key="setting_llm_provider").set_value("openai")
    at.text_input(key="setting_llm_base_url").input(url)
    at.text_input(key="setting_llm_model").input(model)
    if key:
        at.text_input(key=KEY_WIDGET).input(key)
    save_button(at).click()  # the form's Save settings
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def everything_shown(at) -> str:
    """Every element of the page: its protobuf (labels, defaults, options) and its current value."""
    parts, stack = [], [at._tree]
    while stack:
        node = stack.pop()
        parts += [str(getattr(node, "proto", "")), repr(getattr(node, "value", ""))]
        stack += list(getattr(node, "children", {}).values())
    return "\n".join(parts)


def test_an_openai_endpoint_is_saved_and_its_connection_tested(monkeypatch, tmp_path, server):
    root = tmp_path / "ws"
    at = save_endpoint(run_app(monkeypatch, root, "pages/settings.py"), server.url, MODEL)
    assert "Settings saved" in texts(at.success)
    llm = json.loads((root / "settings.json").read_text())["llm"]
    assert (llm["provider"], llm["base_url"], llm["model"]) == ("openai", server.url, MODEL)
    assert f"Now: openai:{MODEL} at {server.url}" in texts(at.caption)
    assert not server.chat_requests, "saving does not call the endpoint"

    at.button(key="test_llm_connection").click().run()
    assert not at.exception
    assert f"Connected: connected to {server.url}: model '{MODEL}' answered in" in texts(at.success)
    assert f"Models served: {MODEL}" in texts(at.caption)
    assert len(server.chat_requests) == 1


def test_a_wrong_model_is_named_with_the_models_the_server_has(monkeypatch, tmp_path, server):
    at = save_endpoint(run_app(monkeypatch, tmp_path / "ws", "pages/settings.py"), server.url, "gpt-nope")
    at.button(key="test_llm_connection").click().run()
    assert not at.exception
    assert (f"Connection failed: model 'gpt-nope' not found at {server.url}; the server has: {MODEL}"
            in texts(at.error))
    assert not at.success or "Connected" not in texts(at.success)


def test_a_typed_key_goes_to_the_credentials_file_only_and_is_never_shown(monkeypatch, tmp_path, server):
    server.api_key = SECRET  # the test connection succeeds only if the saved key is sent
    root = tmp_path / "ws"
    at = save_endpoint(run_app(monkeypatch, root, "pages/settings.py"), server.url, MODEL, key=SECRET)
    assert "Settings saved" in texts(at.success)
    credentials = tmp_path / "config" / "credentials.json"
    assert json.loads(credentials.read_text())["keys"] == {server.url: SECRET}
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o600
    assert SECRET not in (root / "settings.json").read_text()
    assert not any(SECRET.encode() in p.read_bytes() for p in root.rglob("*") if p.is_file())
    assert at.text_input(key=KEY_WIDGET).value == "" and at.session_state[KEY_WIDGET] == ""
    assert f"A key is saved for this endpoint ({server.url})" in texts(at.caption)
    assert at.text_input(key=KEY_WIDGET).proto.type == at.text_input(key=KEY_WIDGET).proto.PASSWORD
    shown = everything_shown(at)
    assert "Save settings" in shown and "paste a key to save it" in shown and server.url in shown
    assert SECRET not in shown

    at.button(key="test_llm_connection").click().run()
    assert f"Connected: connected to {server.url}" in texts(at.success)
    assert SECRET not in everything_shown(at)

    at.button(key="forget_api_key").click().run()
    assert not at.exception
    assert "is forgotten" in texts(at.info)
    assert json.loads(credentials.read_text())["keys"] == {}
    at.button(key="test_llm_connection").click().run()
    assert "rejected the API key (HTTP 401): no API key is set for this endpoint" in texts(at.error)


def test_entity_types_are_edited_as_a_comma_separated_list(monkeypatch, tmp_path):
    root = tmp_path / "ws"
    at = run_app(monkeypatch, root, "pages/settings.py")
    assert at.text_input(key="setting_graph_entity_types").value.startswith("method, task, dataset")
    at.text_input(key="setting_graph_entity_types").input("method,  dataset , metric,")
    save_button(at).click()
    at.run()
    assert "Settings saved" in texts(at.success)
    assert json.loads((root / "settings.json").read_text())["graph"]["entity_types"] == ["method", "dataset",
                                                                                         "metric"]
    at.text_input(key="setting_graph_entity_types").input(" , ")
    save_button(at).click()
    at.run()
    assert "Not saved: name at least one entity type" in texts(at.error)
    assert json.loads((root / "settings.json").read_text())["graph"]["entity_types"] == ["method", "dataset",
                                                                                         "metric"]


def test_choosing_openai_without_a_url_is_refused_and_the_provider_choices_explain_themselves(monkeypatch,
                                                                                             tmp_path):
    at = run_app(monkeypatch, tmp_path / "ws", "pages/settings.py")
    provider = at.selectbox(key="setting_llm_provider")
    assert provider.options == [
        "none: no LLM, everything runs on the LLM-free defaults (spaCy entities, extractive answers)",
        "openai: any OpenAI-compatible endpoint (OpenAI, Ollama /v1, vLLM, LM Studio)",
        "embedded: Qwen2.5-Coder-1.5B inside the app, on the CPU (no server, but slow)"]
    assert "35–50 s per chunk" in texts(at.caption)
    provider.set_value("openai")
    save_button(at).click()
    at.run()
    assert "Not saved: an OpenAI-compatible LLM needs a base URL and a model name" in texts(at.error)
    at.button(key="test_llm_connection").click().run()
    assert "choose the openai provider to test an endpoint" in texts(at.info)


def test_a_new_base_url_asks_for_its_key_again_and_the_page_says_which_key_goes_where(monkeypatch, tmp_path,
                                                                                      server):
    server.api_key = SECRET
    at = save_endpoint(run_app(monkeypatch, tmp_path / "ws", "pages/settings.py"), server.url, MODEL, key=SECRET)
    assert f"A key is saved for this endpoint ({server.url})" in texts(at.caption)
    with OpenAIReplayServer(model=MODEL) as other:
        at = save_endpoint(at, other.url, MODEL)  # someone points the app at another server
        assert (f"The LLM base URL changed to {other.url}: the key for {server.url} is not sent there. Paste the "
                "key for the new URL in API key") in texts(at.warning)
        assert f"No API key is sent to {other.url}" in texts(at.caption)
        at.button(key="test_llm_connection").click().run()
        assert other.auth_headers and all(SECRET not in (h or "") for h in other.auth_headers)
        assert SECRET not in everything_shown(at)

    monkeypatch.setenv("PAPERGRAPH_LLM_API_KEY", "sk-from-the-environment")
    at = save_endpoint(at, server.url, MODEL)
    assert "PAPERGRAPH_LLM_API_KEY is set but sent nowhere: set PAPERGRAPH_LLM_BASE_URL" not in texts(at.caption)
    assert f"A key is saved for this endpoint ({server.url})" in texts(at.caption), "the saved key came back"
    monkeypatch.setenv("PAPERGRAPH_LLM_BASE_URL", server.url)
    at.run()
    assert (f"The key in PAPERGRAPH_LLM_API_KEY is sent to {server.url} (named by PAPERGRAPH_LLM_BASE_URL), and to "
            "no other endpoint.") in texts(at.caption)
