"""The contract of the server's sign-in sessions and sign-in attempts (core/service/sessions.py is its one user).
Not a workspace store: one file beside the accounts, shared by every workspace the server opens."""
from __future__ import annotations

from typing import Protocol


class SessionStore(Protocol):
    """Sessions by the SHA-256 of their token (never the token), the key cookies are signed with, and the sign-in
    attempts counted against an account from an address and against an address."""

    def cookie_key(self) -> bytes:
        """Made on first use and kept with the sessions (never in the repository)."""

    def add(self, token_sha256: str, name: str, address: str, created: float, expires: float) -> None:
        """A new session; sessions expired by `created` are dropped on the way."""

    def find(self, token_sha256: str) -> tuple[str, float, float] | None:
        """(name, created, expires) of a session, expired or not; None when there is none."""

    def remove(self, token_sha256: str) -> bool: ...

    def remove_all_of(self, name: str) -> int: ...

    def begin_attempt(self, name: str, address: str, now: float, since: float, stale: float,
                      max_per_name_and_address: int, max_per_address: int) -> tuple[int | None, int, int]:
        """In one transaction: forget failures before `since` and pending attempts before `stale`, count the rest
        against `name` from `address`, and against `address` whatever the name, and, under both limits, record a
        pending attempt. Returns its id (None when locked out) and the two counts."""

    def end_attempt(self, attempt: int, succeeded: bool) -> None:
        """A success is forgotten; a failure counts until it leaves the window."""
