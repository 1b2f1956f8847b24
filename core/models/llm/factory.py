"""The chat model the settings ask for, behind the cache, or None when the pipeline should run LLM-free."""
from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, replace

from core.models.llm.base import ChatModel, LLMError
from core.models.llm.cache import CachedChatModel
from core.models.llm.secrets import api_key_for
from core.models.registry import resources
from core.settings.config import Settings
from core.store.base import LLMCacheStore

EMBEDDED_NAME = "Qwen2.5-Coder-1.5B"  # the one model core.models.llm.embedded ships; llm.model is not used
EMBEDDED_COST = "slow: ~40 s per chunk"
# Set to off: the embedded model, though installed, is not the default reader (answers stay extractive unless an
# LLM is configured). README: "Readers".
EMBEDDED_READER_SWITCH = "PAPERGRAPH_EMBEDDED_READER"


def get_chat_model(settings: Settings, cache: LLMCacheStore) -> ChatModel | None:
    llm = settings.llm
    if llm.provider == "none":
        return None
    if llm.provider == "openai":
        # The openai package takes 1-2 s to import: pages that only describe the LLM should not pay for it.
        from core.models.llm.client import OpenAIChatModel

        return CachedChatModel(OpenAIChatModel.from_config(llm, api_key_for(llm.base_url)), cache)
    if llm.provider == "embedded":
        try:
            # llama.cpp and its weights are an opt-in install: importing them eagerly would break every page.
            from core.models.llm.embedded import EmbeddedChatModel

            inner = EmbeddedChatModel.from_config(llm)
        except ImportError as exc:
            raise LLMError(f"the embedded LLM is not installed: run `make llm` ({exc})") from None
        return CachedChatModel(inner, cache)
    raise LLMError(f"unknown LLM provider {llm.provider!r}")


def shared_chat_model(settings: Settings, cache: LLMCacheStore) -> ChatModel | None:
    """The process's one chat model for this workspace and these LLM settings (core.models.registry), built on
    first use; other settings or another API key make another one."""
    llm = settings.llm
    if llm.provider == "none":
        return None
    config = json.dumps(asdict(llm), sort_keys=True, default=str)
    key = ("chat-model", cache.location, config, key_digest(api_key_for(llm.base_url)))
    return resources.get(key, lambda: get_chat_model(settings, cache))


def embedded_available() -> bool:
    """The embedded model's runtime and weights are on this machine (`make llm`, or `make run` unless skipped), and
    PAPERGRAPH_EMBEDDED_READER does not turn it off: checked without loading either."""
    import os

    if os.environ.get(EMBEDDED_READER_SWITCH, "").lower() in ("0", "off", "false", "no"):
        return False
    return _embedded_installed()


@functools.lru_cache(maxsize=1)
def _embedded_installed() -> bool:
    # Asked on every page run (the sidebar, Ask's caption and options): what pip and `make llm` put on disk is read
    # once per process; installing the model means restarting the app, as any pip install does.
    import importlib.util

    from core.models.llm.embedded import is_installed

    return importlib.util.find_spec("xllamacpp") is not None and is_installed()


def shared_reader_model(settings: Settings, cache: LLMCacheStore) -> ChatModel | None:
    """The model that reads answers (core.query.reading): the configured LLM; with none configured, the embedded
    model when it is installed (it reads a few sentences per question and replies in a few tokens, so it serves as
    the default reader even where it is too slow to extract the graph); None: the extractive reader."""
    if settings.llm.provider != "none":
        return shared_chat_model(settings, cache)
    if not embedded_available():
        return None
    reader = replace(settings, llm=replace(settings.llm, provider="embedded"))
    return shared_chat_model(reader, cache)


def key_digest(key: str) -> str:
    """A digest of an API key, not the key, for a resource key: no copy of the key sits in the registry."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16] if key else ""


def describe_llm(settings: Settings) -> str:
    """One line for the UI: what will answer, and where."""
    llm = settings.llm
    if llm.provider == "openai":
        return f"openai:{llm.model} at {llm.base_url}"
    if llm.provider == "embedded":
        return f"embedded {EMBEDDED_NAME} ({EMBEDDED_COST})"
    return "no LLM (LLM-free defaults)"
