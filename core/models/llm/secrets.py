"""Where an LLM endpoint's API key comes from, and how it is kept out of the repo, the workspace and the logs.

Order: PAPERGRAPH_LLM_API_KEY, then OPENAI_API_KEY, then the credentials file, which lives in the user's config
directory ($PAPERGRAPH_CONFIG_DIR, else $XDG_CONFIG_HOME/papergraph, else ~/.config/papergraph): never in the
workspace, so a workspace can be zipped and shared, and never in the repository. Keys are stored per base URL so
a key typed for one provider is not sent to another.
"""
from __future__ import annotations

import json
import os
import secrets as _random
from pathlib import Path

from core.settings.workspace import REPO_ROOT

ENV_KEYS = ("PAPERGRAPH_LLM_API_KEY", "OPENAI_API_KEY")
CREDENTIALS_FILE = "credentials.json"
# What the openai package is given for endpoints that need no key (Ollama, LM Studio): it refuses an empty one.
NO_KEY = "not-needed"
REDACTED = "[redacted]"


class SecretsError(RuntimeError):
    pass


def config_dir() -> Path:
    explicit = os.environ.get("PAPERGRAPH_CONFIG_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".config") / "papergraph"


def credentials_path() -> Path:
    return config_dir() / CREDENTIALS_FILE


def endpoint_id(base_url: str) -> str:
    """'https://api.openai.com/v1/' and 'https://api.openai.com/v1' are one endpoint."""
    return base_url.strip().rstrip("/")


def _read() -> dict[str, str]:
    path = credentials_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, json.JSONDecodeError) as exc:
        # The message names the file, never its content.
        raise SecretsError(f"the credentials file {path} cannot be read ({type(exc).__name__})") from None
    keys = data.get("keys") if isinstance(data, dict) else None
    return {k: v for k, v in (keys or {}).items() if isinstance(k, str) and isinstance(v, str)}


def _write(keys: dict[str, str]) -> None:
    path = credentials_path()
    resolved = path.resolve()
    if resolved == REPO_ROOT or REPO_ROOT in resolved.parents:
        raise SecretsError(f"refusing to store API keys inside the repository ({path}): "
                           "point PAPERGRAPH_CONFIG_DIR elsewhere")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{_random.token_hex(4)}.tmp")
    # Created 0600 from the first byte (no chmod window), then renamed over the old file in one step.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"version": 1, "keys": keys}, f, indent=2)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def save_api_key(base_url: str, key: str) -> Path:
    """Keep `key` for `base_url` in the credentials file (mode 0600); returns the file's path."""
    key = key.strip()
    if not endpoint_id(base_url):
        raise SecretsError("a key is saved for an endpoint: set the base URL first")
    if not key:
        raise SecretsError("the API key is empty")
    keys = _read()
    keys[endpoint_id(base_url)] = key
    _write(keys)
    return credentials_path()


def forget_api_key(base_url: str) -> bool:
    """Remove the saved key of `base_url`; False when there was none."""
    keys = _read()
    if keys.pop(endpoint_id(base_url), None) is None:
        return False
    _write(keys)
    return True


def has_saved_key(base_url: str) -> bool:
    return endpoint_id(base_url) in _read()


def key_source(base_url: str) -> str | None:
    """Where api_key_for() finds the key: an environment variable's name, 'credentials file', or None.

    Order: PAPERGRAPH_LLM_API_KEY (meant for whatever endpoint is configured), then the key saved for this very
    endpoint, then OPENAI_API_KEY — last, and only for OpenAI's own hosts, so a shell-wide OpenAI key is never
    sent to a third-party server."""
    if os.environ.get(ENV_KEYS[0], "").strip():
        return ENV_KEYS[0]
    if has_saved_key(base_url):
        return "credentials file"
    if os.environ.get(ENV_KEYS[1], "").strip() and _is_openai_host(base_url):
        return ENV_KEYS[1]
    return None


def _is_openai_host(base_url: str) -> bool:
    from urllib.parse import urlparse

    host = (urlparse(base_url).hostname or "").lower()
    return host == "openai.com" or host.endswith(".openai.com")


def api_key_for(base_url: str) -> str | None:
    source = key_source(base_url)
    if source in ENV_KEYS:
        return os.environ[source].strip()
    return _read().get(endpoint_id(base_url)) if source else None


def redact(text: str, key: str | None) -> str:
    """`text` with every occurrence of the key replaced, for error messages and logs."""
    if not key or key == NO_KEY:
        return text
    return text.replace(key, REDACTED)
