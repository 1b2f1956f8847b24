"""API tokens and their commands (`python -m core users token create|list|revoke`): shown once, stored hashed,
scoped and capped by the account's role, expiring, revoked with the account."""
from __future__ import annotations

import json
import stat
import time

import pytest

from core.cli import main
from core.settings import tokens
from core.settings.accounts import add_account, remove_account


def test_create_list_and_revoke_from_the_command_line(capsys):
    add_account("alice", "a long enough password", "editor")
    assert main(["users", "token", "create", "alice", "--expires-days", "30", "--scope", "viewer"]) == 0
    out, err = capsys.readouterr()
    secret = out.strip()
    assert secret.startswith("pgt_") and out.count("\n") == 1  # the token alone on stdout
    assert "viewer" in err and "shown once" in err
    path = tokens.tokens_path()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert secret not in path.read_text() and secret.split("_", 2)[2] not in path.read_text()
    record = tokens.verify_token(secret)
    assert record and record.name == "alice" and record.role == "viewer" and 29 < (record.expires - time.time()) / 86400
    assert main(["users", "token", "list"]) == 0
    listed = capsys.readouterr().out
    assert record.id in listed and "alice" in listed and secret not in listed
    assert main(["users", "token", "revoke", record.id]) == 0
    assert tokens.verify_token(secret) is None
    with pytest.raises(SystemExit, match="no token with id"):
        main(["users", "token", "revoke", record.id])


def test_a_token_never_does_more_than_its_account(capsys):
    add_account("vic", "a long enough password", "viewer")
    with pytest.raises(SystemExit, match="a token cannot do more than its account"):
        main(["users", "token", "create", "vic", "--scope", "editor"])
    with pytest.raises(SystemExit, match="no account named"):
        main(["users", "token", "create", "nobody"])
    add_account("ed", "a long enough password", "editor")
    _, secret = tokens.create_token("ed")
    assert tokens.verify_token(secret).role == "editor"
    add_account("ed", "a long enough password", "viewer")  # demoted: the token follows the account
    assert tokens.verify_token(secret).role == "viewer"


def test_expired_forged_and_orphaned_tokens_verify_as_nothing(capsys):
    add_account("ola", "a long enough password", "viewer")
    _, stale = tokens.create_token("ola", expires_days=1, now=time.time() - 86401)
    _, live = tokens.create_token("ola")
    assert tokens.verify_token(stale) is None and tokens.verify_token(live) is not None
    prefix, token_id, rest = live.split("_", 2)
    for forged in (f"{prefix}_{token_id}_{rest[:-1]}{'A' if rest[-1] != 'A' else 'B'}", f"{prefix}_{token_id}",
                   "pgt_" + "x" * 300, "", "é", f"xyz_{token_id}_{rest}"):
        assert tokens.verify_token(forged) is None, forged
    assert main(["users", "remove", "ola"]) == 0
    assert "revoked 2 API token(s) of ola" in capsys.readouterr().out
    assert tokens.verify_token(live) is None and json.loads(tokens.tokens_path().read_text())["tokens"] == {}
    remove_account("nobody-at-all")  # no such account: nothing to do, nothing raised
