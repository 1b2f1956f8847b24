"""How the API server runs: where it listens, whether every call needs a token, and its limits."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

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
