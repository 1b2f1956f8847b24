"""Who may use a shared app, and as what: accounts (name, role, bcrypt hash) and the access policy.

Accounts live in the user's config directory ($PAPERGRAPH_CONFIG_DIR, else $XDG_CONFIG_HOME/papergraph, else
~/.config/papergraph — the folder of the API keys, core/models/llm/secrets.py), file accounts.json, mode 0600:
never in the repository or a workspace, so a workspace can be zipped and shared without its passwords. The file
holds bcrypt hashes only; a password is never written, logged or returned.

Roles: a viewer searches, asks and explores; an editor also changes things (uploads, deletions, graph edits,
evaluation runs, settings). `access_policy` decides, from where the server listens and what is configured,
whether a request is served openly, must sign in, or is refused.
"""
from __future__ import annotations

import functools
import ipaddress
import os
import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import bcrypt

from core.settings.private_files import read_private_json, write_private_json
from core.settings.workspace import REPO_ROOT, WORKSPACE_ENV, config_dir

ACCOUNTS_FILE = "accounts.json"
EDITOR, VIEWER = "editor", "viewer"
ROLES = (EDITOR, VIEWER)
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$")
MIN_PASSWORD = 8
MAX_PASSWORD_BYTES = 72  # bcrypt reads no further; a longer password would be silently cut, so it is refused
BCRYPT_ROUNDS = 12
# Environment switches of the access policy (the Makefile's `run` target sets the first from INSECURE=1).
INSECURE_ENV = "PAPERGRAPH_INSECURE"
REQUIRE_SIGNIN_ENV = "PAPERGRAPH_REQUIRE_SIGNIN"


class AccountError(ValueError):
    pass


@dataclass(frozen=True)
class Account:
    name: str
    role: str

    @property
    def is_editor(self) -> bool:
        return self.role == EDITOR


def accounts_path(folder: Path | None = None) -> Path:
    return (folder or config_dir()) / ACCOUNTS_FILE


def _read(folder: Path | None = None) -> dict[str, dict]:
    data = read_private_json(accounts_path(folder), "accounts file", AccountError)
    users = data.get("users") if isinstance(data, dict) else None
    return {name: row for name, row in (users or {}).items()
            if isinstance(row, dict) and row.get("role") in ROLES and isinstance(row.get("hash"), str)}


def _write(users: dict[str, dict]) -> None:
    path = accounts_path()
    workspace = os.environ.get(WORKSPACE_ENV)
    write_private_json(path, {"version": 1, "users": users},
                       [REPO_ROOT] + ([Path(workspace).expanduser()] if workspace else []),
                       f"refusing to store accounts inside the repository or the workspace ({path}): point "
                       "PAPERGRAPH_CONFIG_DIR elsewhere", AccountError)


def check_name(name: str) -> str:
    if not NAME_PATTERN.match(name or ""):
        raise AccountError("a name is 1-64 characters: letters, digits and . _ @ + - (starting with a letter or "
                           "digit)")
    return name


def check_password(password: str) -> bytes:
    raw = (password or "").encode("utf-8")
    if len(password or "") < MIN_PASSWORD:
        raise AccountError(f"the password is too short: at least {MIN_PASSWORD} characters")
    if len(raw) > MAX_PASSWORD_BYTES:
        raise AccountError(f"the password is too long: at most {MAX_PASSWORD_BYTES} bytes (bcrypt's limit)")
    return raw


def add_account(name: str, password: str, role: str) -> Account:
    """Create the account, or replace its password and role (a password reset)."""
    check_name(name)
    if role not in ROLES:
        raise AccountError(f"role must be one of {', '.join(ROLES)}")
    hashed = bcrypt.hashpw(check_password(password), bcrypt.gensalt(BCRYPT_ROUNDS)).decode("ascii")
    users = _read()
    users[name] = {"role": role, "hash": hashed}
    _write(users)
    return Account(name, role)


def remove_account(name: str) -> bool:
    """False when there was no such account."""
    users = _read()
    if users.pop(name, None) is None:
        return False
    _write(users)
    return True


def list_accounts() -> list[Account]:
    return [Account(name, row["role"]) for name, row in sorted(_read().items())]


def has_accounts() -> bool:
    try:
        return bool(_read())
    except AccountError:
        return True  # an unreadable file means someone meant to configure sign-in: never fall back to open


def find_account(name: str, folder: Path | None = None) -> Account | None:
    """The account as the file says now (its role may have changed since sign-in; it may be gone). `folder`: the
    config folder a server fixed at its start (default: config_dir() now)."""
    row = _read(folder).get(name)
    return Account(name, row["role"]) if row else None


@functools.cache
def _dummy_hash() -> bytes:
    """Checked against when the name is unknown, at the same cost, so a wrong name takes as long as a wrong
    password (no guessing which names exist from the timing)."""
    return bcrypt.hashpw(b"no such account", bcrypt.gensalt(BCRYPT_ROUNDS))


def verify(name: str, password: str) -> Account | None:
    """The account when `password` is its password, else None (unknown name and wrong password alike)."""
    raw = (password or "").encode("utf-8")
    try:
        row = _read().get(name or "")
    except AccountError:
        row = None
    usable = 0 < len(raw) <= MAX_PASSWORD_BYTES
    hashed = row["hash"].encode("ascii") if row else _dummy_hash()
    try:
        matched = bcrypt.checkpw(raw if usable else b"\0", hashed)  # the same work whatever was typed
    except ValueError:  # a hash edited by hand into something bcrypt cannot read
        matched = False
    return Account(name, row["role"]) if (matched and usable and row) else None


# --------------------------------------------------------------------------------------------- access policy
class Access(Enum):
    OPEN = "open"  # loopback, no sign-in: the single local user, an editor
    SIGN_IN = "sign-in"  # every session signs in (accounts and/or OpenID Connect)
    INSECURE = "insecure"  # served to a network without sign-in, explicitly chosen: open, with a warning banner
    REFUSED = "refused"  # served to a network, nothing to sign in with: every page says how to set it up


def is_loopback(address: str | None) -> bool:
    """Whether the server listens on this machine only. None or "" is Streamlit's default: every interface."""
    if not address:
        return False
    host = address.strip().strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name or a unix socket: someone else may be in front of it


def env_flag(name: str, env: dict | None = None) -> bool:
    value = (os.environ if env is None else env).get(name, "")
    return value.strip().lower() in ("1", "true", "yes", "on")


def access_policy(loopback: bool, sign_in_configured: bool, env: dict | None = None) -> Access:
    """Loopback without PAPERGRAPH_REQUIRE_SIGNIN: open. Otherwise sign-in when something to sign in with is
    configured; without it, open with a banner only when PAPERGRAPH_INSECURE says so, else refused."""
    if loopback and not env_flag(REQUIRE_SIGNIN_ENV, env):
        return Access.OPEN
    if sign_in_configured:
        return Access.SIGN_IN
    return Access.INSECURE if env_flag(INSECURE_ENV, env) else Access.REFUSED


def oidc_role(email: str | None, editors: list[str], viewers: list[str]) -> str | None:
    """The role of someone signed in with OpenID Connect, from the allow-lists of secrets.toml
    ([papergraph] editors / viewers: addresses, or "*@example.org" for a whole domain); None when not listed,
    since an identity provider such as Google vouches for everyone who has an account there."""
    email = (email or "").strip().lower()
    if not email:
        return None

    def listed(patterns: list[str]) -> bool:
        for pattern in patterns or []:
            pattern = str(pattern).strip().lower()
            if pattern == email or (pattern.startswith("*@") and email.endswith(pattern[1:])):
                return True
        return False

    if listed(editors):
        return EDITOR
    return VIEWER if listed(viewers) else None


REFUSAL = ("PaperGraph is served to the network (server address {address}) and no sign-in is configured, so "
           "it shows nothing. Add an account: `python -m core users add NAME --role editor` (the password is "
           "asked for), or set up OpenID Connect in `.streamlit/secrets.toml` ([auth] and [papergraph] editors / "
           "viewers), then reload. To serve it only to this machine: `make run` (127.0.0.1). To open it to the "
           "network without sign-in anyway: `make run HOST=0.0.0.0 INSECURE=1`.")
INSECURE_BANNER = ("This app is open to the network without sign-in (PAPERGRAPH_INSECURE=1): anyone who can reach "
                   "it can upload, delete, edit the graph and change the settings.")


def oidc_in_secrets_files(app_dir: Path) -> bool:
    """Whether a secrets.toml Streamlit reads (~/.streamlit/ or the app's .streamlit/) has an `[auth]` section:
    what `make run` can check before the server starts. The app itself asks st.secrets."""
    import tomllib

    for path in (Path.home() / ".streamlit" / "secrets.toml", app_dir / ".streamlit" / "secrets.toml"):
        try:
            auth = tomllib.loads(path.read_text(encoding="utf-8")).get("auth")
        except (OSError, ValueError):
            continue
        if isinstance(auth, dict) and auth:
            return True
    return False


def preflight(host: str, app_dir: Path, env: dict | None = None) -> str | None:
    """Why the app must not start on `host` (the refusal text), or None: `make run` asks before it serves."""
    from core.settings.proxies import trusted_proxies

    try:
        trusted_proxies(env)
    except ValueError as exc:  # a typo in the proxy list would fail every request: refuse to start, saying why
        return str(exc)
    configured = has_accounts() or oidc_in_secrets_files(app_dir)
    if access_policy(is_loopback(host), configured, env) == Access.REFUSED:
        return REFUSAL.format(address=host or "every interface")
    return None
