"""The gate's pure decisions, over many inputs: which Host headers name this app (DNS rebinding brings the
attacker's own name, never an address), where sign-in may send the browser afterwards (never off-site), and which
page origins may open the websocket or send a state-changing request (the server's own and named ones, exactly)."""
from __future__ import annotations

import pytest
from streamlit.testing.v1.util import patch_config_options

from core.settings.hosts import ORIGINS_ENV, origin_allowed
from pages.widgets.server_gate import HOSTS_ENV, host_allowed, safe_next

REBINDING = ["attacker.example:8501", "attacker.example", "localhost.attacker.example:8501",
             "127.0.0.1.nip.io:8501", "evil.localhost.example", "", "127.0.0.1:8501@attacker.example",
             "attacker.example:8501/x", "attacker.example:99999"]


@pytest.mark.parametrize("host", REBINDING)
def test_a_rebinding_host_name_is_refused_on_loopback(host):
    with patch_config_options({"server.address": "127.0.0.1", "server.allowedHosts": []}):
        assert not host_allowed(host)


@pytest.mark.parametrize("host", ["127.0.0.1:8501", "localhost:8501", "LOCALHOST", "[::1]:8501", "10.1.2.3:8501"])
def test_addresses_and_localhost_are_this_app(host):
    with patch_config_options({"server.address": "127.0.0.1", "server.allowedHosts": []}):
        assert host_allowed(host)


def test_names_it_is_served_under_are_accepted_and_only_those(monkeypatch):
    monkeypatch.setenv(HOSTS_ENV, "papers.lab.org, *.proxy.lab.org")
    with patch_config_options({"server.address": "0.0.0.0", "server.allowedHosts": ["intranet.example"]}):
        for host in ("papers.lab.org:443", "a.proxy.lab.org", "intranet.example:8501"):
            assert host_allowed(host), host
        for host in ("lab.org", "papers.lab.org.attacker.example", "proxy.lab.org.evil"):
            assert not host_allowed(host), host


@pytest.mark.parametrize("target, expected", [
    ("/document?doc=abc&page=3", "/document?doc=abc&page=3"), ("/", "/"), (None, "/"), ("", "/"),
    ("//attacker.example/x", "/"), ("https://attacker.example", "/"), ("/\\attacker.example", "/"),
    ("javascript:alert(1)", "/"), ("/ask\r\nSet-Cookie: x=1", "/"), ("/sign-in", "/"),
])
def test_sign_in_only_leads_back_into_this_app(target, expected):
    assert safe_next(target) == expected


@pytest.mark.parametrize("origin, own, allowed", [
    ("http://127.0.0.1:8501", "http://127.0.0.1:8501", True),
    ("http://LOCALHOST:8501", "http://localhost:8501", True),
    ("https://papers.lab.org", "https://papers.lab.org:443", True),  # default ports are the same origin
    (None, "http://127.0.0.1:8501", True),  # no Origin: not a browser's page
    ("http://localhost:3001", "http://127.0.0.1:8501", False),  # another local server's page (Streamlit let it in)
    ("http://127.0.0.1:9999", "http://127.0.0.1:8501", False),
    ("http://localhost:8501", "http://127.0.0.1:8501", False),  # another name is another origin
    ("https://127.0.0.1:8501", "http://127.0.0.1:8501", False),  # another scheme too
    ("null", "http://127.0.0.1:8501", False),  # a sandboxed frame, a file:// page
    ("", "http://127.0.0.1:8501", False),
    ("file://", "http://127.0.0.1:8501", False),
    ("http://127.0.0.1:8501/x", "http://127.0.0.1:8501", False),
    ("http://user@127.0.0.1:8501", "http://127.0.0.1:8501", False),
])
def test_only_the_servers_own_origin_passes_by_default(monkeypatch, origin, own, allowed):
    monkeypatch.delenv(ORIGINS_ENV, raising=False)
    assert origin_allowed(origin, own) is allowed


def test_origins_the_user_names_pass_exactly(monkeypatch):
    monkeypatch.setenv(ORIGINS_ENV, "https://notebook.lab.org, http://localhost:3001/, null, nonsense")
    own = "http://127.0.0.1:8501"
    for origin in ("https://notebook.lab.org", "https://notebook.lab.org:443", "http://localhost:3001"):
        assert origin_allowed(origin, own), origin
    for origin in ("http://notebook.lab.org", "https://a.notebook.lab.org", "http://localhost:3002", "null"):
        assert not origin_allowed(origin, own), origin
