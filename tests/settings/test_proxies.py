"""core.settings.proxies: whose address a request is counted against. X-Forwarded-For is the sender's own claim;
only a proxy the user names (PAPERGRAPH_TRUSTED_PROXIES) is believed, and the chain is read from the right."""
from __future__ import annotations

import ipaddress

import pytest

from core.settings.proxies import PROXIES_ENV, client_address, is_trusted, parse_networks, trusted_proxies

LOOPBACK = parse_networks("127.0.0.1, ::1")


def test_nothing_is_trusted_by_default(monkeypatch):
    monkeypatch.delenv(PROXIES_ENV, raising=False)
    assert trusted_proxies() == []
    # The forged header of a client on loopback (uvicorn's default trusted it): the peer, whatever it says.
    for forged in ("203.0.113.9", "203.0.113.9, 127.0.0.1", "", None, "garbage"):
        assert client_address("127.0.0.1", forged, trusted_proxies()) == "127.0.0.1"


def test_the_variable_names_addresses_and_networks_and_a_typo_is_refused_by_name(monkeypatch):
    monkeypatch.setenv(PROXIES_ENV, " 10.0.0.5 , 192.168.0.0/16,::1, not-an-ip, 10.0.0.0/33,")
    with pytest.raises(ValueError, match="not-an-ip"):
        trusted_proxies()
    monkeypatch.setenv(PROXIES_ENV, " 10.0.0.5 , 192.168.0.0/16,::1,")
    assert trusted_proxies() == [ipaddress.ip_network("10.0.0.5/32"), ipaddress.ip_network("192.168.0.0/16"),
                                 ipaddress.ip_network("::1/128")]
    assert is_trusted("192.168.4.4", trusted_proxies()) and not is_trusted("10.0.0.6", trusted_proxies())
    assert not is_trusted("not-an-ip", trusted_proxies())


@pytest.mark.parametrize("peer, forwarded, expected", [
    ("127.0.0.1", "203.0.113.9", "203.0.113.9"),  # our proxy says who it saw
    ("127.0.0.1", "198.51.100.1, 203.0.113.9", "203.0.113.9"),  # a hop the client prepended is not believed
    ("127.0.0.1", "203.0.113.9, 127.0.0.1", "203.0.113.9"),  # through two of our proxies
    ("127.0.0.1", "127.0.0.1, 127.0.0.1", "127.0.0.1"),  # only our proxies: where it began
    ("127.0.0.1", "203.0.113.9:4431", "203.0.113.9"),  # with a port
    ("::1", "[2001:db8::7]:443", "2001:db8::7"),
    ("127.0.0.1", "198.51.100.1, not-an-address", "127.0.0.1"),  # unreadable: the proxy that passed it on
    ("127.0.0.1", "", "127.0.0.1"),
    ("127.0.0.1", None, "127.0.0.1"),
    ("203.0.113.50", "198.51.100.1", "203.0.113.50"),  # not our proxy: its header is its own claim
    ("unix-socket", "198.51.100.1", "unix-socket"),
])
def test_the_chain_is_read_from_the_right_past_our_own_proxies(peer, forwarded, expected):
    assert client_address(peer, forwarded, LOOPBACK) == expected
