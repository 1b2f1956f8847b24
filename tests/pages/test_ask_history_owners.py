"""Recent questions are their asker's (issue 36): the Ask page's list shows the questions of the account reading
it, in this workspace, and never another account's. Through Streamlit's AppTest with sign-in forced on loopback
and two real accounts (cookies from core.service.sessions, as the /sign-in form makes them); the loopback user
without sign-in is an owner of its own. Entries kept before histories had owners are an editor's to see, marked,
and no viewer's. The store's side (per owner, per workspace, the old table migrated) is tested on real SQLite."""
from __future__ import annotations

import sqlite3
import time

import pytest

from core.library import open_library
from core.query import history
from core.service import sessions
from core.settings import accounts
from core.settings.workspace import Workspace
from core.store.sqlite_db import Database
from core.store.sqlite_history import QueryHistoryStore
from pages.widgets.auth import APPTEST_COOKIE_KEY
from tests.pages.app_helpers import ask, run_app, texts

EDNA_ASKS = "Which lattice solvers does edna compare?"
VERA_ASKS = "What does vera's walrus hypothesis predict?"
LOCAL_ASKS = "What does the local user ask about heliotropes?"
OLD_QUESTION = "A question from before histories had owners?"
OLD_SCHEMA = """CREATE TABLE query_history (id TEXT PRIMARY KEY, ts REAL NOT NULL, question TEXT NOT NULL,
    mode TEXT NOT NULL, batch TEXT NOT NULL DEFAULT '', summary TEXT NOT NULL DEFAULT '', payload TEXT NOT NULL);
CREATE INDEX query_history_by_ts ON query_history(ts);"""


def _add(store: QueryHistoryStore, entry_id: str, owner: str, ts: float, keep: int = 10) -> None:
    store.add(entry_id=entry_id, ts=ts, question=f"q-{entry_id}", mode="naive", batch="", summary="s",
              payload="{}", keep=keep, owner=owner)


def test_the_store_keeps_prunes_and_clears_per_owner(tmp_path):
    store = QueryHistoryStore(Database(tmp_path / "db.sqlite"))
    for i in range(4):
        _add(store, f"a{i}", "account:a", float(i), keep=3)
        _add(store, f"b{i}", "account:b", float(i) + 0.5, keep=3)
    assert [r["id"] for r in store.recent(10, ["account:a"])] == ["a3", "a2", "a1"]  # a's own three newest
    assert [r["id"] for r in store.recent(10, ["account:b"])] == ["b3", "b2", "b1"]  # not pushed out by a's
    store.clear("account:a")
    assert store.recent(10, ["account:a"]) == [] and len(store.recent(10, ["account:b"])) == 3


def test_old_rows_get_no_owner_and_show_to_editors_only(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:  # the table as the previous version made and filled it
        conn.executescript(OLD_SCHEMA)
        conn.execute("INSERT INTO query_history VALUES ('old1', 1.0, ?, 'naive', '', 'an old answer', '{}')",
                     (OLD_QUESTION,))
    store = QueryHistoryStore(Database(path))
    assert store.recent(10, ["account:vera"]) == []
    (row,) = store.recent(10, [history.UNKNOWN_OWNER])
    assert row["owner"] == "" and row["question"] == OLD_QUESTION
    _add(store, "new1", "account:vera", 2.0)  # the migrated table takes owned rows
    assert [r["id"] for r in store.recent(10, ["account:vera", ""])] == ["new1", "old1"]


def test_each_workspace_keeps_its_own_history(tmp_path):
    one, two = (open_library(Workspace(tmp_path / name)) for name in ("one", "two"))
    _add(one.history, "x1", history.account_owner("edna"), 1.0)
    assert [e.id for e in history.recent(one, history.account_owner("edna"))] == ["x1"]
    assert history.recent(two, history.account_owner("edna")) == []


def _signed_in_ask(monkeypatch, root, name: str, password: str):
    outcome = sessions.sign_in(name, password, "127.0.0.1")
    assert outcome.cookie, outcome.refused
    at = run_app(monkeypatch, root)  # the sign-in page
    at.session_state[APPTEST_COOKIE_KEY] = outcome.cookie
    at.run()  # signed in: the navigation registers the pages
    at.switch_page("pages/ask.py")
    at.run()
    assert texts(at.title) == "Ask", texts(at.title)  # signed in: not the sign-in page
    return at


def _history(at) -> str:
    at.session_state["ask_history"] = True  # open "Recent questions"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return texts(at.markdown).replace("\\", "") + texts(at.caption)


@pytest.mark.slow
def test_two_accounts_never_see_each_others_questions(monkeypatch, ready_workspace):
    root = ready_workspace.root
    # An entry as the previous version kept it: no owner; just older than this test's question, so the questions
    # other tests asked in the shared workspace do not push it out of the twenty shown.
    open_library(Workspace(root)).history.add(entry_id="legacy-1", ts=time.time() - 1, question=OLD_QUESTION,
                                              mode="naive", batch="", summary="an old answer", payload="{}", keep=10)

    # The loopback user without sign-in: its own owner, an editor (so it sees the unowned entries, marked).
    local = ask(run_app(monkeypatch, root, "pages/ask.py"), LOCAL_ASKS)
    shown = _history(local)
    assert LOCAL_ASKS in shown and OLD_QUESTION in shown and "asked before histories were kept per account" in shown

    monkeypatch.setenv(accounts.REQUIRE_SIGNIN_ENV, "1")
    accounts.add_account("edna", "editor-pass-1", "editor")
    accounts.add_account("vera", "viewer-pass-1", "viewer")
    edna = ask(_signed_in_ask(monkeypatch, root, "edna", "editor-pass-1"), EDNA_ASKS)
    vera = ask(_signed_in_ask(monkeypatch, root, "vera", "viewer-pass-1"), VERA_ASKS)

    seen_by_edna, seen_by_vera = _history(edna), _history(vera)
    print(f"edna's list:\n{seen_by_edna}\n\nvera's list:\n{seen_by_vera}")
    assert EDNA_ASKS in seen_by_edna and VERA_ASKS not in seen_by_edna and LOCAL_ASKS not in seen_by_edna
    assert OLD_QUESTION in seen_by_edna  # an editor: the unowned entries, marked
    assert VERA_ASKS in seen_by_vera and EDNA_ASKS not in seen_by_vera and LOCAL_ASKS not in seen_by_vera
    assert OLD_QUESTION not in seen_by_vera  # a viewer: none of them
    # A new session of vera's (a reload): still only hers.
    again = _history(_signed_in_ask(monkeypatch, root, "vera", "viewer-pass-1"))
    assert VERA_ASKS in again and EDNA_ASKS not in again
