"""The workspace's history of questions and results, for the Ask and Compare pages: what an entry holds, whose it
is and how many are kept. The rows live in the library's HistoryStore (core.store.sqlite_history), one per
workspace; within it each entry has an owner, and a list shows its reader's own entries only.

Owners: `local` for the one user of a loopback app without sign-in (and for the CLI, run by the machine's user),
`account:NAME` for a PaperGraph account (the app's /sign-in form, the API's tokens), `oidc:EMAIL` for someone
signed in with OpenID Connect (an email may also be a PaperGraph account's name: two people, two owners).
Entries kept before histories had owners have none (''): asked by whoever used the app then, they are shown to
editors only (the loopback local user is one), marked as such, and to no viewer.
"""
from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass

from core.library import Library
from core.query.records import QueryResult

MAX_ENTRIES = 2000  # per owner; older entries are dropped: a history, not an archive
LOCAL_OWNER = "local"
UNKNOWN_OWNER = ""  # entries from before histories had owners, or saved by a caller that named none


def account_owner(name: str) -> str:
    return f"account:{name}"


def oidc_owner(email: str) -> str:
    return f"oidc:{email}"


@dataclass
class HistoryEntry:
    id: str
    ts: float
    question: str
    mode: str
    summary: str
    payload_json: str
    owner: str = UNKNOWN_OWNER

    @property
    def payload(self) -> dict:
        """The whole result, parsed only when asked for: the page lists questions on every rerun."""
        return json.loads(self.payload_json)


def _entry(row: dict) -> HistoryEntry:
    return HistoryEntry(id=row["id"], ts=row["ts"], question=row["question"], mode=row["mode"],
                        summary=row["summary"], payload_json=row["payload"], owner=row.get("owner") or "")


def save_result(lib: Library, result: QueryResult, owner: str | None = None, batch: str = "") -> str:
    entry_id = uuid.uuid4().hex
    answer = result.answer.text if result.answer else "(context only)"
    lib.history.add(entry_id=entry_id, ts=time.time(), question=result.question, mode=result.mode, batch=batch,
                    summary=answer[:300], payload=json.dumps(result.to_dict(), default=str), keep=MAX_ENTRIES,
                    owner=owner or UNKNOWN_OWNER)
    return entry_id


def recent(lib: Library, owner: str, limit: int = 50, with_unowned: bool = False) -> list[HistoryEntry]:
    """`owner`'s newest entries; with `with_unowned` (an editor's list) those without an owner too."""
    owners = [owner] + ([UNKNOWN_OWNER] if with_unowned and owner != UNKNOWN_OWNER else [])
    return [_entry(row) for row in lib.history.recent(limit, owners)]


def clear(lib: Library, owner: str) -> None:
    lib.history.clear(owner)
