"""The Settings page's API tokens (core/settings/tokens.py), for `python -m core serve`: create one (shown once),
see which exist, revoke. A signed-in account manages its own; the local user on loopback (who could run
`python -m core users token` anyway) those of every account; an app opened to the network without sign-in none."""
from __future__ import annotations

import time

import streamlit as st

from core.settings import accounts, tokens
from core.settings.accounts import EDITOR, ROLES, Access
from pages.widgets import auth

NEW_TOKEN_KEY = "api_token_created"  # the token just made, shown in the next run only


def _owners() -> list[accounts.Account]:
    access = auth.policy()
    if access == Access.OPEN:
        return accounts.list_accounts()
    account = auth.current_account()
    if access == Access.SIGN_IN and account is not None:
        found = accounts.find_account(account.name)  # not an OpenID Connect identity: those have no tokens
        return [found] if found else []
    return []


def api_tokens_panel() -> None:
    st.subheader("API tokens")
    st.caption("For the API (`python -m core serve`: REST, MCP and OpenAI-compatible chat). Off loopback every "
               "call needs one, as `Authorization: Bearer <token>`. Only a hash of each token is kept.")
    try:
        owners = _owners()
        mine = [t for t in tokens.list_tokens() if t.name in {o.name for o in owners}]
    except (accounts.AccountError, tokens.TokenError) as exc:
        st.error(str(exc))
        return
    if not owners:
        st.info("Tokens belong to accounts: add one with `python -m core users add NAME --role editor` and sign "
                "in with it, or run `python -m core users token create NAME`.")
        return
    if created := st.session_state.pop(NEW_TOKEN_KEY, None):
        st.warning("Copy the token now: it is shown this once.", icon=":material/key:")
        st.code(created, language=None)
    for token in mine:
        until = time.strftime("%Y-%m-%d", time.gmtime(token.expires)) if token.expires else "never"
        state = " — expired" if token.expired() else ""
        left, right = st.columns([4, 1])
        left.markdown(f"`{token.id}` · {token.name} · {token.role} · expires {until}{state}")
        if right.button("Revoke", key=f"revoke_token_{token.id}"):
            auth.require_editor()
            tokens.revoke_token(token.id)
            st.rerun()
    with st.form("api_token_form", clear_on_submit=True):
        names = [o.name for o in owners]
        name = st.selectbox("Account", names, key="api_token_account", disabled=len(names) == 1)
        role = st.selectbox("Scope", ROLES[::-1], key="api_token_scope",
                            help="viewer: search, ask and read; editor: also upload and delete (only for an "
                                 "editor's account)")
        days = st.number_input("Expires after (days, 0: never)", min_value=0, max_value=3650, value=90,
                               key="api_token_days")
        if st.form_submit_button("Create token"):
            auth.require_editor()
            owner = next(o for o in owners if o.name == name)
            if role == EDITOR and not owner.is_editor:
                st.error(f"{name} is a viewer: a token cannot do more than its account.")
                return
            try:
                _, secret = tokens.create_token(name, role, float(days) or None)
            except tokens.TokenError as exc:
                st.error(str(exc))
                return
            st.session_state[NEW_TOKEN_KEY] = secret
            st.rerun()
