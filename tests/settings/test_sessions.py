"""The server-side session table and the sign-in limits (core.service.sessions), on a real SQLite file in this
test's config folder: what a cookie is worth once forged, signed out, expired or its account gone, and how the
limits count and forget failures."""
from __future__ import annotations

import stat

import pytest

from core.service import sessions
from core.settings import accounts

PASSWORD = "editor-pass-1"


@pytest.fixture
def edna():
    accounts.add_account("edna", PASSWORD, "editor")


def test_the_table_is_private_and_holds_no_usable_cookie(edna):
    cookie = sessions.open_session("edna", "10.0.0.7")
    path = sessions.sessions_path()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    token = cookie.split(".")[0]
    assert token.encode() not in path.read_bytes()  # only its SHA-256 is stored
    assert sessions.account_for(cookie) == accounts.Account("edna", "editor")


def test_a_forged_or_altered_cookie_names_no_session(edna):
    cookie = sessions.open_session("edna")
    token, signature = cookie.split(".")
    altered = signature[:-1] + ("1" if signature[-1] == "0" else "0")  # always a different last digit
    for forged in (token, f"{token}.{'0' * 64}", f"{token}x.{signature}", f"{token}.{altered}", "",
                   "é.é", "." * 300):
        assert sessions.session_for(forged) is None, forged
    assert sessions.session_for(cookie) is not None


def test_sign_out_ends_the_session_for_every_copy_of_the_cookie(edna):
    cookie = sessions.open_session("edna")
    other_device = sessions.open_session("edna")
    assert sessions.close_session(cookie) and not sessions.close_session(cookie)
    assert sessions.account_for(cookie) is None and sessions.account_for(other_device) is not None
    assert sessions.close_sessions_of("edna") == 1 and sessions.account_for(other_device) is None


def test_a_session_expires_and_follows_its_account(edna):
    cookie = sessions.open_session("edna", now=1_000.0)
    assert sessions.session_for(cookie, now=1_000.0 + sessions.SESSION_TTL_S - 1) is not None
    assert sessions.session_for(cookie, now=1_000.0 + sessions.SESSION_TTL_S) is None
    fresh = sessions.open_session("edna")
    accounts.add_account("edna", PASSWORD, "viewer")
    assert sessions.account_for(fresh) == accounts.Account("edna", "viewer")  # demoted: the role is read afresh
    accounts.remove_account("edna")
    assert sessions.account_for(fresh) is None


@pytest.mark.slow  # ~30 bcrypt checks at cost 12
def test_failures_lock_the_account_and_the_address_until_they_leave_the_window(edna):
    now = 50_000.0
    for i in range(sessions.MAX_FAILURES_PER_ACCOUNT):
        assert sessions.sign_in("edna", f"wrong-{i}", "10.0.0.1", now=now).refused == "wrong"
    # Locked from that address: the right password is not even checked there.
    assert sessions.sign_in("edna", PASSWORD, "10.0.0.1", now=now + 1).refused == "locked"
    # Once the failures are older than the window, it signs in.
    later = now + sessions.WINDOW_S + 1
    ok = sessions.sign_in("edna", PASSWORD, "10.0.0.1", now=later)
    assert ok.refused is None and ok.account == accounts.Account("edna", "editor") and ok.cookie
    # One address guessing across names is limited by its own count.
    for i in range(sessions.MAX_FAILURES_PER_ADDRESS):
        assert sessions.sign_in(f"name{i}", "whatever-1", "10.0.0.9", now=later).refused == "wrong"
    assert sessions.sign_in("edna", PASSWORD, "10.0.0.9", now=later).refused == "locked"
    assert sessions.sign_in("edna", PASSWORD, "10.0.0.10", now=later).refused is None


@pytest.mark.slow
def test_a_lock_out_is_logged(edna, caplog):
    for i in range(sessions.MAX_FAILURES_PER_ACCOUNT):
        sessions.sign_in("edna", f"wrong-{i}", "10.0.0.1")
    with caplog.at_level("WARNING", logger="papergraph.auth"):
        sessions.sign_in("edna", PASSWORD, "10.0.0.1")
    assert "sign-in locked out (account): account 'edna' from 10.0.0.1" in caplog.text


@pytest.mark.slow  # ~25 bcrypt checks
def test_a_stranger_who_knows_the_account_name_cannot_lock_its_owner_out(edna):
    """Five wrong passwords for edna from a stranger's address lock edna out *for that address*; edna signs in from
    hers. Spread over more addresses, each stranger address still gets five tries at most, and its own cap."""
    now = 80_000.0
    for i in range(sessions.MAX_FAILURES_PER_ACCOUNT):
        assert sessions.sign_in("edna", f"wrong-{i}", "10.9.9.9", now=now).refused == "wrong"
    assert sessions.sign_in("edna", PASSWORD, "10.9.9.9", now=now + 1).refused == "locked"  # the stranger: locked
    own = sessions.sign_in("edna", PASSWORD, "10.0.0.7", now=now + 2)
    assert own.refused is None and own.account == accounts.Account("edna", "editor")
    # A second stranger address: its own five, then locked too; the owner is still not.
    for i in range(sessions.MAX_FAILURES_PER_ACCOUNT):
        assert sessions.sign_in("edna", f"again-{i}", "10.9.9.10", now=now + 3).refused == "wrong"
    assert sessions.sign_in("edna", "again-x", "10.9.9.10", now=now + 4).refused == "locked"
    assert sessions.sign_in("edna", PASSWORD, "10.0.0.7", now=now + 5).refused is None
