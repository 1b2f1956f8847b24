"""In front of every request of the API, before FastAPI or MCP read a byte of its body (pure ASGI):

1. the Host header names this server (core.settings.hosts, the app gate's rule: DNS rebinding), and an Origin, when
   a browser sends one, is exactly this server's own (scheme://host:port as the request names it) or one of the
   origins CORS was configured for (`serve --cors-origin`, PAPERGRAPH_CORS_ORIGINS); only those get CORS headers
   (core/api/app.py), so other sites' scripts can neither call nor read. `Origin: null` (a sandboxed frame, a
   file:// page, a redirect) is refused. A preflight (OPTIONS) from a configured origin carries no token and goes to
   the CORS middleware without one;
2. the client address (the connection's, or X-Forwarded-For's from a named proxy: core.settings.proxies) is within
   its rate (a token bucket per address, counting refused calls too);
3. who is calling: a valid `Authorization: Bearer` token (core.settings.tokens), or, when tokens are not required
   (loopback), the local user; a PaperGraph token sent is always checked, even where none is required (any other
   key, such as the "none" an OpenAI client must send, is ignored there);
4. the token is within its rate;
5. without a token, a POST is not a "simple" request, one any web page can make a browser send without asking (no
   Authorization, no X-PaperGraph-Request, a form or text/plain body or none): on loopback, where no token is
   needed, such a request from a page whose Origin the browser hid or an old browser left out would run as the
   local editor; JSON, a file's own type or the custom header need a CORS preflight, which item 1 refuses;
6. the body is within its bound: a declared Content-Length over it is refused before reading; a JSON body without
   one is read here up to the bound (uploads count their own bytes as they stream to disk).

The caller goes to the routes as `request.state.principal`."""
from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from core.api import errors
from core.api.config import ApiConfig, cors_origin
from core.service.errors import TOO_LARGE
from core.settings import hosts, proxies
from core.settings.accounts import EDITOR
from core.settings.tokens import PREFIX as TOKEN_PREFIX
from core.settings.tokens import verify_token

log = logging.getLogger("papergraph.api")

OPEN_PATHS = ("/health", "/docs", "/docs/oauth2-redirect", "/openapi.json")  # no workspace data in them
# A header no browser sends across origins without a CORS preflight: what a tool sends to mark a write as its own.
REQUEST_HEADER = "X-PaperGraph-Request"
# The content types a cross-origin page may POST without a preflight (the Fetch standard's CORS-safelisted ones).
SIMPLE_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data", "text/plain")
UPLOAD_PATH = "/api/papers"
MAX_BUCKETS = 10_000


@dataclass(frozen=True)
class Principal:
    name: str
    role: str
    token_id: str = ""  # "" for the local user (loopback, no token) or an insecure server
    address: str = ""

    @property
    def is_editor(self) -> bool:
        return self.role == EDITOR

    def describe(self) -> str:
        """For audit lines: who, by which token id (never the token), from where."""
        return f"{self.name} (token {self.token_id or '-'}, {self.role}) from {self.address or '?'}"


class RateLimiter:
    """A token bucket per key: `per_minute` requests a minute, bursts of up to 10 s of them."""

    def __init__(self, per_minute: int):
        self.rate = per_minute / 60.0
        self.capacity = max(per_minute / 6.0, 1.0)
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, key: str, now: float | None = None) -> float:
        """0 when the request may go; else seconds until it could."""
        if self.rate <= 0:
            return 0.0
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, last = self._buckets.pop(key, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - last) * self.rate)
            wait = 0.0 if tokens >= 1 else (1 - tokens) / self.rate
            self._buckets[key] = (tokens - 1 if tokens >= 1 else tokens, now)
            while len(self._buckets) > MAX_BUCKETS:  # the oldest idle key goes: memory stays bounded
                self._buckets.popitem(last=False)
            return wait


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return None


class Guard:
    def __init__(self, app, config: ApiConfig):
        self.app, self.config = app, config
        self.names = hosts.served_names(config.host, config.allowed_hosts)
        self.by_address = RateLimiter(config.address_rate_per_minute)
        self.by_token = RateLimiter(config.token_rate_per_minute)
        self.cors_origins = {cors_origin(o) for o in config.cors_origins}

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path") or "/"
        address = self._address(scope)
        if not hosts.host_allowed(_header(scope, b"host"), self.names):
            log.warning("refused %s for Host %r from %s (set %s to add a name)", path, _header(scope, b"host"),
                        address, hosts.HOSTS_ENV)
            return await _refuse(send, errors.INVALID_HOST, "this server is not served under that host name")
        origin = _header(scope, b"origin")
        listed = origin in self.cors_origins
        if origin is not None and not listed and not _own_origin(origin, scope):
            log.info("refused %s %s from %s for Origin %r", scope.get("method"), path, address, origin[:200])
            return await _refuse(send, errors.FORBIDDEN, "cross-origin requests are not served from this origin "
                                                         "(CORS is off unless `serve --cors-origin` lists it)")
        # A configured origin's script must be able to read a refusal too (why it is 401, when to retry a 429).
        cors = {"Access-Control-Allow-Origin": origin, "Vary": "Origin"} if listed else {}
        if wait := self.by_address.take(address):
            return await _refuse(send, errors.RATE_LIMITED, "too many requests from this address; slow down",
                                 {"Retry-After": str(max(1, round(wait))), **cors})
        preflight = listed and scope.get("method") == "OPTIONS" and _header(scope, b"access-control-request-method")
        if path not in OPEN_PATHS and not preflight:
            principal = self._principal(scope, address)
            if isinstance(principal, str):
                return await _refuse(send, errors.UNAUTHORIZED, principal, {"WWW-Authenticate": "Bearer", **cors})
            if principal.token_id and (wait := self.by_token.take(principal.token_id)):
                return await _refuse(send, errors.RATE_LIMITED, "too many requests with this token; slow down",
                                     {"Retry-After": str(max(1, round(wait))), **cors})
            if _simple_post(scope):  # no token (it would be in Authorization): on loopback, or an insecure server
                log.info("refused a simple POST %s from %s (Origin %r)", path, address, (origin or "")[:200])
                return await _refuse(send, errors.FORBIDDEN, "a POST without a token must be one no web page can "
                                     "send on its own: send JSON (Content-Type: application/json), the file's own "
                                     "type (e.g. application/pdf) or the header `X-PaperGraph-Request: 1`", cors)
            scope.setdefault("state", {})["principal"] = principal
        limit = self.config.max_upload_bytes if path == UPLOAD_PATH else self.config.max_body_bytes
        declared = _header(scope, b"content-length")
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                return await _refuse(send, "invalid_input", "Content-Length is not a number")
            if size > limit:
                return await _refuse(send, TOO_LARGE, f"the request body is {size:,} bytes; the limit here is "
                                                      f"{limit:,}")
        elif path != UPLOAD_PATH and scope.get("method") in ("POST", "PUT", "PATCH"):
            chunks, total = [], 0
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                chunk = message.get("body", b"")
                total += len(chunk)
                if total > limit:
                    return await _refuse(send, TOO_LARGE, f"the request body is over the limit of {limit:,} bytes")
                chunks.append(chunk)
                if not message.get("more_body"):
                    break
            receive = _replay(b"".join(chunks), receive)
        await self.app(scope, receive, send)

    def _address(self, scope) -> str:
        """The client's address: the connection's, unless it is a proxy PAPERGRAPH_TRUSTED_PROXIES names."""
        peer = (scope.get("client") or ("?",))[0]
        if not self.config.trusted_proxies:
            return peer
        forwarded = [value.decode("latin-1") for key, value in scope.get("headers", []) if key == b"x-forwarded-for"]
        return proxies.client_address(peer, ",".join(forwarded) or None, self.config.trusted_proxies)

    def _principal(self, scope, address: str) -> Principal | str:
        """The caller, or why they are refused."""
        auth = _header(scope, b"authorization")
        if auth is not None and not self.config.require_tokens and not auth.partition(" ")[2].strip().startswith(
                f"{TOKEN_PREFIX}_"):
            # OpenAI clients must send some key: on loopback, where none is needed, one that is not ours ("none")
            # is no token. A PaperGraph token is always checked, so a revoked one fails here too.
            auth = None
        if auth is not None:
            scheme, _, secret = auth.partition(" ")
            if scheme.lower() != "bearer" or not secret.strip():
                return "send the token as `Authorization: Bearer <token>`"
            token = verify_token(secret.strip(), self.config.config_dir)
            if token is None:
                log.info("refused a token from %s: unknown, revoked or expired", address)
                return "the token is unknown, revoked or expired"
            return Principal(token.name, token.role, token.id, address)
        if self.config.require_tokens:
            return ("this server needs an API token on every call: `Authorization: Bearer <token>` "
                    "(python -m core users token create NAME)")
        return Principal("local" if not self.config.insecure else "anyone", EDITOR, "", address)


def _own_origin(origin: str, scope) -> bool:
    """Whether `origin` is exactly this server as the request names it: its scheme, and the Host header (already
    checked) with its port. Another port on localhost, another loopback address, `null`: no."""
    try:
        return cors_origin(origin) == cors_origin(f"{scope.get('scheme') or 'http'}://{_header(scope, b'host')}")
    except ValueError:
        return False


def _simple_post(scope) -> bool:
    """A POST a browser sends from any page without a preflight: no Authorization, no custom header, and a body
    that is a form, plain text or untyped (what a <form>, or fetch() with a string or a Blob, sends)."""
    if scope.get("method") != "POST":  # PUT, PATCH and DELETE are never simple: a browser asks first
        return False
    if _header(scope, b"authorization") is not None or _header(scope, REQUEST_HEADER.lower().encode()) is not None:
        return False
    content_type = (_header(scope, b"content-type") or "").partition(";")[0].strip().lower()
    return not content_type or content_type in SIMPLE_TYPES


def _replay(data: bytes, receive):
    sent = False

    async def replay():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": data, "more_body": False}
        return await receive()

    return replay


async def _refuse(send, code: str, message: str, headers: dict[str, str] | None = None) -> None:
    status, pairs, data = errors.raw(code, message, headers)
    await send({"type": "http.response.start", "status": status, "headers": pairs})
    await send({"type": "http.response.body", "body": data})
