"""Accounts of a shared app: users add NAME --role editor|viewer | users list | users remove NAME, and their API
tokens: users token create NAME [--role viewer|editor] [--expires-days N] | users token list | users token revoke ID.

The password is read from a prompt (twice, without echo) or, when stdin is not a terminal, from its first line:
never from argv, which other users of the machine can read in the process list and which shells keep in
their history."""
from __future__ import annotations

import getpass
import sys
import time

from core.settings.accounts import AccountError


def read_password() -> str:
    if sys.stdin.isatty():
        first = getpass.getpass("Password: ")
        if getpass.getpass("Password again: ") != first:
            raise SystemExit("users: the two passwords differ; nothing changed")
        return first
    return sys.stdin.readline().rstrip("\r\n")


def cmd_users(args) -> int:
    from core.settings.accounts import accounts_path, add_account, list_accounts, remove_account

    if args.action == "token":
        return cmd_token(args)
    if args.action == "preflight":  # `make run` asks this before serving: exposed without sign-in is refused
        from core.settings.accounts import preflight
        from core.settings.workspace import REPO_ROOT

        reason = preflight(args.host, REPO_ROOT)
        if reason:
            print(f"refusing to start: {reason}", file=sys.stderr)
            return 1
        return 0
    try:
        if args.action == "list":
            accounts = list_accounts()
            for account in accounts:
                print(f"{account.name}\t{account.role}")
            if not accounts:
                print(f"no accounts ({accounts_path()})", file=sys.stderr)
            return 0
        if not args.name:
            raise SystemExit(f"users {args.action} needs a NAME")
        if args.action == "remove":
            if not remove_account(args.name):
                raise SystemExit(f"users: no account named {args.name!r}")
            print(f"removed {args.name} from {accounts_path()}")
            _sign_out(args.name)
            _revoke_tokens(args.name)
            return 0
        account = add_account(args.name, read_password(), args.role)
    except AccountError as exc:
        raise SystemExit(f"users: {exc}") from exc
    print(f"{account.name} ({account.role}) saved in {accounts_path()}")
    _sign_out(account.name)  # a password reset (often after a leak) ends the sessions the old one opened
    return 0


def cmd_token(args) -> int:
    """The token is printed once, on stdout alone (so `… token create NAME > file` keeps it); the rest on stderr."""
    from core.settings.tokens import TokenError, create_token, list_tokens, revoke_token, tokens_path

    what, target = args.name, args.arg
    try:
        if what == "create":
            if not target:
                raise SystemExit("users token create needs a NAME")
            record, secret = create_token(target, args.token_role, args.expires_days)
            until = (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(record.expires)) if record.expires
                     else "never")
            print(f"token {record.id} for {record.name} ({record.role}), expires {until}; shown once, store it now:",
                  file=sys.stderr)
            print(secret)
            return 0
        if what == "list":
            tokens = list_tokens()
            for t in tokens:
                until = time.strftime("%Y-%m-%d", time.gmtime(t.expires)) if t.expires else "never"
                state = " (expired)" if t.expired() else ""
                print(f"{t.id}\t{t.name}\t{t.role}\texpires {until}{state}")
            if not tokens:
                print(f"no tokens ({tokens_path()})", file=sys.stderr)
            return 0
        if what == "revoke":
            if not target:
                raise SystemExit("users token revoke needs a token ID (see users token list)")
            if not revoke_token(target):
                raise SystemExit(f"users: no token with id {target!r}")
            print(f"revoked token {target}")
            return 0
    except (TokenError, AccountError) as exc:
        raise SystemExit(f"users: {exc}") from exc
    raise SystemExit("users token: create NAME | list | revoke ID")


def _revoke_tokens(name: str) -> None:
    from core.settings.tokens import revoke_tokens_of, tokens_path

    if tokens_path().exists() and (revoked := revoke_tokens_of(name)):
        print(f"revoked {revoked} API token(s) of {name}")


def _sign_out(name: str) -> None:
    from core.service.sessions import close_sessions_of, sessions_path

    if sessions_path().exists() and (closed := close_sessions_of(name)):
        print(f"signed out {closed} session(s) of {name}")


def add_parser(sub) -> None:
    p = sub.add_parser("users", help="accounts that may sign in to a shared app: add NAME --role editor|viewer "
                                     "(password from a prompt or stdin) | list | remove NAME | token create NAME "
                                     "[--expires-days N] | token list | token revoke ID (API tokens)")
    p.add_argument("action", choices=["add", "list", "remove", "preflight", "token"])
    p.add_argument("--host", default="127.0.0.1", help="preflight: the address `make run` will serve on")
    p.add_argument("name", nargs="?", help="the account; for token: create | list | revoke")
    p.add_argument("arg", nargs="?", help="token create: the account; token revoke: the token id")
    p.add_argument("--expires-days", type=float, dest="expires_days", help="token create: days until it expires "
                                                                           "(default: never)")
    p.add_argument("--scope", choices=["editor", "viewer"], dest="token_role",
                   help="token create: viewer or editor (default: the account's role; never above it)")
    p.add_argument("--role", choices=["editor", "viewer"], default="viewer",
                   help="add: viewer (search, ask, explore; the default) or editor (also upload, delete, edit, "
                        "settings)")
    p.set_defaults(func=cmd_users)
