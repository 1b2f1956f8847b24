"""How the API server runs: where it listens, whether every call needs a token, and its limits."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from core.service.ingest import MAX_UPLOAD_BYTES
from core.settings.proxies import Network, trusted_proxies

DEFAULT_PORT = 8502  # beside the app's 8501
MAX_BODY_BYTES = 1024 * 1024  # a JSON request: a question, a list of ids; 120k characters fit, a megabyte does not
ORIGINS_ENV = "PAPERGRAPH_CORS_ORIGINS"  # origins besides `serve --cors-origin`, comma-separated


@dataclass
class ApiConfig:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    # Every call needs `Authorization: Bearer <token>`: off loopback, or on loopback with PAPERGRAPH_REQUIRE_SIGNIN.
    require_tokens: bool = False
    # Served to a network without tokens anyway (PAPERGRAPH_INSECURE / --insecure): every caller is an editor.
    insecure: bool = False
    # The folder of accounts.json and tokens.json, fixed when the server starts (None: config_dir() then).
    config_dir: Path | None = None
    # Requests a minute per token and per client address (a token bucket holding 10 s of them); 0: no limit.
    token_rate_per_minute: int = 600
    address_rate_per_minute: int = 1200
    max_body_bytes: int = MAX_BODY_BYTES
    max_upload_bytes: int = MAX_UPLOAD_BYTES
    allowed_hosts: list[str] = field(default_factory=list)  # names besides those of core.settings.hosts
    save_history: bool = True  # questions asked through the API go to the workspace's history, as the pages' do
    # Web pages (exact origins, from cors_origin) whose scripts may call the API (`serve --cors-origin`, or
    # PAPERGRAPH_CORS_ORIGINS); none: CORS is off, and a browser request from any origin but this server's own
    # (scheme://host:port exactly as the request names it) is refused.
    cors_origins: list[str] = field(default_factory=list)
    # Reverse proxies whose X-Forwarded-For is believed (PAPERGRAPH_TRUSTED_PROXIES, core.settings.proxies); none by
    # default: rate limits and logs use the connection's address.
    trusted_proxies: list[Network] = field(default_factory=trusted_proxies)
    # Slow clients (core/api/timeouts.py): a request head must be in within head_timeout_s; a body must arrive at
    # min_body_rate bytes/s after body_grace_s; an idle kept-alive connection closes after keep_alive_s; beyond
    # max_connections open connections new requests get 503.
    head_timeout_s: float = 10.0
    body_grace_s: float = 10.0
    min_body_rate: float = 16 * 1024
    keep_alive_s: int = 5
    max_connections: int = 200


_DEFAULT_PORTS = {"http": 80, "https": 443}


def env_origins(env: dict | None = None) -> list[str]:
    """The origins of PAPERGRAPH_CORS_ORIGINS (comma-separated), each through cors_origin (ValueError names a bad
    one)."""
    value = (os.environ if env is None else env).get(ORIGINS_ENV, "")
    return [cors_origin(o) for o in value.split(",") if o.strip()]


def cors_origin(value: str) -> str:
    """An origin as a browser sends it (scheme://host[:port], lower case, no default port), or ValueError. A wildcard
    is refused: on loopback no token is needed, so `*` would let every page the user opens read the collection."""
    text = (value or "").strip()
    if "*" in text:
        raise ValueError(f"refusing the CORS origin {text!r}: a wildcard would let any web page the user visits read "
                         "the collection (on loopback no token is needed). Name each page's origin, e.g. "
                         "--cors-origin https://notebooks.example.org")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        parts, port = None, None
    if (parts is None or parts.scheme not in _DEFAULT_PORTS or not parts.hostname or parts.username
            or parts.password or parts.path not in ("", "/") or parts.query or parts.fragment):
        raise ValueError(f"{text[:200]!r} is not an origin: give scheme://host[:port], e.g. http://localhost:3000 "
                         "(no path, no wildcard)")
    host = parts.hostname.lower()
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}" + (f":{port}" if port and port != _DEFAULT_PORTS[parts.scheme] else "")
