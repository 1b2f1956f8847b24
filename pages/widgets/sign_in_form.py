"""The /sign-in form of pages/widgets/server_gate.py: its page, and the route that checks a password within the
global limits (core.service.sessions), sets the signed session cookie and goes on to the page asked for. A form
posted from another site's page is refused (login CSRF), by the gate's own origin rule."""
from __future__ import annotations

import asyncio
import html
from urllib.parse import parse_qs

from streamlit import config

from core.service import sessions
from core.settings import accounts
from core.settings.accounts import Access
from pages.widgets import server_gate
from pages.widgets.server_gate import Receive, Scope, Send

MAX_FORM_BYTES = 8 * 1024  # a sign-in form is a name, a password and a path


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
        form = f"""<form method="post" action="{server_gate.base_path()}{server_gate.SIGN_IN_PATH}">
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


async def sign_in_route(scope: Scope, receive: Receive, send: Send) -> None:
    """GET: the form (or, already signed in, straight on to `next`). POST: check the password within the global
    limits (core.service.sessions.sign_in), set the cookie, go on to `next` — the deep link asked for."""
    from pages.widgets import auth

    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    if scope.get("method") == "POST":
        form = await _read_form(receive)
        if form is None:
            await server_gate.html_page(send, 413, sign_in_page("/", "The form was too large."))
            return
        target = server_gate.safe_next(form.get("next"))
        if not server_gate.origin_ok(scope):
            await server_gate.html_page(send, 403, sign_in_page(target, MESSAGES["origin"]))
            return
        if auth.policy() != Access.SIGN_IN or not accounts.has_accounts():
            await server_gate.redirect(send, target)
            return
        # In a worker thread: bcrypt's quarter of a second on the event loop would stall every websocket.
        outcome = await asyncio.to_thread(sessions.sign_in, form.get("name", ""), form.get("password", ""),
                                          server_gate.client_address(scope))
        if outcome.cookie is None:
            status = 429 if outcome.refused == "locked" else 401
            await server_gate.html_page(send, status, sign_in_page(target, MESSAGES[outcome.refused or "wrong"],
                                                   form.get("name", "")[:64]))
            return
        # Any X-Forwarded-Proto: https will do here: a client that lies about it only keeps its own cookie off http.
        secure = bool(config.get_option("server.sslCertFile")) or server_gate.own_origin(scope).startswith("https:") \
            or server_gate.header(scope, b"x-forwarded-proto") == "https"
        await server_gate.redirect(send, target, cookie=session_cookie(outcome.cookie, sessions.SESSION_TTL_S, secure))
        return
    if scope.get("method") not in ("GET", "HEAD"):
        await server_gate.html_page(send, 405, "")
        return
    target = server_gate.safe_next((query.get("next") or ["/"])[0])
    if server_gate.visitor(scope).account is not None or auth.policy() != Access.SIGN_IN:
        await server_gate.redirect(send, target)
        return
    await server_gate.html_page(send, 200, sign_in_page(target))
