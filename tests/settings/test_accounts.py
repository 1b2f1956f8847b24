"""Accounts and the access policy (core/settings/accounts.py): hashes only on disk, 0600, outside the repository;
one answer for a wrong name and a wrong password; who is served openly, who signs in, who is refused."""
from __future__ import annotations

import json
import stat

import pytest

from core.settings import accounts
from core.settings.accounts import Access, AccountError, access_policy, is_loopback, oidc_role
from tests.paths import REPO


def test_accounts_file_holds_hashes_only_with_mode_0600(tmp_path):
    accounts.add_account("edna", "correct horse 1", "editor")
    accounts.add_account("vera", "viewer-pass-2", "viewer")
    path = accounts.accounts_path()
    assert path.parent == tmp_path / "config"  # the per-test PAPERGRAPH_CONFIG_DIR (tests/conftest.py)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert "correct horse" not in text and "viewer-pass" not in text
    assert json.loads(text)["users"]["edna"]["hash"].startswith("$2b$12$")
    assert [(a.name, a.role) for a in accounts.list_accounts()] == [("edna", "editor"), ("vera", "viewer")]


def test_verify_is_one_answer_for_a_wrong_name_and_a_wrong_password():
    accounts.add_account("edna", "correct horse 1", "editor")
    assert accounts.verify("edna", "correct horse 1") == accounts.Account("edna", "editor")
    assert accounts.verify("edna", "correct horse 2") is None
    assert accounts.verify("nobody", "correct horse 1") is None
    assert accounts.verify("edna", "") is None
    assert accounts.verify("edna", "x" * 100) is None
    accounts.add_account("edna", "a new password", "viewer")  # a reset: new password and role
    assert accounts.verify("edna", "correct horse 1") is None
    assert accounts.verify("edna", "a new password").role == "viewer"
    assert accounts.remove_account("edna") and not accounts.remove_account("edna")
    assert not accounts.has_accounts()


@pytest.mark.parametrize("name, password, role", [
    ("", "long enough 1", "editor"), ("bad name", "long enough 1", "editor"), ("<script>", "long enough 1", "viewer"),
    ("ok", "short", "viewer"), ("ok", "é" * 40, "viewer"), ("ok", "long enough 1", "admin")])
def test_bad_names_passwords_and_roles_are_refused(name, password, role):
    with pytest.raises(AccountError):
        accounts.add_account(name, password, role)
    assert not accounts.accounts_path().exists()


def test_accounts_are_never_written_inside_the_repository_or_the_workspace(monkeypatch, tmp_path):
    monkeypatch.setenv("PAPERGRAPH_CONFIG_DIR", str(REPO / "config-in-repo"))
    with pytest.raises(AccountError, match="inside the repository"):
        accounts.add_account("edna", "correct horse 1", "editor")
    assert not (REPO / "config-in-repo").exists()
    monkeypatch.setenv("PAPERGRAPH_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.setenv("PAPERGRAPH_CONFIG_DIR", str(tmp_path / "ws" / "config"))
    with pytest.raises(AccountError, match="workspace"):
        accounts.add_account("edna", "correct horse 1", "editor")


def test_an_unreadable_accounts_file_never_opens_the_app():
    path = accounts.accounts_path()
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert accounts.has_accounts()  # so the policy asks for sign-in, and nobody can sign in
    assert accounts.verify("edna", "correct horse 1") is None


@pytest.mark.parametrize("address, loopback", [
    ("127.0.0.1", True), ("127.0.1.1", True), ("localhost", True), ("::1", True), ("[::1]", True),
    ("0.0.0.0", False), ("::", False), ("", False), (None, False), ("192.168.1.20", False), ("example.org", False),
    ("unix:///tmp/papergraph.sock", False)])
def test_loopback_addresses(address, loopback):
    assert is_loopback(address) is loopback


def test_access_policy():
    assert access_policy(True, False, {}) == Access.OPEN
    assert access_policy(True, True, {}) == Access.OPEN
    assert access_policy(True, True, {"PAPERGRAPH_REQUIRE_SIGNIN": "1"}) == Access.SIGN_IN
    assert access_policy(True, False, {"PAPERGRAPH_REQUIRE_SIGNIN": "1"}) == Access.REFUSED
    assert access_policy(False, True, {}) == Access.SIGN_IN
    assert access_policy(False, True, {"PAPERGRAPH_INSECURE": "1"}) == Access.SIGN_IN  # accounts win
    assert access_policy(False, False, {}) == Access.REFUSED
    assert access_policy(False, False, {"PAPERGRAPH_INSECURE": "0"}) == Access.REFUSED
    assert access_policy(False, False, {"PAPERGRAPH_INSECURE": "1"}) == Access.INSECURE


def test_oidc_roles_come_from_the_allow_lists_only():
    editors, viewers = ["Ed@Example.org"], ["*@example.org", "guest@elsewhere.net"]
    assert oidc_role("ed@example.org", editors, viewers) == "editor"
    assert oidc_role("vi@example.org", editors, viewers) == "viewer"
    assert oidc_role("guest@elsewhere.net", editors, viewers) == "viewer"
    assert oidc_role("someone@gmail.com", editors, viewers) is None
    assert oidc_role("x@badexample.org", editors, viewers) is None
    assert oidc_role("x@example.org.evil.com", editors, viewers) is None
    assert oidc_role(None, editors, viewers) is None and oidc_role("", ["*@"], ["*@"]) is None


def _preflight(host: str, **env: str):
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "core", "users", "preflight", "--host", host], cwd=REPO,
                          env=dict(os.environ, **env), capture_output=True, text=True, timeout=120)


def test_make_run_refuses_to_serve_the_network_without_sign_in(tmp_path, monkeypatch):
    """`make run` asks `core users preflight` first: exposed without accounts or OIDC, the server never starts."""
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.streamlit/secrets.toml of the developer's
    refused = _preflight("0.0.0.0")
    assert refused.returncode == 1
    assert refused.stderr.startswith("refusing to start: PaperGraph is served to the network (server address "
                                     "0.0.0.0) and no sign-in is configured")
    assert _preflight("0.0.0.0", PAPERGRAPH_INSECURE="1").returncode == 0  # the explicit, bannered choice
    assert _preflight("127.0.0.1").returncode == 0
    accounts.add_account("edna", "correct horse 1", "editor")
    assert _preflight("0.0.0.0").returncode == 0  # an account to sign in with
