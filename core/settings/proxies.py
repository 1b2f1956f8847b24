"""Which address a request comes from, for sign-in limits, lock-outs and logs: the connection's own peer, unless
that peer is a reverse proxy the user named in $PAPERGRAPH_TRUSTED_PROXIES (comma-separated addresses or CIDR
networks; none by default). Shared by the app's gate (pages/widgets/server_gate.py) and the API (core/api/).

X-Forwarded-For is written by whoever sends the request: from a client it is a lie it can vary at will (25 failed
sign-ins, each with another forged address, were 25 "addresses" and no lock-out). Only a proxy we trust appends
the address of the peer it saw, so the chain is read from the right: past our own proxies, the first hop that is
not one of them is the client. With no proxy trusted the header is never read.
"""
from __future__ import annotations

import ipaddress
import logging
import os

PROXIES_ENV = "PAPERGRAPH_TRUSTED_PROXIES"

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
log = logging.getLogger("papergraph.auth")


def parse_networks(text: str) -> list[Network]:
    """`10.0.0.5, 192.168.0.0/16, ::1`: each an address (one host) or a network. An entry that is neither is left
    out with a warning: trusting nothing more is the safe side of a typo (every client then shares the proxy's
    address, as before)."""
    networks: list[Network] = []
    for item in (part.strip() for part in (text or "").split(",")):
        if not item:
            continue
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            log.warning("%s: %r is not an address or network; not trusted", PROXIES_ENV, item)
    return networks


def trusted_proxies() -> list[Network]:
    """The proxies named in $PAPERGRAPH_TRUSTED_PROXIES now (read per call: tests and the CLI change it)."""
    return parse_networks(os.environ.get(PROXIES_ENV, ""))


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """A hop of X-Forwarded-For: `1.2.3.4`, `1.2.3.4:5678`, `::1`, `[::1]:5678`; None when it is none of those."""
    text = text.strip().strip('"')
    if text.startswith("["):
        text = text[1:].split("]", 1)[0]
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _trusted(address: ipaddress.IPv4Address | ipaddress.IPv6Address, trusted: list[Network]) -> bool:
    return any(address.version == net.version and address in net for net in trusted)


def is_trusted(peer: str, trusted: list[Network]) -> bool:
    """Is `peer` one of our proxies (whose X-Forwarded-Proto, too, can be believed)?"""
    address = _address(peer)
    return address is not None and _trusted(address, trusted)


def client_address(peer: str, forwarded_for: str | None, trusted: list[Network]) -> str:
    """The client's address: `peer` (the connection's), or, when `peer` is a trusted proxy, the first hop of
    `forwarded_for` from the right that is not a trusted proxy. A hop that is no address stops the walk at the
    proxy that passed it on (what it says cannot be checked)."""
    peer_address = _address(peer)
    if not trusted or not forwarded_for or peer_address is None or not _trusted(peer_address, trusted):
        return peer
    nearest = str(peer_address)
    for hop in reversed(forwarded_for.split(",")):
        address = _address(hop)
        if address is None:
            return nearest
        if not _trusted(address, trusted):
            return str(address)
        nearest = str(address)
    return nearest  # every hop is one of our proxies: the request began at the leftmost


__all__ = ["PROXIES_ENV", "Network", "client_address", "is_trusted", "parse_networks", "trusted_proxies"]
