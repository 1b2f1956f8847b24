"""Accounts of a shared app: users add NAME --role editor|viewer | users list | users remove NAME.

The password is read from a prompt (twice, without echo) or, when stdin is not a terminal, from its first line:
never from argv, which other users of the machine can read in the process list and which shells keep in
their history."""
from __future__ import annotations

import getpass
import sys


def read_password() -> str:
    if sys.stdin.isatty():
        first = getpass.getpass("Password: ")
        if getpass.getpass("Password again: ") != first:
            raise SystemExit("users: the two passwords differ; nothing changed")
        return first
    return sys.stdin.readline().rstrip("\r\n")


def cmd_users(args) -> int:
    from core.settings.accounts import AccountError, accounts_path, add_account, list_accounts, remove_account

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
            return 0
        account = add_account(args.name, read_password(), args.role)
    except AccountError as exc:
        raise SystemExit(f"users: {exc}") from exc
    print(f"{account.name} ({account.role}) saved in {accounts_path()}")
    _sign_out(account.name)  # a password reset (often after a leak) ends the sessions the old one opened
    return 0


def _sign_out(name: str) -> None:
    from core.settings.sessions import close_sessions_of, sessions_path

    if sessions_path().exists() and (closed := close_sessions_of(name)):
        print(f"signed out {closed} session(s) of {name}")


def add_parser(sub) -> None:
    p = sub.add_parser("users", help="accounts that may sign in to a shared app: add NAME --role editor|viewer "
                                     "(password from a prompt or stdin) | list | remove NAME")
    p.add_argument("action", choices=["add", "list", "remove", "preflight"])
    p.add_argument("--host", default="127.0.0.1", help="preflight: the address `make run` will serve on")
    p.add_argument("name", nargs="?")
    p.add_argument("--role", choices=["editor", "viewer"], default="viewer",
                   help="add: viewer (search, ask, explore; the default) or editor (also upload, delete, edit, "
                        "settings)")
    p.set_defaults(func=cmd_users)
