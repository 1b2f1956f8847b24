"""The vision-language model: an OpenAI-compatible endpoint that takes images as base64 data URLs, behind the
same prompt-hash cache as the text LLM. The image travels inside the messages, so it is part of the cache key:
another image (or the same item re-cropped) is another request.

    model = lib.vision_model()           # None when no VLM is configured
    reply = model.chat([{"role": "user", "content": [
        {"type": "text", "text": "What does this table show?"}, image_part(png_bytes)]}])
"""
from __future__ import annotations

import base64
import hashlib
import threading
from typing import Any

from core.settings.config import VLMConfig
from core.store.sqlite_db import Database

_models: dict[tuple, Any] = {}
_lock = threading.Lock()


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


def vision_model(config: VLMConfig, db: Database):
    """The configured VLM as a ChatModel behind the workspace's prompt-hash cache, or None (no VLM: every
    feature uses the offline descriptions). One instance per workspace and settings, shared by threads."""
    if config.provider == "none":
        return None
    from core.models.llm.cache import CachedChatModel
    from core.models.llm.client import OpenAIChatModel  # imports openai (1-2 s): only once a VLM is set
    from core.models.llm.secrets import api_key_for

    key = api_key_for(config.base_url)
    # A digest of the key, not the key: a changed key makes a new client, and no copy of it sits in this dict.
    key_digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16] if key else ""
    cache_id = (str(db.path), config.provider, config.base_url, config.model, config.timeout_s,
                config.max_tokens, config.concurrency, key_digest)
    with _lock:
        model = _models.get(cache_id)
        if model is None:
            inner = OpenAIChatModel(config.base_url, config.model, key, timeout_s=config.timeout_s,
                                    concurrency=config.concurrency, temperature=0.0, max_tokens=config.max_tokens)
            model = CachedChatModel(inner, db)
            _models[cache_id] = model
        return model
