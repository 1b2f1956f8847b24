"""Where an LLM endpoint's API key comes from, and how it is kept out of the repo, the workspace and the logs.

Every key is bound to the endpoint it belongs to, and is sent to that endpoint only, so whoever can change the
base URL (anyone who can reach the Settings page) cannot make the app send a key to their own server:
  1. PAPERGRAPH_LLM_API_KEY: only to the endpoint named by PAPERGRAPH_LLM_BASE_URL (set both; alone, it is sent
     nowhere);
  2. the credentials file: the key saved for this very base URL. It lives in the user's config directory
     ($PAPERGRAPH_CONFIG_DIR, else $XDG_CONFIG_HOME/papergraph, else ~/.config/papergraph): never in the
     workspace, so a workspace can be zipped and shared, and never in the repository;
  3. OPENAI_API_KEY: only to OpenAI's own hosts, over https.
A changed base URL therefore has no key until one is given for it. The LLM, the VLM, the connection test and the
RAGAS judge all ask api_key_for(), so the rule is the same everywhere.
"""
from __future__ import annotations

import os
from pathlib import Path

from core.settings.private_files import read_private_json, write_private_json
from core.settings.workspace import REPO_ROOT, config_dir

ENV_KEYS = ("PAPERGRAPH_LLM_API_KEY", "OPENAI_API_KEY")
ENV_KEY_URL = "PAPERGRAPH_LLM_BASE_URL"  # the one endpoint PAPERGRAPH_LLM_API_KEY is sent to
CREDENTIALS_FILE = "credentials.json"
# What the openai package is given for endpoints that need no key (Ollama, LM Studio): it refuses an empty one.
NO_KEY = "not-needed"
REDACTED = "[redacted]"


class SecretsError(RuntimeError):
    pass


def credentials_path() -> Path:
    return config_dir() / CREDENTIALS_FILE


def endpoint_id(base_url: str) -> str:
    """'https://api.openai.com/v1/' and 'https://api.openai.com/v1' are one endpoint."""
    return base_url.strip().rstrip("/")


def _read() -> dict[str, str]:
    data = read_private_json(credentials_path(), "credentials file", SecretsError)
    keys = data.get("keys") if isinstance(data, dict) else None
    return {k: v for k, v in (keys or {}).items() if isinstance(k, str) and isinstance(v, str)}


def _write(keys: dict[str, str]) -> None:
    path = credentials_path()
    write_private_json(path, {"version": 1, "keys": keys}, [REPO_ROOT],
                       f"refusing to store API keys inside the repository ({path}): point PAPERGRAPH_CONFIG_DIR "
                       "elsewhere", SecretsError)


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


def _env(name: str) -> str:
    return os.environ.get(name, "").strip()


def env_key_endpoint() -> str | None:
    """The endpoint PAPERGRAPH_LLM_API_KEY belongs to (PAPERGRAPH_LLM_BASE_URL), or None when it names none."""
    return endpoint_id(_env(ENV_KEY_URL)) or None


def key_source(base_url: str) -> str | None:
    """Where api_key_for() finds the key for `base_url`: an environment variable's name, 'credentials file', or
    None. Each source is bound to its endpoint (see the module's docstring); the first that matches wins."""
    if not endpoint_id(base_url):
        return None
    if _env(ENV_KEYS[0]) and env_key_endpoint() == endpoint_id(base_url):
        return ENV_KEYS[0]
    if has_saved_key(base_url):
        return "credentials file"
    if _env(ENV_KEYS[1]) and _is_openai_host(base_url):
        return ENV_KEYS[1]
    return None


def _is_openai_host(base_url: str) -> bool:
    from urllib.parse import urlparse

    url = urlparse(base_url.strip())
    host = (url.hostname or "").lower()
    return url.scheme == "https" and (host == "openai.com" or host.endswith(".openai.com"))


def missing_key_hint(base_url: str) -> str:
    """Why no key is sent to `base_url`, and how to give it one (for messages; never contains a key)."""
    url = endpoint_id(base_url)
    hints = []
    if _env(ENV_KEYS[0]):
        bound = env_key_endpoint()
        hints.append(f"{ENV_KEYS[0]} is set but is sent only to {bound} ({ENV_KEY_URL})" if bound else
                     f"{ENV_KEYS[0]} is set but sent nowhere: set {ENV_KEY_URL} to the endpoint it belongs to")
    if _env(ENV_KEYS[1]):
        hints.append(f"{ENV_KEYS[1]} is sent only to OpenAI's own https hosts")
    hints.append(f"save a key for {url} on the Settings page" if url else "set the base URL first")
    return "; ".join(hints)


def key_notice(base_url: str) -> str:
    """One sentence for the Settings page: which key will be sent where."""
    url = endpoint_id(base_url)
    if not url:
        return "No base URL is set, so no API key is sent anywhere."
    source = key_source(url)
    if source == ENV_KEYS[0]:
        return f"The key in {ENV_KEYS[0]} is sent to {url} (named by {ENV_KEY_URL}), and to no other endpoint."
    if source == "credentials file":
        return (f"A key is saved for this endpoint ({url}) in {credentials_path()}: it is sent there and to no "
                "other endpoint.")
    if source == ENV_KEYS[1]:
        return f"{ENV_KEYS[1]} from the environment is sent to {url} (one of OpenAI's own hosts)."
    return (f"No API key is sent to {url}: local servers (Ollama, LM Studio) need none; otherwise "
            f"{missing_key_hint(url)}.")


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
