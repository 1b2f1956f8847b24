"""Whose address the API counts and logs: the connection's, unless it comes from a proxy the user names in
PAPERGRAPH_TRUSTED_PROXIES; then X-Forwarded-For read from the right up to the first address that is no named proxy
(core.settings.proxies). Anyone can send the header: believed from anyone, one client could pose as many (no rate
limit) or as a colleague (their lock-out, their name in the audit log)."""
from __future__ import annotations

import ipaddress
import logging

import httpx
import pytest

from core.api.config import ApiConfig
from core.library import open_library
from core.settings.proxies import client_address, trusted_proxies
from tests import graph_papers
from tests.api.helpers import LiveServer


def _nets(*entries: str) -> list:
    return [ipaddress.ip_network(e) for e in entries]


def test_the_setting_reads_addresses_and_networks_and_names_a_bad_entry():
    assert trusted_proxies({}) == []
    assert trusted_proxies({"PAPERGRAPH_TRUSTED_PROXIES": " 10.0.0.5, 10.1.0.0/16 ,::1,[fd00::]/8,"}) == _nets(
        "10.0.0.5/32", "10.1.0.0/16", "::1/128", "fd00::/8")
    for bad in ("proxy.lab.org", "10.0.0.0/33", "*"):
        with pytest.raises(ValueError, match="PAPERGRAPH_TRUSTED_PROXIES"):
            trusted_proxies({"PAPERGRAPH_TRUSTED_PROXIES": f"10.0.0.5,{bad}"})


@pytest.mark.parametrize("peer, forwarded, trusted, client", [
    ("203.0.113.9", "10.9.9.9", [], "203.0.113.9"),  # nothing named: the header is ignored
    ("203.0.113.9", "10.9.9.9", ["10.0.0.5/32"], "203.0.113.9"),  # not from the named proxy
    ("10.0.0.5", "198.51.100.7", ["10.0.0.5/32"], "198.51.100.7"),  # from it: its client
    ("10.0.0.5", "6.6.6.6, 198.51.100.7", ["10.0.0.5/32"], "198.51.100.7"),  # what the client wrote itself: ignored
    ("10.0.0.5", "198.51.100.7, 10.0.0.4", ["10.0.0.0/24"], "198.51.100.7"),  # two named proxies in a row
    ("10.0.0.5", "10.0.0.3, 10.0.0.4", ["10.0.0.0/24"], "10.0.0.3"),  # only proxies: the farthest one
    ("10.0.0.5", "unknown", ["10.0.0.5/32"], "10.0.0.5"),  # garbage from the proxy: the proxy itself
    ("10.0.0.5", "198.51.100.7, garbage, 10.0.0.4", ["10.0.0.0/24"], "10.0.0.4"),
    ("10.0.0.5", "[2001:db8::7]:4711", ["10.0.0.5/32"], "2001:db8::7"),
    ("10.0.0.5", "198.51.100.7:4711", ["10.0.0.5/32"], "198.51.100.7"),
    ("::ffff:10.0.0.5", "198.51.100.7", ["10.0.0.5/32"], "198.51.100.7"),  # a dual-stack socket's form
    ("10.0.0.5", None, ["10.0.0.5/32"], "10.0.0.5"),
    ("?", "198.51.100.7", ["10.0.0.5/32"], "?"),
])
def test_the_client_is_the_first_address_from_the_right_that_is_no_named_proxy(peer, forwarded, trusted, client):
    assert client_address(peer, forwarded, _nets(*trusted)) == client


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    return open_library(graph_papers.fast_workspace(tmp_path_factory.mktemp("forwarded") / "ws"))


def _statuses(client: httpx.Client, forwarded: list[str]) -> list[int]:
    return [client.get("/api/status", headers={"X-Forwarded-For": f}).status_code for f in forwarded]


def test_a_forged_header_from_an_unnamed_peer_does_not_escape_the_rate_limit(lib, monkeypatch):
    monkeypatch.delenv("PAPERGRAPH_TRUSTED_PROXIES", raising=False)
    # 12 a minute: a bucket of 2. Each call claims another address; all come from 127.0.0.1, which is no named proxy.
    with LiveServer(lib, ApiConfig(address_rate_per_minute=12)) as server, httpx.Client(base_url=server.url) as client:
        codes = _statuses(client, [f"198.51.100.{i}" for i in range(1, 5)])
    assert codes[:2] == [200, 200] and codes[-1] == 429, codes


def test_behind_a_named_proxy_each_client_has_its_own_limit_and_its_name_in_the_audit(lib, monkeypatch, caplog):
    monkeypatch.setenv("PAPERGRAPH_TRUSTED_PROXIES", "127.0.0.1")  # this test is the proxy
    with LiveServer(lib, ApiConfig(address_rate_per_minute=12)) as server, httpx.Client(base_url=server.url) as client:
        alice = _statuses(client, ["198.51.100.1"] * 3)
        # Bob's own bucket; a client writing its own header only adds to the left of what the proxy appends.
        bob = _statuses(client, ["198.51.100.2", "198.51.100.1, 198.51.100.2"])
        spoof = _statuses(client, ["198.51.100.3, 198.51.100.2"])  # claims 198.51.100.3, is bob (the rightmost)
        with caplog.at_level(logging.INFO, logger="papergraph.audit"):
            added = client.post("/api/papers", params={"filename": "note.md"}, content=b"# Note\n\nForwarded.\n",
                                headers={"X-Forwarded-For": "203.0.113.77", "Content-Type": "text/markdown"})
    assert alice == [200, 200, 429] and bob == [200, 200] and spoof == [429], (alice, bob, spoof)
    assert added.status_code == 202, added.text
    audit = [r.getMessage() for r in caplog.records if r.name == "papergraph.audit"]
    assert len(audit) == 1 and audit[0].endswith("from 203.0.113.77"), audit


def test_serve_refuses_a_setting_it_cannot_read(monkeypatch):
    from core.api.serve import api_config

    monkeypatch.setenv("PAPERGRAPH_TRUSTED_PROXIES", "the-proxy")
    with pytest.raises(SystemExit, match="PAPERGRAPH_TRUSTED_PROXIES: 'the-proxy'"):
        api_config("127.0.0.1", 0)
