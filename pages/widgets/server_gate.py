"""The HTTP side of sign-in, in front of Streamlit (serve.py mounts it): the /sign-in form that sets the session
cookie, and one ASGI middleware that every request and websocket passes through first.

Why in front, not in the script: a Streamlit script cannot set an HttpOnly cookie, and anything it keeps lives in
a session that a new websocket can resume by presenting its id. Here the browser gets a signed, HttpOnly,
SameSite=Strict cookie (core.service.sessions); each run of app.py reads it again (pages/widgets/auth.py).
streamlit-authenticator 0.4 was the other candidate: its cookie is written from JavaScript (so not HttpOnly), is a
self-contained JWT (sign-out cannot end the other copies), and it limits nothing across sessions.

The /sign-in form itself is pages/widgets/sign_in_form.py. The middleware, before Streamlit sees a request:
- refuses a Host header that is neither an address, nor localhost, nor a name the app is served under (DNS
  rebinding: a page on attacker.example whose name now points at 127.0.0.1 sends `Host: attacker.example`);
- refuses the websocket, and any request but GET/HEAD/OPTIONS, from a browser page of another origin than the
  server's own or one named in $PAPERGRAPH_ALLOWED_ORIGINS (core.settings.hosts.origin_allowed): Streamlit's own
  check let any localhost port in, so a page of another local web server acted as the loopback app's editor;
- turns a fragment's or a dialog's rerun, or a backend operation (a deferred download, a dataframe's rows), into a
  full run once the websocket's session cookie names no live session: app.py's gate then shows the sign-in page,
  so sign-out in one tab stops every other tab at its next action, whatever it was (a fragment's run does not
  pass through app.py);
- when sign-in is required, lets no one without a live session cookie open the app's websocket, media, component
  or upload routes, and sends a page request to /sign-in with the page and its query kept in `next`;
- refuses an upload from anyone but an editor (or the loopback local user) before reading a byte of its body,
  and one that says it is larger than server.maxUploadSize;
- drops `clear_cache` commands on the websocket from anyone but an editor: they empty every session's caches;
- counts sign-in failures against the client's address as core.settings.proxies.client_address says: the peer,
  unless it is a proxy named in $PAPERGRAPH_TRUSTED_PROXIES (serve.py turns uvicorn's own X-Forwarded-For
  handling off: it trusted the header from 127.0.0.1);
- sends /library, the default page that Streamlit serves at the root only, to the root (no "Page not found").
"""
from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http.cookies import SimpleCookie
from urllib.parse import quote

from streamlit import config

from core.service import sessions
from core.settings import accounts, hosts, proxies
from core.settings.accounts import Access, Account

log = logging.getLogger("papergraph.auth")

SIGN_IN_PATH = "/sign-in"
HOSTS_ENV = hosts.HOSTS_ENV  # extra names the app is reached under (a reverse proxy's), comma-separated
# Routes anyone may load: the sign-in form, the static bundle, the health check, the OpenID Connect hand-off.
_OPEN_PREFIXES = ("/static/", "/_stcore/health", "/_stcore/host-config", "/auth/login", "/auth/logout",
                  "/oauth2callback")
_OPEN_FILES = ("/favicon.png", "/manifest.json", SIGN_IN_PATH)
# Routes of the running app itself, never a page: refused outright rather than sent to the sign-in form.
_APP_PREFIXES = ("/_stcore/", "/media/", "/component/", "/app/static/")
_UPLOAD_PREFIX = "/_stcore/upload_file/"
_SAFE_METHODS = ("GET", "HEAD", "OPTIONS")  # change nothing: no origin check
DEFAULT_PAGE_PATH = "/library"  # app.py's default page

Scope = dict
Receive = Callable[[], Awaitable[dict]]
Send = Callable[[dict], Awaitable[None]]

INSTALLED = False  # set when serve.py put the middleware in front: app.py refuses to serve without it


# ------------------------------------------------------------------------------------------------ who is it
@dataclass(frozen=True)
class Visitor:
    account: Account | None  # None: not signed in
    access: Access

    @property
    def may_enter(self) -> bool:
        return self.access in (Access.OPEN, Access.INSECURE, Access.REFUSED) or self.account is not None

    @property
    def may_edit(self) -> bool:
        """Uploads and cache commands: the loopback local user, an editor, or an app opened with INSECURE=1
        (whose banner says anyone may). A refused app has no one to edit it."""
        return self.access in (Access.OPEN, Access.INSECURE) or bool(self.account and self.account.is_editor)


def _cookies(scope: Scope) -> dict[str, str]:
    jar = SimpleCookie()
    for name, value in scope.get("headers", []):
        if name == b"cookie":
            try:
                jar.load(value.decode("latin-1"))
            except Exception:  # a malformed cookie header is no cookie, not an error page
                continue
    return {key: morsel.value for key, morsel in jar.items()}


def header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return None


def _oidc_account(cookies: dict[str, str]) -> Account | None:
    """Someone signed in with st.login: Streamlit's own signed user cookie, and a role from the allow-lists."""
    from pages.widgets import auth

    if auth.oidc_section() is None:
        return None
    try:
        import json

        from streamlit.web.server.starlette.starlette_websocket import _get_signed_cookie_with_chunks

        raw = _get_signed_cookie_with_chunks(cookies, "_streamlit_user")
        payload = json.loads(raw) if raw else {}
    except Exception:  # no usable cookie secret, a forged or truncated cookie: not signed in
        return None
    email = payload.get("email") if payload.get("is_logged_in") else None
    role = accounts.oidc_role(email, *auth._role_lists()) if email else None
    return Account(email, role) if role else None


def visitor(scope: Scope) -> Visitor:
    from pages.widgets import auth

    access = auth.policy()
    if access != Access.SIGN_IN:
        return Visitor(None, access)
    cookies = _cookies(scope)
    account = sessions.account_for(cookies.get(sessions.COOKIE_NAME)) or _oidc_account(cookies)
    return Visitor(account, access)


# ------------------------------------------------------------------------------------------------ host names
def _configured_names() -> set[str]:
    """The names of core.settings.hosts.served_names, with Streamlit's server.allowedHosts and address."""
    return hosts.served_names(config.get_option("server.address") or "",
                              config.get_option("server.allowedHosts") or [])


def base_path() -> str:
    """server.baseUrlPath as a prefix ("" or "/papers"): behind a reverse proxy that serves the app under a path,
    every route of the gate sits under it too."""
    base = (config.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}" if base else ""


def host_allowed(host_header: str | None) -> bool:
    """An IP address (a rebinding page can only bring its own name, never an address, into the Host header),
    localhost, or a configured name ($PAPERGRAPH_HOSTS, server.allowedHosts, the server address, and the
    machine's names when served to a network). `*` in server.allowedHosts accepts any host."""
    return hosts.host_allowed(host_header, _configured_names())


# ------------------------------------------------------------------------------------------------ middleware
class Gate:
    """Pure ASGI (not BaseHTTPMiddleware) so that it sees websockets and can refuse a body before it is read."""

    def __init__(self, app) -> None:
        global INSTALLED
        self.app = app
        INSTALLED = True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        full_path = scope.get("path") or "/"
        base = base_path()
        path = (full_path[len(base):] or "/") if base and full_path.startswith(base) else full_path
        if not host_allowed(header(scope, b"host")):
            log.warning("refused %s %s for Host %r (not a name this app is served under; set %s)",
                        scope["type"], path, header(scope, b"host"), HOSTS_ENV)
            await self._refuse(scope, send, 421, "This app is not served under that host name.")
            return
        if path == SIGN_IN_PATH and scope["type"] == "http":
            from pages.widgets.sign_in_form import sign_in_route

            await sign_in_route(scope, receive, send)  # its POST checks the origin itself, with a page that says so
            return
        if (scope["type"] == "websocket" or scope.get("method") not in _SAFE_METHODS) and not origin_ok(scope):
            log.warning("refused %s %s %s from Origin %r (not %s; add it to %s)", scope["type"],
                        scope.get("method", ""), path, header(scope, b"origin"), own_origin(scope), hosts.ORIGINS_ENV)
            await self._refuse(scope, send, 403, "This app does not take requests from pages of another site.")
            return
        if path in _OPEN_FILES or path.startswith(_OPEN_PREFIXES):
            await self.app(scope, receive, send)
            return
        if path.rstrip("/") == DEFAULT_PAGE_PATH and scope["type"] == "http":  # not a "Page not found" dialog
            query = scope.get("query_string", b"").decode("latin-1")
            await redirect(send, f"{base or ''}/" + (f"?{query}" if query else ""))
            return
        who = visitor(scope)
        if not who.may_enter:
            if scope["type"] == "http" and scope.get("method") in ("GET", "HEAD") and not path.startswith(
                    _APP_PREFIXES):
                await redirect(send, _sign_in_url(full_path, scope.get("query_string", b"").decode("latin-1")),
                                cross_site=header(scope, b"sec-fetch-site") == "cross-site")
                return
            await self._refuse(scope, send, 401, "Sign in first.")
            return
        if path.startswith(_UPLOAD_PREFIX) and scope.get("method") == "PUT":
            if not who.may_edit:
                log.warning("refused an upload from %s (not an editor)", client_address(scope))
                await self._refuse(scope, send, 403, "Only an editor can upload.")
                return
            if _declared_length(scope) > config.get_option("server.maxUploadSize") * 1024 * 1024:
                await self._refuse(scope, send, 413, "File too large.")
                return
        if scope["type"] == "websocket":
            receive = _screened(receive, scope)
            scope = _as_own_origin(scope)
        await self.app(scope, receive, send)

    @staticmethod
    async def _refuse(scope: Scope, send: Send, status: int, text: str) -> None:
        if scope["type"] == "websocket":  # closing before accepting: the handshake gets HTTP 403
            await send({"type": "websocket.close", "code": 1008})
            return
        body = text.encode("utf-8")
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(body)).encode()), (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


def _peer(scope: Scope) -> str:
    client = scope.get("client")
    return client[0] if client else "?"


def client_address(scope: Scope) -> str:
    """Whom a request is from, for sign-in limits and logs: X-Forwarded-For is read only from a proxy named in
    $PAPERGRAPH_TRUSTED_PROXIES (core.settings.proxies)."""
    forwarded = ", ".join(v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"x-forwarded-for")
    return proxies.client_address(_peer(scope), forwarded or None, proxies.trusted_proxies())


def own_origin(scope: Scope) -> str:
    """This server's origin as the request names it: its scheme (https behind a trusted proxy that says so in
    X-Forwarded-Proto) and its Host header, which the gate has already checked."""
    scheme = "https" if scope.get("scheme") in ("https", "wss") else "http"
    forwarded = (header(scope, b"x-forwarded-proto") or "").split(",")[0].strip().lower()
    if forwarded in ("http", "https") and proxies.is_trusted(_peer(scope), proxies.trusted_proxies()):
        scheme = forwarded
    return f"{scheme}://{header(scope, b'host') or ''}"


def origin_ok(scope: Scope) -> bool:
    return hosts.origin_allowed(header(scope, b"origin"), own_origin(scope))


def _as_own_origin(scope: Scope) -> Scope:
    """A websocket from an origin named in $PAPERGRAPH_ALLOWED_ORIGINS, passed on as if from the server's own:
    Streamlit's looser check (localhost or this machine's addresses, by host name alone) would refuse a named one
    on another host, and the gate has decided already."""
    origin = header(scope, b"origin")
    if origin is None or hosts.origin_key(origin) == hosts.origin_key(own_origin(scope)):
        return scope
    headers = [(k, v) for k, v in scope.get("headers", []) if k != b"origin"]
    return {**scope, "headers": [*headers, (b"origin", own_origin(scope).encode("latin-1"))]}


def _declared_length(scope: Scope) -> int:
    try:
        return int(header(scope, b"content-length") or 0)
    except ValueError:
        return 0  # Streamlit's own route answers a malformed length


def _screened(receive: Receive, scope: Scope) -> Receive:
    """The websocket's messages as the app may act on them now. Each is parsed (a command padded with unknown fields
    is still one), and those that would run app code without passing app.py's gate are checked again when they
    arrive, against the cookie the websocket opened with:
    - a `clear_cache` from someone who may not edit is dropped (an editor's tab signed out elsewhere loses the
      right too);
    - from a session that has ended (signed out in another tab, expired), a fragment's rerun (an Ask or Compare
      form, a citation's dialog, a list that refreshes itself) becomes a full rerun, and a backend operation (a
      deferred download's data, a dataframe's rows) a full rerun of the page it was on: app.py's gate then shows
      the sign-in page instead. Full reruns check the cookie themselves, so only these cost a look-up."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    page_hash = ""  # the page of this websocket's last run: a refused operation reruns it

    async def screened() -> dict:
        nonlocal page_hash
        while True:
            message = await receive()
            data = message.get("bytes") if message.get("type") == "websocket.receive" else None
            if not data:
                return message
            back = BackMsg()
            try:
                back.ParseFromString(data)
            except Exception:
                return message  # Streamlit closes the connection on a malformed frame
            kind = back.WhichOneof("type")
            if kind == "clear_cache" and not visitor(scope).may_edit:
                log.warning("dropped a clear_cache command from %s (not an editor)", client_address(scope))
                continue
            if kind == "rerun_script":
                page_hash = back.rerun_script.page_script_hash or page_hash
                if not back.rerun_script.fragment_id or visitor(scope).may_enter:
                    return message
                back.rerun_script.fragment_id = ""
                back.rerun_script.is_auto_rerun = False  # (a timer's run, as a full run, left the sidebar drawn)
            elif kind == "backend_operation_request" and not visitor(scope).may_enter:
                back = BackMsg()
                back.rerun_script.page_script_hash = page_hash
            else:
                return message
            log.info("a signed-out session's %s became a full run (the sign-in page), from %s", kind,
                     client_address(scope))
            return {**message, "bytes": back.SerializeToString()}

    return screened


# ------------------------------------------------------------------------------------------------ /sign-in
def safe_next(target: str | None) -> str:
    """Where to go after sign-in: a path of this app only (never `//host`, a scheme or a backslash trick)."""
    home = base_path() + "/"
    target = (target or home).strip()
    if not target.startswith("/") or target.startswith("//") or "\\" in target or any(ord(c) < 32 for c in target):
        return home
    if target.split("?")[0] in (SIGN_IN_PATH, base_path() + SIGN_IN_PATH):
        return home
    return target


def _sign_in_url(path: str, query: str) -> str:
    """The form's address, with where to go after it: `path` is the full path, base path included."""
    target = path + (f"?{query}" if query else "")
    return f"{base_path()}{SIGN_IN_PATH}?next={quote(safe_next(target), safe='')}"


async def redirect(send: Send, location: str, cross_site: bool = False, cookie: str | None = None) -> None:
    if cross_site:
        # A link followed from another site arrives without the SameSite=Strict cookie even when signed in;
        # the page reloads itself once, a same-site request that carries it.
        await html_page(send, 200, '<meta http-equiv="refresh" content="0">')
        return
    headers = [(b"location", location.encode("latin-1")), (b"content-length", b"0"),
               (b"cache-control", b"no-store")]
    if cookie is not None:
        headers.append((b"set-cookie", cookie.encode("latin-1")))
    await send({"type": "http.response.start", "status": 303, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


async def html_page(send: Send, status: int, body: str) -> None:
    data = body.encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/html; charset=utf-8"),
                            (b"content-length", str(len(data)).encode()),
                            (b"cache-control", b"no-store"), (b"x-frame-options", b"DENY"),
                            (b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'; "
                                                         b"form-action 'self'; frame-ancestors 'none'")]})
    await send({"type": "http.response.body", "body": data})
