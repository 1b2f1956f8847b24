"""Which Host headers a PaperGraph server answers (against DNS rebinding), shared by the app's gate
(pages/widgets/server_gate.py) and the API (core/api/): an IP address, localhost, or a name it is served under.

A page on attacker.example whose name now resolves to 127.0.0.1 sends `Host: attacker.example`; it can only bring
its own name, never an address, so addresses are always accepted and names only when configured.
"""
from __future__ import annotations

import functools
import ipaddress
import os
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

from core.settings.accounts import is_loopback

HOSTS_ENV = "PAPERGRAPH_HOSTS"  # extra names the server is reached under (a reverse proxy's), comma-separated


@functools.cache
def machine_names() -> frozenset[str]:
    """Asked once: getfqdn() may wait on DNS, and every request checks its Host."""
    return frozenset({socket.gethostname().lower(), socket.getfqdn().lower()})


def is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False


def served_names(address: str, extra: Iterable[str] = ()) -> set[str]:
    """localhost, $PAPERGRAPH_HOSTS, `extra` (e.g. Streamlit's server.allowedHosts), the listening address when it
    is a name, and the machine's own names when served to a network."""
    names = {"localhost"}
    names |= {n.strip().lower().rstrip(".") for n in os.environ.get(HOSTS_ENV, "").split(",") if n.strip()}
    names |= {str(n).strip().lower().rstrip(".") for n in extra if str(n).strip()}
    address = (address or "").strip().strip("[]").lower()
    if address and not is_address(address):
        names.add(address)
    if not is_loopback(address):
        names |= machine_names()
    return names


def host_allowed(host_header: str | None, names: Iterable[str]) -> bool:
    """An IP address, or one of `names` (`*` accepts any host, `*.lab.org` any name under lab.org)."""
    if not host_header:
        return False
    try:
        parts = urlsplit(f"//{host_header}")
        hostname, _ = parts.hostname, parts.port
    except ValueError:
        return False
    if not hostname or parts.username or parts.password or parts.path or parts.query:
        return False
    hostname = hostname.lower().rstrip(".")
    if is_address(hostname):
        return True
    for name in names:
        if name == "*" or name == hostname or (name.startswith("*.") and hostname.endswith(name[1:])):
            return True
    return False


__all__ = ["HOSTS_ENV", "host_allowed", "is_address", "machine_names", "served_names"]
