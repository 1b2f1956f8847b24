"""The HTTP side of sign-in, in front of Streamlit (serve.py mounts it): the /sign-in form that sets the session
cookie, and one ASGI middleware that every request and websocket passes through first.

Why in front, not in the script: a Streamlit script cannot set an HttpOnly cookie, and anything it keeps lives in
a session that a new websocket can resume by presenting its id. Here the browser gets a signed, HttpOnly,
SameSite=Strict cookie (core.service.sessions); each run of app.py reads it again (pages/widgets/auth.py).
streamlit-authenticator 0.4 was the other candidate: its cookie is written from JavaScript (so not HttpOnly), is a
self-contained JWT (sign-out cannot end the other copies), and it limits nothing across sessions.

The middleware, before Streamlit sees a request:
- refuses a Host header that is neither an address, nor localhost, nor a name the app is served under (DNS
  rebinding: a page on attacker.example whose name now points at 127.0.0.1 sends `Host: attacker.example`);
- when sign-in is required, lets no one without a live session cookie open the app's websocket, media, component
  or upload routes, and sends a page request to /sign-in with the page and its query kept in `next`;
- refuses an upload from anyone but an editor (or the loopback local user) before reading a byte of its body,
  and one that says it is larger than server.maxUploadSize;
- drops `clear_cache` commands on the websocket from anyone but an editor: they empty every session's caches;
- sends /library, the default page that Streamlit serves at the root only, to the root (no "Page not found").
"""
from __future__ import annotations

import asyncio
import html
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, quote, urlsplit

from streamlit import config

from core.service import sessions
from core.settings import accounts, hosts
from core.settings.accounts import Access, Account

log = logging.getLogger("papergraph.auth")

SIGN_IN_PATH = "/sign-in"
HOSTS_ENV = hosts.HOSTS_ENV  # extra names the app is reached under (a reverse proxy's), comma-separated
MAX_FORM_BYTES = 8 * 1024  # a sign-in form is a name, a password and a path
# Routes anyone may load: the sign-in form, the static bundle, the health check, the OpenID Connect hand-off.
_OPEN_PREFIXES = ("/static/", "/_stcore/health", "/_stcore/host-config", "/auth/login", "/auth/logout",
                  "/oauth2callback")
_OPEN_FILES = ("/favicon.png", "/manifest.json", SIGN_IN_PATH)
# Routes of the running app itself, never a page: refused outright rather than sent to the sign-in form.
_APP_PREFIXES = ("/_stcore/", "/media/", "/component/", "/app/static/")
_UPLOAD_PREFIX = "/_stcore/upload_file/"
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


def _header(scope: Scope, name: bytes) -> str | None:
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
        if not host_allowed(_header(scope, b"host")):
            log.warning("refused %s %s for Host %r (not a name this app is served under; set %s)",
                        scope["type"], path, _header(scope, b"host"), HOSTS_ENV)
            await self._refuse(scope, send, 421, "This app is not served under that host name.")
            return
        if path == SIGN_IN_PATH and scope["type"] == "http":
            await sign_in_route(scope, receive, send)
            return
        if path in _OPEN_FILES or path.startswith(_OPEN_PREFIXES):
            await self.app(scope, receive, send)
            return
        if path.rstrip("/") == DEFAULT_PAGE_PATH and scope["type"] == "http":  # not a "Page not found" dialog
            query = scope.get("query_string", b"").decode("latin-1")
            await _redirect(send, f"{base or ''}/" + (f"?{query}" if query else ""))
            return
        who = visitor(scope)
        if not who.may_enter:
            if scope["type"] == "http" and scope.get("method") in ("GET", "HEAD") and not path.startswith(
                    _APP_PREFIXES):
                await _redirect(send, _sign_in_url(full_path, scope.get("query_string", b"").decode("latin-1")),
                                cross_site=_header(scope, b"sec-fetch-site") == "cross-site")
                return
            await self._refuse(scope, send, 401, "Sign in first.")
            return
        if path.startswith(_UPLOAD_PREFIX) and scope.get("method") == "PUT":
            if not who.may_edit:
                log.warning("refused an upload from %s (not an editor)", _client(scope))
                await self._refuse(scope, send, 403, "Only an editor can upload.")
                return
            if _declared_length(scope) > config.get_option("server.maxUploadSize") * 1024 * 1024:
                await self._refuse(scope, send, 413, "File too large.")
                return
        if scope["type"] == "websocket":
            receive = _without_cache_commands(receive, scope)
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


def _client(scope: Scope) -> str:
    client = scope.get("client")
    return client[0] if client else "?"


def _declared_length(scope: Scope) -> int:
    try:
        return int(_header(scope, b"content-length") or 0)
    except ValueError:
        return 0  # Streamlit's own route answers a malformed length


def _without_cache_commands(receive: Receive, scope: Scope) -> Receive:
    """The websocket's messages, less any `clear_cache` sent by someone who may not edit *now*: the check is
    made again at each such command (rare), so an editor's tab signed out elsewhere loses the right too. Every
    message is parsed: a command padded with unknown fields is still one."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    async def filtered() -> dict:
        while True:
            message = await receive()
            data = message.get("bytes") if message.get("type") == "websocket.receive" else None
            if data:
                back = BackMsg()
                try:
                    back.ParseFromString(data)
                except Exception:
                    return message  # Streamlit closes the connection on a malformed frame
                if back.WhichOneof("type") == "clear_cache" and not visitor(scope).may_edit:
                    log.warning("dropped a clear_cache command from %s (not an editor)", _client(scope))
                    continue
            return message

    return filtered


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


async def _redirect(send: Send, location: str, cross_site: bool = False, cookie: str | None = None) -> None:
    if cross_site:
        # A link followed from another site arrives without the SameSite=Strict cookie even when signed in;
        # the page reloads itself once, a same-site request that carries it.
        await _html(send, 200, '<meta http-equiv="refresh" content="0">')
        return
    headers = [(b"location", location.encode("latin-1")), (b"content-length", b"0"),
               (b"cache-control", b"no-store")]
    if cookie is not None:
        headers.append((b"set-cookie", cookie.encode("latin-1")))
    await send({"type": "http.response.start", "status": 303, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


async def _html(send: Send, status: int, body: str) -> None:
    data = body.encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/html; charset=utf-8"),
                            (b"content-length", str(len(data)).encode()),
                            (b"cache-control", b"no-store"), (b"x-frame-options", b"DENY"),
                            (b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'; "
                                                         b"form-action 'self'; frame-ancestors 'none'")]})
    await send({"type": "http.response.body", "body": data})


def session_cookie(value: str, max_age: int, secure: bool) -> str:
    return (f"{sessions.COOKIE_NAME}={value}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Strict"
            + ("; Secure" if secure else ""))


MESSAGES = {
    "wrong": "Wrong name or password.",  # one message for an unknown name and a wrong password alike
    "locked": "Too many failed sign-ins for this account or from this address. Try again in "
              f"{sessions.WINDOW_S // 60} minutes.",
    "origin": "This form was sent from another site. Open the app's address and sign in there.",
}


def sign_in_page(next_path: str, message: str | None = None, name: str = "") -> str:
    from pages.widgets import auth

    section = auth.oidc_section()
    oidc_links = ""
    if section is not None:
        from streamlit.user_info import generate_login_redirect_url

        for provider in auth.oidc_providers(section):
            label = f"Sign in with {provider}" if provider else "Sign in with your organisation's account"
            url = generate_login_redirect_url(provider or "default")
            oidc_links += f'<p><a class="button" href="{html.escape(url)}">{html.escape(label)}</a></p>'
    form = ""
    if accounts.has_accounts():
        form = f"""<form method="post" action="{base_path()}{SIGN_IN_PATH}">
  <input type="hidden" name="next" value="{html.escape(next_path)}">
  <label for="name">Name</label><input id="name" name="name" autocomplete="username" value="{html.escape(name)}"
   autofocus required maxlength="64">
  <label for="password">Password</label><input id="password" name="password" type="password"
   autocomplete="current-password" required maxlength="256">
  <button type="submit">Sign in</button>
</form>"""
    error = f'<p class="error" role="alert">{html.escape(message)}</p>' if message else ""
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in · PaperGraph</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font-family: "Source Sans Pro", system-ui, sans-serif; color: #31333f; background: #fff; margin: 0; }}
main {{ max-width: 24rem; margin: 12vh auto; padding: 0 1rem; }}
h1 {{ font-size: 2rem; margin-bottom: .2rem; }} .sub {{ color: #6b6f7b; margin-top: 0; }}
label {{ display: block; margin: 1rem 0 .3rem; font-size: .9rem; }}
input {{ width: 100%; box-sizing: border-box; padding: .55rem .7rem; border: 1px solid #d5d7de; border-radius: .5rem;
        font-size: 1rem; background: #f0f2f6; }}
button, .button {{ display: inline-block; margin-top: 1.2rem; padding: .55rem 1.1rem; border: 0; border-radius: .5rem;
                  background: #1f77b4; color: #fff; font-size: 1rem; cursor: pointer; text-decoration: none; }}
.error {{ background: #ffecec; color: #7d1a1a; padding: .7rem 1rem; border-radius: .5rem; }}
</style></head><body><main>
<h1>Sign in</h1><p class="sub">PaperGraph</p>
{error}{oidc_links}{form}
</main></body></html>"""


async def _read_form(receive: Receive) -> dict[str, str] | None:
    body = b""
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body += message.get("body", b"")
        more = message.get("more_body", False)
        if len(body) > MAX_FORM_BYTES:
            return None
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    return {key: values[0] for key, values in fields.items()}


def _same_origin(scope: Scope) -> bool:
    """A sign-in posted from another site's page would sign the browser in as someone else (login CSRF)."""
    origin = _header(scope, b"origin")
    if origin is None:
        return True  # not a browser's post (browsers send Origin with every POST)
    return urlsplit(origin).netloc == (_header(scope, b"host") or "")


async def sign_in_route(scope: Scope, receive: Receive, send: Send) -> None:
    """GET: the form (or, already signed in, straight on to `next`). POST: check the password within the global
    limits (core.service.sessions.sign_in), set the cookie, go on to `next` — the deep link asked for."""
    from pages.widgets import auth

    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    if scope.get("method") == "POST":
        form = await _read_form(receive)
        if form is None:
            await _html(send, 413, sign_in_page("/", "The form was too large."))
            return
        target = safe_next(form.get("next"))
        if not _same_origin(scope):
            await _html(send, 403, sign_in_page(target, MESSAGES["origin"]))
            return
        if auth.policy() != Access.SIGN_IN or not accounts.has_accounts():
            await _redirect(send, target)
            return
        # In a worker thread: bcrypt's quarter of a second on the event loop would stall every websocket.
        outcome = await asyncio.to_thread(sessions.sign_in, form.get("name", ""), form.get("password", ""),
                                          _client(scope))
        if outcome.cookie is None:
            status = 429 if outcome.refused == "locked" else 401
            await _html(send, status, sign_in_page(target, MESSAGES[outcome.refused or "wrong"],
                                                   form.get("name", "")[:64]))
            return
        secure = bool(config.get_option("server.sslCertFile")) or _header(scope, b"x-forwarded-proto") == "https"
        await _redirect(send, target, cookie=session_cookie(outcome.cookie, sessions.SESSION_TTL_S, secure))
        return
    if scope.get("method") not in ("GET", "HEAD"):
        await _html(send, 405, "")
        return
    target = safe_next((query.get("next") or ["/"])[0])
    if visitor(scope).account is not None or auth.policy() != Access.SIGN_IN:
        await _redirect(send, target)
        return
    await _html(send, 200, sign_in_page(target))
