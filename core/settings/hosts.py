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
ORIGINS_ENV = "PAPERGRAPH_ALLOWED_ORIGINS"  # other pages that may use the server: scheme://host[:port],…
_DEFAULT_PORTS = {"http": 80, "https": 443}


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


def origin_key(origin: str | None) -> tuple[str, str, int] | None:
    """(scheme, host, port) of `http(s)://host[:port]`, default port filled in; None for anything else (`null`,
    another scheme, a path, credentials)."""
    try:
        parts = urlsplit((origin or "").strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.hostname or parts.username or parts.password \
            or parts.path not in ("", "/") or parts.query or parts.fragment:
        return None
    return parts.scheme.lower(), parts.hostname.lower().rstrip("."), port or _DEFAULT_PORTS[parts.scheme.lower()]


def allowed_origins() -> set[tuple[str, str, int]]:
    """The origins named in $PAPERGRAPH_ALLOWED_ORIGINS now, as origin_key()s (a malformed entry allows nothing)."""
    keys = (origin_key(item) for item in os.environ.get(ORIGINS_ENV, "").split(",") if item.strip())
    return {key for key in keys if key is not None}


def origin_allowed(origin: str | None, own_origin: str) -> bool:
    """May a browser page from `origin` open the websocket or send a state-changing request? Only the server's own
    origin (`own_origin`, scheme://Host as the request names it) or one in $PAPERGRAPH_ALLOWED_ORIGINS, exactly:
    Streamlit's own check lets any port of localhost or 127.0.0.1 in, so any other local web page (a dev server on
    localhost:3001) acted as the loopback app's editor. `Origin: null` (a sandboxed frame, a file:// page) is
    refused; no Origin at all is not a browser's page (browsers send it with every websocket and every request
    but GET and HEAD), and a client outside a browser can send any header it likes anyway."""
    if origin is None:
        return True
    key = origin_key(origin)
    return key is not None and (key == origin_key(own_origin) or key in allowed_origins())


__all__ = ["HOSTS_ENV", "ORIGINS_ENV", "allowed_origins", "host_allowed", "is_address", "machine_names",
           "origin_allowed", "origin_key", "served_names"]
