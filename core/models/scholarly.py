"""The one client of the online metadata services (Crossref and OpenAlex): timeouts, retries with backoff, a polite
User-Agent with the optional contact e-mail, and a cache of replies keyed by request (lib.web_cache), so a repeated
request makes no call.

It refuses to exist while online enrichment is off (settings.metadata.online_enrichment): no code path can make a
request the user did not turn on. Neither service needs a key, so none is ever held, sent, logged or cached; the
contact e-mail travels in the User-Agent and the `mailto` parameter and is left out of the cache key. A reply is
read up to MAX_BYTES and must be a JSON object; its body never appears in an error message or a log line.
"""
from __future__ import annotations

import email.utils
import hashlib
import json
import logging
import time
from collections.abc import Callable
from typing import Any

import httpx

from core.settings.metadata_config import MetadataConfig
from core.store.base import WebCache

log = logging.getLogger(__name__)

MAX_BYTES = 2_000_000  # a work record is a few kB; a 50-row query under 1 MB
RETRYABLE = {429, 500, 502, 503, 504}
USER_AGENT = "PaperGraph/1.0 (research workbench; https://github.com/papergraph)"
SERVICES = ("crossref", "openalex")


class OnlineDisabled(RuntimeError):
    """Online enrichment is off: no client, no request."""


class ServiceError(RuntimeError):
    """A service could not answer (timeouts, refusals, an unreadable reply): the message says which and why."""


def user_agent(email_address: str) -> str:
    return f"{USER_AGENT[:-1]}; mailto:{email_address})" if email_address else USER_AGENT


def request_key(service: str, path: str, params: dict[str, Any]) -> str:
    """The cache key of a request: service, path and parameters, without the contact e-mail."""
    wanted = sorted((k, str(v)) for k, v in params.items() if k != "mailto")
    return hashlib.sha256(json.dumps([service, path, wanted]).encode()).hexdigest()


def _retry_after(value: str | None) -> float | None:
    """Retry-After in seconds or as an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0) if when is not None else None


class ScholarlyClient:
    def __init__(self, config: MetadataConfig, cache: WebCache, *, sleep: Callable[[float], None] = time.sleep,
                 transport: httpx.BaseTransport | None = None):
        if not config.online_enrichment:
            raise OnlineDisabled("online metadata enrichment is off (Settings → Parsing & chunking → Paper metadata "
                                 "online, or metadata.online_enrichment in settings.json): no request is made")
        self.config, self.cache, self.sleep = config, cache, sleep
        self.calls = 0  # requests sent (cache hits excluded)
        self._http = httpx.Client(timeout=config.timeout_s, follow_redirects=False, transport=transport,
                                  headers={"User-Agent": user_agent(config.contact_email.strip()),
                                           "Accept": "application/json"})

    def close(self) -> None:
        self._http.close()

    def base_url(self, service: str) -> str:
        return {"crossref": self.config.crossref_url, "openalex": self.config.openalex_url}[service].rstrip("/")

    def get(self, service: str, path: str, params: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """The service's JSON object for this request, or None when it has no such record (404); from the cache
        when the same request was answered before. ServiceError when it cannot answer."""
        params = dict(params or {})
        key = request_key(service, path, params)
        if (cached := self.cache.get(key)) is not None:
            status, body = cached
            return None if status == 404 else json.loads(body)
        if email_address := self.config.contact_email.strip():
            params["mailto"] = email_address
        status, data = self._fetch(service, path, params)
        self.cache.put(key, service, status, json.dumps(data) if data is not None else "null")
        return data

    def _fetch(self, service: str, path: str, params: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
        url = self.base_url(service) + path
        why = ""
        for attempt in range(self.config.retries + 1):
            wait = min(0.5 * 2 ** attempt, self.config.max_wait_s)
            try:
                self.calls += 1
                with self._http.stream("GET", url, params=params) as resp:
                    if resp.status_code == 404:
                        return 404, None
                    if resp.status_code in RETRYABLE:
                        why = f"{service} answered {resp.status_code}"
                        asked = _retry_after(resp.headers.get("retry-after"))
                        if asked is not None and asked > self.config.max_wait_s:
                            raise ServiceError(f"{why} and asks to wait {asked:g} s, more than the longest wait "
                                               f"({self.config.max_wait_s:g} s): try again later")
                        wait = asked if asked is not None else wait
                    elif resp.status_code != 200:
                        raise ServiceError(f"{service} refused the request ({resp.status_code})")
                    else:
                        return 200, self._json(service, resp)
            except httpx.TimeoutException:
                why = f"{service} did not answer within {self.config.timeout_s:g} s"
            except httpx.TransportError as exc:
                why = f"{service} cannot be reached ({type(exc).__name__})"
            if attempt < self.config.retries:
                log.info("%s; retry %d in %.1f s", why, attempt + 1, wait)
                self.sleep(wait)
        raise ServiceError(f"{why} ({self.config.retries + 1} attempts)")

    @staticmethod
    def _json(service: str, resp: httpx.Response) -> dict[str, Any]:
        if "json" not in resp.headers.get("content-type", ""):
            kind = resp.headers.get("content-type", "?")[:40]
            raise ServiceError(f"{service} sent something other than JSON ({kind})")
        body = bytearray()
        for part in resp.iter_bytes():
            body += part
            if len(body) > MAX_BYTES:
                raise ServiceError(f"{service} sent a reply over {MAX_BYTES:,} bytes: refused")
        try:
            data = json.loads(bytes(body))
        except ValueError:
            raise ServiceError(f"{service} sent a reply that is not valid JSON") from None
        if not isinstance(data, dict):
            raise ServiceError(f"{service} sent JSON of an unexpected shape")
        return data
