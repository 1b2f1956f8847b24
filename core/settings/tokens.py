"""Per-user API tokens for the REST, MCP and chat faces (core/api/): `python -m core users token create NAME`.

A token belongs to an account of accounts.json and carries a scope, viewer or editor, never above the account's
role. It is shown once, when created; tokens.json (beside accounts.json, mode 0600) keeps only its SHA-256, the
account, the scope, when it was made and when it expires. A token is random (32 bytes), so a fast hash is
enough: there is nothing to guess from a hash of one. The id (`pgt_<id>_…`, also its first part) names it in
`token list` and `token revoke` and in the audit log; the secret part is never logged.

A token works while its account exists (removing the account ends its tokens) and is capped by the account's role
*now*: an editor demoted to viewer keeps only viewer rights with an editor token.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from core.settings import accounts
from core.settings.accounts import EDITOR, ROLES, VIEWER, AccountError
from core.settings.private_files import read_private_json, write_private_json
from core.settings.workspace import REPO_ROOT, WORKSPACE_ENV, config_dir

TOKENS_FILE = "tokens.json"
PREFIX = "pgt"
MAX_TOKEN_CHARS = 200  # a header longer than any token we issue is not looked up


class TokenError(ValueError):
    pass


@dataclass(frozen=True)
class ApiToken:
    id: str
    name: str  # the account
    role: str  # the scope: viewer or editor
    created: float
    expires: float | None  # None: does not expire

    def expired(self, now: float | None = None) -> bool:
        return self.expires is not None and (time.time() if now is None else now) >= self.expires

    @property
    def is_editor(self) -> bool:
        return self.role == EDITOR


def tokens_path(folder: Path | None = None) -> Path:
    return (folder or config_dir()) / TOKENS_FILE


def _read(folder: Path | None) -> dict[str, dict]:
    data = read_private_json(tokens_path(folder), "tokens file", TokenError)
    rows = data.get("tokens") if isinstance(data, dict) else None
    return {tid: row for tid, row in (rows or {}).items()
            if isinstance(row, dict) and row.get("role") in ROLES and isinstance(row.get("sha256"), str)}


def _write(rows: dict[str, dict], folder: Path | None) -> None:
    path = tokens_path(folder)
    workspace = os.environ.get(WORKSPACE_ENV)
    write_private_json(path, {"version": 1, "tokens": rows},
                       [REPO_ROOT] + ([Path(workspace).expanduser()] if workspace else []),
                       f"refusing to store API tokens inside the repository or the workspace ({path}): point "
                       "PAPERGRAPH_CONFIG_DIR elsewhere", TokenError)


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def create_token(name: str, role: str | None = None, expires_days: float | None = None,
                 folder: Path | None = None, now: float | None = None) -> tuple[ApiToken, str]:
    """A new token for account `name`: its record and the token itself (to show once, and store nowhere)."""
    account = accounts.find_account(name, folder)
    if account is None:
        raise TokenError(f"no account named {name!r} (add it first: python -m core users add {name} --role …)")
    role = role or account.role
    if role not in ROLES:
        raise TokenError(f"role must be one of {', '.join(ROLES)}")
    if role == EDITOR and not account.is_editor:
        raise TokenError(f"{name} is a viewer: a token cannot do more than its account")
    if expires_days is not None and expires_days <= 0:
        raise TokenError("--expires-days must be more than 0")
    now = time.time() if now is None else now
    token_id = secrets.token_hex(6)
    secret = f"{PREFIX}_{token_id}_{secrets.token_urlsafe(32)}"
    record = ApiToken(token_id, name, role, now, now + expires_days * 86400 if expires_days else None)
    rows = _read(folder)
    rows[token_id] = {"name": name, "role": role, "sha256": _digest(secret), "created": record.created,
                      "expires": record.expires}
    _write(rows, folder)
    return record, secret


def _record(token_id: str, row: dict) -> ApiToken:
    return ApiToken(token_id, row.get("name", ""), row["role"], float(row.get("created") or 0),
                    float(row["expires"]) if row.get("expires") is not None else None)


def list_tokens(folder: Path | None = None) -> list[ApiToken]:
    return sorted((_record(tid, row) for tid, row in _read(folder).items()), key=lambda t: (t.name, t.created))


def revoke_token(token_id: str, folder: Path | None = None) -> bool:
    """False when there was no such token."""
    rows = _read(folder)
    if rows.pop(token_id, None) is None:
        return False
    _write(rows, folder)
    return True


def revoke_tokens_of(name: str, folder: Path | None = None) -> int:
    rows = _read(folder)
    kept = {tid: row for tid, row in rows.items() if row.get("name") != name}
    if len(kept) != len(rows):
        _write(kept, folder)
    return len(rows) - len(kept)


def has_tokens(folder: Path | None = None) -> bool:
    try:
        return bool(_read(folder))
    except TokenError:
        return True  # an unreadable file means someone meant to set tokens up: never fall back to open


def verify_token(secret: str | None, folder: Path | None = None, now: float | None = None) -> ApiToken | None:
    """The token's record, its scope capped by its account's role now; None when unknown, revoked, expired, or
    its account is gone."""
    if not secret or len(secret) > MAX_TOKEN_CHARS or not secret.isascii():
        return None
    parts = secret.split("_", 2)
    if len(parts) != 3 or parts[0] != PREFIX:
        return None
    try:
        row = _read(folder).get(parts[1])
    except TokenError:
        return None
    if row is None or not hmac.compare_digest(row["sha256"], _digest(secret)):
        return None
    record = _record(parts[1], row)
    if record.expired(now):
        return None
    try:
        account = accounts.find_account(record.name, folder)
    except AccountError:
        return None
    if account is None:
        return None
    if record.role == EDITOR and not account.is_editor:
        record = ApiToken(record.id, record.name, VIEWER, record.created, record.expires)
    return record


__all__ = ["ApiToken", "TokenError", "create_token", "has_tokens", "list_tokens", "revoke_token",
           "revoke_tokens_of", "tokens_path", "verify_token"]
