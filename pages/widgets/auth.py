"""Who is using the app, and may they change things: the sign-in gate app.py runs before any page, and the role
checks the pages make around editor controls. The accounts, hashes and the policy are core.settings.accounts;
sessions and the sign-in limits core.service.sessions; the /sign-in form and the checks in front of Streamlit
pages/widgets/server_gate.py (serve.py).

On loopback without PAPERGRAPH_REQUIRE_SIGNIN the single local user is an editor, as before. Served to a network
(or with that switch), a browser signs in once — a PaperGraph account on the /sign-in form, which sets a signed
HttpOnly cookie, or Streamlit's own OpenID Connect login (st.login, `[auth]` in .streamlit/secrets.toml) — and
every run reads that cookie again: a reload or a second tab is still signed in, sign-out or expiry ends it in
every tab at its next action, and nothing about sign-in is kept in the session (a websocket that resumes a session
by its id brings its own cookies, or none). Roles are read again from the accounts file / secrets at every run,
so removing an account or demoting it takes effect at the session's next interaction.
"""
from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote, urlsplit

import streamlit as st
from streamlit import config

from core.query import history
from core.service import sessions
from core.settings import accounts
from core.settings.accounts import EDITOR, Access, Account
from core.text.safe_markdown import md_escape
from pages.widgets import server_gate, state

# AppTest cannot send cookies (st.context.cookies is empty there): its runs may put the cookie value under this
# key instead. Read only when Streamlit runs the script under AppTest (global.appTest), never on a server.
APPTEST_COOKIE_KEY = "apptest_session_cookie"
LOCAL_USER = Account("local user", EDITOR)
# The url_path of every page of app.py: while signed out, each shows the sign-in notice at its own address, so
# the URL (the deep link) stays as it was and Streamlit shows no "Page not found" over the notice.
PAGE_PATHS = ("library", "document", "ask", "compare", "search", "graph", "gallery", "results", "evaluate", "settings")


def server_address() -> str | None:
    # config.get_option, not st.get_option: the name AppTest's option patching reaches.
    return config.get_option("server.address")


def serves_loopback_only() -> bool:
    address = server_address()
    if not address and config.get_option("global.appTest"):
        return True  # AppTest runs the script with no server socket at all
    return accounts.is_loopback(address)


def oidc_section() -> Mapping | None:
    """The `[auth]` section of secrets.toml, or None (no secrets file, no section, or a file that cannot be read)."""
    try:
        if not st.secrets.load_if_toml_exists():
            return None
        section = st.secrets.get("auth")
    except Exception:  # a broken secrets file is no sign-in method; the refusal page then says what to set up
        return None
    return section if isinstance(section, Mapping) and section else None


def oidc_providers(section: Mapping) -> list[str | None]:
    """None for the `[auth]` section's own provider; the names of its `[auth.NAME]` sub-sections."""
    named = [name for name, value in section.items() if isinstance(value, Mapping) and "client_id" in value]
    return ([None] if "client_id" in section else []) + named


def _role_lists() -> tuple[list[str], list[str]]:
    try:
        section = st.secrets.get("papergraph") or {}
    except Exception:
        section = {}
    return list(section.get("editors", [])), list(section.get("viewers", []))


def policy() -> Access:
    return accounts.access_policy(serves_loopback_only(), oidc_section() is not None or accounts.has_accounts())


def _oidc_email() -> str | None:
    try:
        return st.user.get("email") if st.user.is_logged_in else None
    except Exception:  # no [auth] section: st.user has no sign-in state
        return None


def _in_apptest() -> bool:
    return bool(config.get_option("global.appTest"))


def session_cookie() -> str | None:
    """The session cookie this session's browser sent when its websocket opened (a reload or a new tab opens a
    new websocket, with the cookie as it is then)."""
    if _in_apptest():
        return st.session_state.get(APPTEST_COOKIE_KEY)
    return st.context.cookies.get(sessions.COOKIE_NAME)


def _signed_in_as() -> tuple[Account, str] | None:
    """The account of this browser as the sessions table and accounts file / secrets say now, and its owner name
    in histories (core.query.history); None when not signed in (or signed out, expired, no longer allowed)."""
    account = sessions.account_for(session_cookie())
    if account is not None:
        return account, history.account_owner(account.name)
    email = _oidc_email() if oidc_section() is not None else None
    role = accounts.oidc_role(email, *_role_lists()) if email else None
    return (Account(email, role), history.oidc_owner(email)) if role else None


def _signed_in() -> Account | None:
    signed_in = _signed_in_as()
    return signed_in[0] if signed_in else None


def history_owner() -> str | None:
    """Whose questions this run keeps and lists: the loopback local user's, or the signed-in account's."""
    access = policy()
    if access in (Access.OPEN, Access.INSECURE):
        return history.LOCAL_OWNER
    signed_in = _signed_in_as() if access == Access.SIGN_IN else None
    return signed_in[1] if signed_in else None


def current_account() -> Account | None:
    """Who this run serves, or None when it serves no one (not signed in, or refused)."""
    access = policy()
    if access in (Access.OPEN, Access.INSECURE):
        return LOCAL_USER
    return _signed_in() if access == Access.SIGN_IN else None


def is_editor() -> bool:
    account = current_account()
    return bool(account and account.is_editor)


def require_editor() -> None:
    """At the point of every editor action: hidden buttons are not a permission check."""
    if not is_editor():
        st.error("Only an editor can do this. Nothing was changed.", icon=":material/lock:")
        st.stop()


# ------------------------------------------------------------------------------------------------ the gate
def gate() -> Account:
    """Run before st.navigation: returns the account the pages serve, or shows only the refusal / sign-in page
    and stops the run. Either way st.navigation is called, so Streamlit never falls back to listing pages/."""
    if not server_gate.INSTALLED and not _in_apptest():
        _only_page(_not_served_page, "Start PaperGraph with make run")
    access = policy()
    if access in (Access.OPEN, Access.INSECURE):
        return LOCAL_USER  # INSECURE: every page's page_guard shows the banner
    if access == Access.REFUSED:
        _only_page(_refusal_page, "Not shared safely")
    account = _signed_in()
    if account is None:
        _only_page(_sign_in_page, "Sign in")
    return account


def page_guard() -> Account:
    """The first line of every page. app.py's gate has normally stopped a run before any page, but Streamlit runs
    a page file on its own, without app.py, while it still treats pages/ as a legacy multipage folder (a deep
    link as the first request after a server start; AppTest after switch_page). On a server
    state.ensure_entry_point() reruns such a request through app.py; the checks below hold either way: the page
    shows the refusal or the sign-in form itself."""
    state.ensure_entry_point()
    access = policy()
    if access == Access.REFUSED:
        _refusal_page()
        st.stop()
    account = current_account()
    if account is None:
        _sign_in_page()
        st.stop()
    if access == Access.INSECURE:
        st.warning(accounts.INSECURE_BANNER, icon=":material/warning:")
    return account


def fragment_guard() -> None:
    """The first line of every fragment and dialog. Their reruns (an Ask or Compare form, a citation's dialog, a
    list that refreshes itself) run that function alone: neither app.py's gate nor the page's guard. Signed out
    since, in this tab or another, or expired: the whole app reruns instead, and its gate shows the sign-in page.
    The server's gate makes such a run a full one before it starts (pages/widgets/server_gate.py); this holds
    wherever a run gets past it (AppTest, a future route)."""
    if policy() == Access.SIGN_IN and _signed_in() is None:
        st.rerun(scope="app")


def _only_page(page, title: str) -> None:
    st.navigation([st.Page(page, title=title, url_path=path, icon=":material/lock:", default=i == 0)
                   for i, path in enumerate(PAGE_PATHS)], position="hidden").run()
    st.stop()


def _not_served_page() -> None:
    st.title("PaperGraph")
    st.error("Start PaperGraph with `make run` (`streamlit run serve.py`): run on its own, app.py has no host-name "
             "check and no sign-in in front of it, so it shows nothing.", icon=":material/lock:")


def _refusal_page() -> None:
    st.title("PaperGraph")
    st.error(accounts.REFUSAL.format(address=server_address() or "every interface"), icon=":material/lock:")


def _here() -> str:
    """This page's path and query: where sign-in leads back to."""
    path = urlsplit(st.context.url or "").path or "/"
    query = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in st.query_params.to_dict().items())
    return path + (f"?{query}" if query else "")


def _sign_in_page() -> None:
    st.title("Sign in")
    section = oidc_section()
    email = _oidc_email() if section is not None else None
    if email:  # signed in with the identity provider, but on neither allow-list
        st.error("This account may not use this PaperGraph. Ask its owner to add your address to the editors or "
                 "viewers in .streamlit/secrets.toml.")
        if st.button("Sign out", key="auth_oidc_sign_out"):
            st.logout()
        return
    for provider in oidc_providers(section) if section is not None else []:
        label = f"Sign in with {provider}" if provider else "Sign in with your organisation's account"
        if st.button(label, key=f"auth_oidc_{provider or 'default'}", type="primary"):
            st.login(provider)
    if not accounts.has_accounts():
        return
    if session_cookie():
        st.info("You were signed out (here or in another tab), or your session expired.", icon=":material/lock:")
    # A plain link (st.html, no target): the sign-in form is a page of the server, opened in this tab, and it
    # comes back to this page and query once signed in.
    url = f"{server_gate.base_path()}{server_gate.SIGN_IN_PATH}?next={quote(server_gate.safe_next(_here()), safe='')}"
    st.html(f'<a href="{url}" style="font-size:1.1rem">Sign in to PaperGraph</a>')


def sidebar(account: Account) -> None:
    """Who is signed in, and Sign out; nothing for the local user of a loopback app."""
    if account is LOCAL_USER:
        return
    st.caption(f"Signed in as **{md_escape(account.name)}** ({account.role})")
    if st.button("Sign out", key="auth_sign_out"):
        # Deleted on the server: the cookie, in this tab, any other tab or anyone's copy, names nothing now.
        if sessions.close_session(session_cookie()):
            st.rerun()
        else:
            st.logout()  # an OpenID Connect session: Streamlit's cookie, and a new session
