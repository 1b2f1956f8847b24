"""The Settings page's "Test connection": one step at a time, saying exactly which one failed and what to try.

Steps: the URL itself, GET /models (reachability, the key, whether this is an OpenAI-compatible API at all, which
models are served), then a tiny chat call through the production client, whose latency is reported.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import httpx

from core.models.llm.client import LLMCallError, OpenAIChatModel, RetryPolicy, network_failure, seconds
from core.models.llm.deadline import http_client, until
from core.models.llm.secrets import missing_key_hint, redact
from core.settings.config import LLMConfig

CONNECT_TIMEOUT_S = 10.0  # an unreachable host should fail fast even when the reply timeout is minutes
PROBE_MESSAGES = [{"role": "user", "content": "Reply with the single word OK."}]


@dataclass
class ConnectionReport:
    ok: bool
    step: str  # url | connect | auth | models | model | chat | done: the step that failed (or "done")
    message: str
    latency_s: float = 0.0
    models: list[str] = field(default_factory=list)  # what the server says it serves, when it says


def url_problem(base_url: str) -> str | None:
    if not base_url:
        return "no base URL is set (e.g. https://api.openai.com/v1 or http://localhost:11434/v1)"
    try:
        url = httpx.URL(base_url)
    except httpx.InvalidURL as exc:
        return f"the base URL {base_url!r} is malformed: {exc}"
    if url.scheme not in ("http", "https"):
        return f"the base URL {base_url!r} is malformed: it must start with http:// or https://"
    if not url.host:
        return f"the base URL {base_url!r} is malformed: it names no host"
    return None


def _v1_hint(base_url: str) -> str:
    return "the URL usually ends in /v1" + ("" if base_url.endswith("/v1") else f" (try {base_url}/v1)")


def _list_models(base_url: str, api_key: str | None, timeout_s: float
                 ) -> tuple[ConnectionReport | None, list[str] | None]:
    """(a failure report, None) or (None, the served models; None when the server has no /models)."""
    url = httpx.URL(base_url)
    host = f"{url.host}:{url.port}" if url.port else url.host
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    # A total deadline, not a per-read timeout: a server trickling its model list must not hang the page.
    # Redirects are not followed here (httpx drops the key on a cross-origin redirect anyway).
    try:
        with http_client(timeout_s, follow_redirects=False) as client, until(time.monotonic() + timeout_s):
            reply = client.get(f"{base_url}/models", headers=headers,
                               timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, CONNECT_TIMEOUT_S)))
    except httpx.ConnectTimeout:
        return ConnectionReport(False, "connect", f"cannot reach {base_url}: connecting to {host} timed out after "
                                f"{seconds(min(timeout_s, CONNECT_TIMEOUT_S))} (a firewall, or the wrong host?)"), None
    except httpx.TimeoutException:
        return ConnectionReport(False, "connect", f"{base_url} accepted the connection but GET /models timed out "
                                f"after {seconds(timeout_s)}"), None
    except httpx.HTTPError as exc:
        return ConnectionReport(False, "connect", f"cannot reach {base_url}: {network_failure(exc, host)}"), None
    if reply.status_code in (401, 403):
        why = (f"no API key is set for this endpoint ({missing_key_hint(base_url)})" if not api_key else
               "check the key (Settings, PAPERGRAPH_LLM_API_KEY or OPENAI_API_KEY)")
        return ConnectionReport(False, "auth", f"{base_url} rejected the API key (HTTP {reply.status_code}): "
                                f"{why}"), None
    is_json = "json" in reply.headers.get("content-type", "")
    if reply.status_code == 404 and is_json:
        return None, None  # an API without a model list: the chat call decides
    if reply.status_code != 200 or not is_json:
        what = "an HTML page" if reply.text.lstrip().startswith("<") else "a reply that is not JSON"
        return ConnectionReport(False, "models", f"{base_url} is not an OpenAI-compatible endpoint: GET /models "
                                f"answered HTTP {reply.status_code} with {what}; {_v1_hint(base_url)}"), None
    try:
        data = reply.json().get("data")
    except (ValueError, AttributeError):
        return ConnectionReport(False, "models", f"{base_url}/models answered with a reply that is not JSON: "
                                f"not an OpenAI-compatible endpoint; {_v1_hint(base_url)}"), None
    if not isinstance(data, list):
        return None, None
    return None, [str(m.get("id")) for m in data if isinstance(m, dict) and m.get("id")]


def check_connection(config: LLMConfig, api_key: str | None) -> ConnectionReport:
    base_url = config.base_url.strip().rstrip("/")
    problem = url_problem(base_url)
    if problem:
        return ConnectionReport(False, "url", problem)
    if not config.model.strip():
        return ConnectionReport(False, "url", "no model name is set")
    failure, models = _list_models(base_url, api_key, config.timeout_s)
    if failure:
        failure.message = redact(failure.message, api_key)
        return failure
    served = models or []
    model = OpenAIChatModel(base_url, config.model.strip(), api_key, timeout_s=config.timeout_s,
                            concurrency=config.concurrency, retry=RetryPolicy(max_retries=0))
    try:
        reply = model.chat(PROBE_MESSAGES, purpose="connection test", max_tokens=5, temperature=0.0)
    except LLMCallError as exc:
        if exc.kind == "model_missing" or (exc.kind == "no_route" and models and config.model not in models):
            listed = (f"the server has: {', '.join(served[:20])}" + (" …" if len(served) > 20 else "")
                      if served else "the server lists no models")
            return ConnectionReport(False, "model", f"model '{config.model}' not found at {base_url}; {listed}",
                                    models=served)
        step = {"auth": "auth", "network": "connect", "timeout": "chat"}.get(exc.kind, "chat")
        return ConnectionReport(False, step, str(exc), models=served)
    listed = f"; it serves {len(served)} model(s)" if models is not None else ""
    return ConnectionReport(True, "done", f"connected to {base_url}: model '{config.model}' answered in "
                            f"{reply.latency_s:.2f} s{listed}", latency_s=reply.latency_s, models=served)
