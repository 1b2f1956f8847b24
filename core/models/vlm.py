"""The vision-language model: an OpenAI-compatible endpoint that takes images as base64 data URLs, behind the
same prompt-hash cache as the text LLM. The image travels inside the messages, so it is part of the cache key:
another image (or the same item re-cropped) is another request.

    model = lib.vision_model()           # None when no VLM is configured
    reply = model.chat([{"role": "user", "content": [
        {"type": "text", "text": "What does this table show?"}, image_part(png_bytes)]}])
"""
from __future__ import annotations

import base64

from core.models.llm.cache import CachedChatModel
from core.models.llm.factory import key_digest
from core.models.llm.secrets import api_key_for
from core.models.registry import resources
from core.settings.config import VLMConfig
from core.store.base import LLMCacheStore


def image_part(png: bytes) -> dict:
    """An OpenAI chat content part carrying a PNG as a base64 data URL."""
    if not png:
        raise ValueError("an image part needs image bytes")
    return {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode("ascii")}}


def text_part(text: str) -> dict:
    return {"type": "text", "text": text}


def describe_vlm(config: VLMConfig) -> str:
    """One line for the UI: what describes the items."""
    if config.provider == "openai":
        return f"VLM openai:{config.model} at {config.base_url}"
    return "no VLM (offline descriptions from the parsed text)"


def vision_model(config: VLMConfig, cache: LLMCacheStore):
    """The configured VLM as a ChatModel behind the workspace's prompt-hash cache, or None (no VLM: every
    feature uses the offline descriptions). One instance per workspace and settings, shared by threads."""
    if config.provider == "none":
        return None
    from core.models.llm.client import OpenAIChatModel  # imports openai (1-2 s): only once a VLM is set

    key = api_key_for(config.base_url)
    # A changed key makes a new client.
    cache_id = ("vlm", cache.location, config.provider, config.base_url, config.model, config.timeout_s,
                config.max_tokens, config.concurrency, key_digest(key))

    def build() -> CachedChatModel:
        inner = OpenAIChatModel(config.base_url, config.model, key, timeout_s=config.timeout_s,
                                concurrency=config.concurrency, temperature=0.0, max_tokens=config.max_tokens)
        return CachedChatModel(inner, cache)

    return resources.get(cache_id, build)
