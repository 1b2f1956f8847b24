"""Who is using the app, and may they change things: the sign-in gate app.py runs before any page, and the role
checks the pages make around editor controls. The accounts, hashes and the policy are core.settings.accounts.

On loopback without PAPERGRAPH_REQUIRE_SIGNIN the single local user is an editor, as before. Served to a network
(or with that switch), a session signs in once — a PaperGraph account (name + password) or Streamlit's own
OpenID Connect login (st.login, `[auth]` in .streamlit/secrets.toml) — or sees nothing but the sign-in page.
Roles are read again from the accounts file / secrets at every run, so removing an account or demoting it takes
effect at the session's next interaction.
"""
from __future__ import annotations

import time
from collections.abc import Mapping

import streamlit as st
from streamlit import config

from core.settings import accounts
from core.settings.accounts import EDITOR, Access, Account
from core.text.safe_markdown import md_escape
from pages.widgets import state

SESSION_KEY = "papergraph_signed_in"  # {"name": …}: never the password, never the role (read afresh each run)
FAILED_SIGN_IN_DELAY_S = 1.0  # slows password guessing in a session (bcrypt's cost slows it further)
LOCAL_USER = Account("local user", EDITOR)
_NAME_KEY, _PASSWORD_KEY, _FAILED_KEY = "auth_name", "auth_password", "auth_failed"


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


def _signed_in() -> Account | None:
    """The account of this session as the accounts file / secrets say now; None when not signed in (or no
    longer allowed)."""
    entry = st.session_state.get(SESSION_KEY)
    if isinstance(entry, dict) and entry.get("name"):
        try:
            account = accounts.find_account(entry["name"])
        except accounts.AccountError:
            account = None
        if account is None:
            st.session_state.pop(SESSION_KEY, None)  # removed since sign-in
        return account
    email = _oidc_email() if oidc_section() is not None else None
    role = accounts.oidc_role(email, *_role_lists()) if email else None
    return Account(email, role) if role else None


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


def _only_page(page, title: str) -> None:
    st.navigation([st.Page(page, title=title, url_path="sign-in", icon=":material/lock:")], position="hidden").run()
    st.stop()


def _refusal_page() -> None:
    st.title("PaperGraph")
    st.error(accounts.REFUSAL.format(address=server_address() or "every interface"), icon=":material/lock:")


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
    if accounts.has_accounts():
        _password_form()


def _check_password() -> None:
    """The form's callback: runs before the script, so it may empty the password widget's state at once (a
    callback is the one place Streamlit lets code reset a widget) — the typed password is not kept anywhere."""
    name = str(st.session_state.get(_NAME_KEY, "")).strip()
    password = str(st.session_state.get(_PASSWORD_KEY, ""))
    st.session_state[_PASSWORD_KEY] = ""
    account = accounts.verify(name, password)
    del password
    if account is None:
        time.sleep(FAILED_SIGN_IN_DELAY_S)
        st.session_state[_FAILED_KEY] = True
    else:
        st.session_state[SESSION_KEY] = {"name": account.name}


def _password_form() -> None:
    with st.form("auth_sign_in"):
        st.text_input("Name", key=_NAME_KEY, autocomplete="username")
        st.text_input("Password", type="password", key=_PASSWORD_KEY, autocomplete="current-password")
        st.form_submit_button("Sign in", type="primary", on_click=_check_password)
    if st.session_state.pop(_FAILED_KEY, False):
        st.error("Wrong name or password.")  # one message for an unknown name and a wrong password alike


def sidebar(account: Account) -> None:
    """Who is signed in, and Sign out; nothing for the local user of a loopback app."""
    if account is LOCAL_USER:
        return
    st.caption(f"Signed in as **{md_escape(account.name)}** ({account.role})")
    if st.button("Sign out", key="auth_sign_out"):
        if st.session_state.pop(SESSION_KEY, None) is None:
            st.logout()  # an OpenID Connect session: Streamlit's cookie, and a new session
        else:
            st.rerun()
