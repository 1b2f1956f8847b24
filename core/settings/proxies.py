"""Which reverse proxies a PaperGraph server believes about the client's address, shared by the API (core/api/guard.py)
and the app's gate (pages/widgets/server_gate.py).

`X-Forwarded-For` is a header anyone can send. Rate limits, sign-in lock-outs and logs key on the client's address, so
a server that took the header from anyone would let one client pose as many (no rate limit, no lock-out) or as a
colleague (locking them out, blaming them in the logs). The header is believed only when the connection comes from a
proxy the user names in PAPERGRAPH_TRUSTED_PROXIES (comma-separated addresses or CIDR networks; none by default), and
then only as far back as the chain stays within named proxies: each of them appends the address it was called from,
so the first address from the right that is not a named proxy is the client.
"""
from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable

TRUSTED_PROXIES_ENV = "PAPERGRAPH_TRUSTED_PROXIES"
PROXIES_ENV = TRUSTED_PROXIES_ENV  # the app gate's name for it

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def trusted_proxies(env: dict | None = None) -> list[Network]:
    """The networks of PAPERGRAPH_TRUSTED_PROXIES (`10.0.0.5`, `10.0.0.0/24`, `::1`), read per call (tests and the
    CLI change it); [] when unset. ValueError names an entry that is neither: a typo must not silently trust nobody,
    or worse, be read as someone else (`core serve` and `make run`'s preflight refuse to start on it)."""
    return parse_networks((os.environ if env is None else env).get(TRUSTED_PROXIES_ENV, ""))


def parse_networks(value: str) -> list[Network]:
    networks = []
    for entry in (e.strip() for e in value.split(",")):
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry.replace("[", "").replace("]", ""), strict=False))
        except ValueError:
            raise ValueError(f"{TRUSTED_PROXIES_ENV}: {entry[:100]!r} is not an IP address or network (give e.g. "
                             "10.0.0.5 or 10.0.0.0/24, comma-separated)") from None
    return networks


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An address as proxies write it: `1.2.3.4`, `2001:db8::1`, `[2001:db8::1]`, or with a port (`1.2.3.4:5678`,
    `[2001:db8::1]:5678`); None for anything else (`unknown`, a name, garbage)."""
    text = text.strip()
    if text.startswith("["):
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:  # IPv4 with a port; a bare IPv6 address has several colons
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:10.0.0.5 from a dual-stack socket is 10.0.0.5
    return mapped or address


def _trusted(address, trusted: Iterable[Network]) -> bool:
    return any(address.version == network.version and address in network for network in trusted)


def is_trusted(peer: str, trusted: Iterable[Network]) -> bool:
    """Is `peer` one of our proxies (whose X-Forwarded-Proto, too, can be believed)?"""
    address = _address(peer or "")
    return address is not None and _trusted(address, list(trusted))


def client_address(peer: str, forwarded_for: str | None, trusted: Iterable[Network]) -> str:
    """The client's address: `peer` (the connection's far end) unless it is a named proxy; then the
    `X-Forwarded-For` chain (several headers joined with commas) read from the right, skipping named proxies, up to
    the first address that is not one. An entry that is not an address stops the walk at the proxy that wrote it
    (the nearest address known to be true); a chain made only of named proxies gives its leftmost entry."""
    trusted = list(trusted)
    nearest = _address(peer or "")
    if nearest is None or not trusted or not _trusted(nearest, trusted) or not forwarded_for:
        return peer
    for entry in reversed(forwarded_for.split(",")):
        address = _address(entry)
        if address is None:
            break
        nearest = address
        if not _trusted(address, trusted):
            break
    return str(nearest)


__all__ = ["PROXIES_ENV", "TRUSTED_PROXIES_ENV", "Network", "client_address", "is_trusted", "parse_networks",
           "trusted_proxies"]
