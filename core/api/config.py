"""How the API server runs: where it listens, whether every call needs a token, and its limits."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from core.service.ingest import MAX_UPLOAD_BYTES

DEFAULT_PORT = 8502  # beside the app's 8501
MAX_BODY_BYTES = 1024 * 1024  # a JSON request: a question, a list of ids; 120k characters fit, a megabyte does not


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
    # Web pages (exact origins, from cors_origin) whose scripts may call the API (`serve --cors-origin`); none: CORS
    # is off, and a browser request from any origin but this server's own is refused.
    cors_origins: list[str] = field(default_factory=list)


_DEFAULT_PORTS = {"http": 80, "https": 443}


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
