"""Signed-in sessions of a shared app, kept on the server, and the global limit on password guesses.

A sign-in (serve.py's /sign-in form) opens a session: a random token goes to the browser in a signed, HttpOnly,
SameSite=Strict cookie, and only its SHA-256 is stored here, so the table cannot be replayed as cookies. Every run
of the app looks the cookie up again (pages/widgets/auth.py), so a reload or a second tab is still signed in,
and sign-out (which deletes the row) or expiry ends the session in every tab at its next action. Nothing about
sign-in lives in Streamlit's session state or is tied to the websocket's session id, which shows up in upload
URLs and proxy logs.

The table is a store (core/store/sqlite_sessions.py, built by core.library.session_store): an SQLite file beside
accounts.json ($PAPERGRAPH_CONFIG_DIR or ~/.config/papergraph), mode 0600, shared by every session and thread of
the server: so are the sign-in limits, which count failures per account *from each client address* and per client
address over a window. Counting per account alone let anyone who knew a colleague's account name lock it for the
whole window by typing five wrong passwords; now they only lock it for themselves (their own address), while the
colleague signs in from theirs, and the per-address cap still stops one address spraying guesses over many names.
Behind a reverse proxy the address is the client's only when the proxy is named (core.settings.proxies). An
attempt takes its place in the count *before* bcrypt runs, in one transaction, so a burst of parallel guesses
cannot all pass the check before the first failure is written.
"""
from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from core.library import SessionStore, session_store
from core.settings import accounts
from core.settings.accounts import Account
from core.settings.workspace import config_dir

SESSIONS_FILE = "sessions.sqlite"
COOKIE_NAME = "papergraph_session"
SESSION_TTL_S = 7 * 24 * 3600  # a working week of reloads and tabs; sign-out ends it sooner
# Failed sign-ins allowed in WINDOW_S before the account (from that address), or the address, is locked out until
# the oldest failure leaves the window. Five per account and address lets a person mistype; twenty per address lets a
# lab behind one NAT sign in.
WINDOW_S = 15 * 60
MAX_FAILURES_PER_ACCOUNT = 5  # per account *and* address: a stranger's failures never lock out the account's owner
MAX_FAILURES_PER_ADDRESS = 20
# An attempt whose bcrypt check never finished (a killed server) stops counting after this long.
PENDING_TTL_S = 60

log = logging.getLogger("papergraph.auth")


@dataclass(frozen=True)
class Session:
    name: str
    created: float
    expires: float


@dataclass(frozen=True)
class SignIn:
    """What a sign-in attempt came to: the account and its new cookie, or why not (`locked` or `wrong`)."""
    account: Account | None
    cookie: str | None
    refused: str | None  # None on success


def sessions_path() -> Path:
    return config_dir() / SESSIONS_FILE


def _store() -> SessionStore:
    """Built per call: the file follows $PAPERGRAPH_CONFIG_DIR as it is now (tests and the CLI point it elsewhere)."""
    return session_store(sessions_path())


def _sign(key: bytes, token: str) -> str:
    return hmac.new(key, token.encode("ascii"), hashlib.sha256).hexdigest()


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def _token_of(store: SessionStore, cookie: str | None) -> str | None:
    """The token of a cookie whose signature holds, else None (checked before any lookup by token)."""
    token, _, signature = (cookie or "").partition(".")
    if not token or len(cookie or "") > 256 or not token.isascii() or not signature.isascii():
        return None
    return token if hmac.compare_digest(_sign(store.cookie_key(), token), signature) else None


# --------------------------------------------------------------------------------------------------- sessions
def open_session(name: str, address: str = "", now: float | None = None) -> str:
    """A new session for `name`: the cookie value to hand to the browser (and nowhere else)."""
    now = time.time() if now is None else now
    token = secrets.token_urlsafe(32)
    store = _store()
    store.add(_digest(token), name, address, now, now + SESSION_TTL_S)
    return f"{token}.{_sign(store.cookie_key(), token)}"


def session_for(cookie: str | None, now: float | None = None) -> Session | None:
    """The live session a cookie names, or None (unsigned, forged, signed out, expired)."""
    if not cookie:
        return None
    now = time.time() if now is None else now
    store = _store()
    token = _token_of(store, cookie)
    if token is None:
        return None
    row = store.find(_digest(token))
    if row is None or row[2] <= now:
        return None
    return Session(*row)


def account_for(cookie: str | None) -> Account | None:
    """The account a cookie signs in, as the accounts file says now (removed or demoted since sign-in counts)."""
    session = session_for(cookie)
    if session is None:
        return None
    try:
        return accounts.find_account(session.name)
    except accounts.AccountError:
        return None


def close_session(cookie: str | None) -> bool:
    """Sign-out: the session ends for every tab and copy of the cookie. False when it was not open."""
    store = _store()
    token = _token_of(store, cookie)
    return token is not None and store.remove(_digest(token))


def close_sessions_of(name: str) -> int:
    """Every session of an account (its removal, a password reset)."""
    return _store().remove_all_of(name)


# ---------------------------------------------------------------------------------------------- sign-in limit
def _begin_attempt(name: str, address: str, now: float) -> int | None:
    """Take a place among the attempts counted against `name` from `address` and against `address`; None when
    either is locked out. Counted: failures in the window and attempts still being checked."""
    attempt, by_name, by_address = _store().begin_attempt(name, address, now, now - WINDOW_S, now - PENDING_TTL_S,
                                                          MAX_FAILURES_PER_ACCOUNT, MAX_FAILURES_PER_ADDRESS)
    if attempt is None:
        which = "account" if by_name >= MAX_FAILURES_PER_ACCOUNT else "address"
        log.warning("sign-in locked out (%s): account %r from %s; %d failed for the account from this address and "
                    "%d from the address in the last %d min", which, name, address, by_name, by_address, WINDOW_S // 60)
    return attempt


def _end_attempt(attempt: int, succeeded: bool) -> None:
    _store().end_attempt(attempt, succeeded)  # a right password does not count against anyone


def sign_in(name: str, password: str, address: str, now: float | None = None) -> SignIn:
    """Check a password within the limits; on success open a session. The name is counted as typed, so guessing
    at names that do not exist is limited too."""
    now = time.time() if now is None else now
    name = (name or "").strip()[:64]
    attempt = _begin_attempt(name, address or "?", now)
    if attempt is None:
        return SignIn(None, None, "locked")
    account = None
    try:
        account = accounts.verify(name, password)
    finally:
        _end_attempt(attempt, account is not None)
    if account is None:
        log.info("sign-in failed: account %r from %s", name, address)
        return SignIn(None, None, "wrong")
    log.info("signed in: %s (%s) from %s", account.name, account.role, address)
    return SignIn(account, open_session(account.name, address, now), None)
