"""What the LLM client tests (test_llm_calls, test_llm_cache, test_llm_keys, test_llm_connection,
test_llm_factory) share: the replay model's name, a test key, a short prompt, a fast retry policy, a client
pointed at the replay server, and a port nothing listens on."""
from __future__ import annotations

import socket

from core.models.llm.client import OpenAIChatModel, RetryPolicy

MODEL = "replay-model"
SECRET = "sk-test-9f3c1e77d2b94a0e8c5f6a1b2c3d4e5f"
HELLO = [{"role": "user", "content": "Name one graph algorithm in a word."}]  # 35 chars: 8 prompt tokens
FAST = RetryPolicy(max_retries=4, backoff_s=0.01, max_backoff_s=0.05)


def model_at(server, retry: RetryPolicy = FAST, **kwargs) -> OpenAIChatModel:
    return OpenAIChatModel(server.url, MODEL, kwargs.pop("api_key", None), retry=retry, **kwargs)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
