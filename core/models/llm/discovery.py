"""An OpenAI-compatible server already running on this machine, for the Ask page to recommend when no LLM is set.

Only loopback is probed, on the default ports of the servers researchers run locally (Ollama, LM Studio, vLLM,
llama.cpp's server), with a short timeout and no key: a GET /v1/models that answers with a model list. Nothing is
configured by it; the page only says what was found and where to set it.
"""
from __future__ import annotations

from dataclasses import dataclass

import httpx

LOCAL_SERVERS = (("Ollama", "http://127.0.0.1:11434/v1"), ("LM Studio", "http://127.0.0.1:1234/v1"),
                 ("vLLM", "http://127.0.0.1:8000/v1"), ("llama.cpp server", "http://127.0.0.1:8080/v1"))
PROBE_TIMEOUT_S = 0.3


@dataclass(frozen=True)
class LocalLLM:
    name: str  # the kind of server ("Ollama")
    base_url: str
    models: tuple[str, ...]


def find_local_llm(servers=LOCAL_SERVERS, timeout_s: float = PROBE_TIMEOUT_S) -> LocalLLM | None:
    """The first loopback server that lists models, or None."""
    for name, base_url in servers:
        try:
            reply = httpx.get(f"{base_url}/models", timeout=timeout_s, follow_redirects=False)
            data = reply.json() if reply.status_code == 200 else {}
        except (httpx.HTTPError, ValueError):
            continue
        models = tuple(str(m.get("id", "")) for m in data.get("data", []) if isinstance(m, dict) and m.get("id"))
        if models:
            return LocalLLM(name, base_url, models)
    return None
