"""The chat-model factory: what the settings ask for (none, an OpenAI-protocol endpoint with its saved key, the
embedded model) and the install hint when the embedded LLM is missing."""
from __future__ import annotations

import sys

import pytest

from core.models.llm import secrets
from core.models.llm.base import LLMError
from core.models.llm.cache import CachedChatModel
from core.models.llm.factory import describe_llm, get_chat_model
from core.settings.config import Settings
from core.store.sqlite_llm_cache import SQLiteLLMCache
from tests.models.llm_helpers import HELLO, MODEL, SECRET


def test_the_factory_builds_what_the_settings_ask_for(server, db):
    settings = Settings()
    assert get_chat_model(settings, SQLiteLLMCache(db)) is None
    assert describe_llm(settings) == "no LLM (LLM-free defaults)"

    settings.llm.provider, settings.llm.base_url, settings.llm.model = "openai", server.url, MODEL
    secrets.save_api_key(server.url, SECRET)
    server.api_key = SECRET  # answered only if the factory found the saved key
    model = get_chat_model(settings, SQLiteLLMCache(db))
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
        get_chat_model(settings, SQLiteLLMCache(db))
