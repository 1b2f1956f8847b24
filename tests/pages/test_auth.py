"""Safe to share: the app through Streamlit's AppTest with the server address it would listen on.

Loopback (the default) serves the single local user as an editor, as before. Served to a network it refuses to
show anything without sign-in configured, shows a banner when opened anyway (PAPERGRAPH_INSECURE=1), and otherwise
asks every session to sign in; a viewer sees and can do no editor action, even with forged session state.

AppTest has no server socket: `server.address` is set per run with patch_config_options (pages/widgets/auth.py
reads it through streamlit.config, the name that patch reaches). Nor can it send cookies: a session's cookie,
made by core.service.sessions as the /sign-in form makes it, goes in under auth.APPTEST_COOKIE_KEY, read only
under AppTest. The form itself, the cookie's attributes and the attacks on it are tested on a real server
(tests/security/test_shared_app.py, tests/pages/test_browser_auth.py). After switch_page, AppTest runs the page file
on its own, without app.py — as Streamlit does for a deep link before the first st.navigation call of a server —
so those runs check each page's own guard.
"""
from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.util import patch_config_options

from core.library import open_library
from core.presentation.graph import graph_index
from core.schema.graph import PAPER_PREFIX
from core.service import sessions
from core.settings import accounts
from core.settings.workspace import Workspace
from pages.widgets.auth import APPTEST_COOKIE_KEY
from tests.paths import APP, REPO

pytestmark = pytest.mark.slow  # each test runs the app (and bcrypt at cost 12) several times

EXPOSED = "0.0.0.0"
PAGES = ["library", "document", "ask", "compare", "search", "graph", "gallery", "results", "evaluate", "settings"]
EDITOR_PASSWORD, VIEWER_PASSWORD = "editor-pass-1", "viewer-pass-1"
REFUSAL_HINT = "python -m core users add NAME --role editor"


def run(at: AppTest, address: str | None = EXPOSED) -> AppTest:
    with patch_config_options({"server.address": address}):
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def new_app(monkeypatch, root, address: str | None = EXPOSED, cookie: str | None = None) -> AppTest:
    """The app's first run; with `cookie`, as a browser that signed in earlier opens it (a reload, a new tab)."""
    monkeypatch.setenv("PAPERGRAPH_WORKSPACE", str(root))
    at = AppTest.from_file(APP, default_timeout=90)
    if cookie:
        at.session_state[APPTEST_COOKIE_KEY] = cookie
    return run(at, address)


def deep_link(monkeypatch, root, page: str, address: str | None = EXPOSED, session: dict | None = None) -> AppTest:
    """A request for pages/<page>.py: the pages are registered in a loopback run, then the page is asked for."""
    at = new_app(monkeypatch, root, address=None)
    at.switch_page(f"pages/{page}.py")
    for key, value in (session or {}).items():
        at.session_state[key] = value
    return run(at, address)


def texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


def labels(at: AppTest) -> set[str]:
    return {b.label for b in at.button}


def nav_pages(at: AppTest) -> set[str]:
    return {info.get("url_pathname") or "library" for info in at._registered_pages.values()}


def sign_in(at: AppTest, name: str, password: str) -> AppTest:
    """What the /sign-in form does (core.service.sessions.sign_in), its cookie handed to the session."""
    outcome = sessions.sign_in(name, password, "127.0.0.1")
    assert outcome.cookie, outcome.refused
    at.session_state[APPTEST_COOKIE_KEY] = outcome.cookie
    return run(at)


@pytest.fixture
def two_accounts():
    accounts.add_account("edna", EDITOR_PASSWORD, "editor")
    accounts.add_account("vera", VIEWER_PASSWORD, "viewer")


def test_loopback_default_is_the_local_editor_with_every_page(monkeypatch, tmp_path):
    for address in (None, "127.0.0.1"):  # AppTest's own (no socket) and what `make run` passes
        at = new_app(monkeypatch, tmp_path / "ws", address=address)
        assert texts(at.title) == "Library" and len(at.file_uploader) == 2
        # No sign-in form: the only text inputs are the Library's own (the local editor's import of a folder).
        assert "Sign in" not in labels(at) and not at.warning
        assert {t.key for t in at.text_input} <= {"library_import_path", "library_import_collection"}
        assert nav_pages(at) == set(PAGES)
        at.switch_page("pages/settings.py")
        run(at, address)
        assert texts(at.title) == "Settings" and "Save settings" in labels(at)


def test_served_to_the_network_without_sign_in_every_page_is_refused(monkeypatch, tmp_path):
    at = new_app(monkeypatch, tmp_path / "ws")
    assert texts(at.title) == "PaperGraph" and REFUSAL_HINT in texts(at.error)
    # The navigation holds the refusal only, under every page's address (a deep link shows it, not "Page not found").
    assert not at.sidebar.children
    assert {info["page_name"] for info in at._registered_pages.values()} == {"Not shared safely"}
    assert nav_pages(at) == set(PAGES)
    for page in PAGES:
        at = deep_link(monkeypatch, tmp_path / "ws", page)
        assert texts(at.title) == "PaperGraph", page
        assert REFUSAL_HINT in texts(at.error) and "0.0.0.0" in texts(at.error), page
        assert not at.file_uploader and not at.text_input and not at.button and not at.dataframe, page


def test_require_signin_on_loopback_without_any_account_is_refused(monkeypatch, tmp_path):
    monkeypatch.setenv(accounts.REQUIRE_SIGNIN_ENV, "1")
    at = new_app(monkeypatch, tmp_path / "ws", address="127.0.0.1")
    assert REFUSAL_HINT in texts(at.error) and not at.file_uploader


def test_served_to_the_network_insecurely_shows_a_banner_on_every_page(monkeypatch, tmp_path):
    monkeypatch.setenv(accounts.INSECURE_ENV, "1")
    at = new_app(monkeypatch, tmp_path / "ws")
    assert "open to the network without sign-in" in texts(at.warning)
    assert texts(at.title) == "Library" and len(at.file_uploader) == 2
    for page in PAGES:
        at = deep_link(monkeypatch, tmp_path / "ws", page)
        assert "open to the network without sign-in" in texts(at.warning), page
        assert texts(at.title) != "Sign in", page


def test_a_session_is_signed_in_by_its_cookie_checked_again_at_every_run(monkeypatch, tmp_path, two_accounts):
    at = new_app(monkeypatch, tmp_path / "ws")
    assert texts(at.title) == "Sign in" and not at.file_uploader and not at.sidebar.children
    assert not at.text_input  # no password is typed into the app: the form is the server's (/sign-in)
    # A forged or unsigned cookie signs no one in.
    at.session_state[APPTEST_COOKIE_KEY] = "forged-token.0123"
    run(at)
    assert texts(at.title) == "Sign in" and not at.file_uploader
    sign_in(at, "vera", VIEWER_PASSWORD)
    assert texts(at.title) == "Library" and not at.file_uploader
    run(at)
    assert texts(at.title) == "Library"
    # A reload or a new tab: a new session, the same cookie, still signed in.
    tab = new_app(monkeypatch, tmp_path / "ws", cookie=at.session_state[APPTEST_COOKIE_KEY])
    assert texts(tab.title) == "Library" and "Signed in as **vera** (viewer)" in texts(tab.sidebar.caption)
    # Signed out elsewhere (another tab's Sign out deletes the session on the server): the next run is signed out.
    assert sessions.close_session(at.session_state[APPTEST_COOKIE_KEY])
    run(at)
    assert texts(at.title) == "Sign in" and "signed out" in texts(at.info)


def test_a_viewer_sees_no_editor_control_and_cannot_act_with_forged_state(monkeypatch, ready_workspace,
                                                                          two_accounts):
    root = ready_workspace.root
    lib = open_library(Workspace(root))
    at = new_app(monkeypatch, root, cookie=sessions.sign_in("vera", VIEWER_PASSWORD, "::1").cookie)
    # Library: the table, no uploader, no retry / delete / rebuild / merge, and no Settings in the navigation.
    assert texts(at.title) == "Library" and at.dataframe and not at.file_uploader
    assert nav_pages(at) == set(PAGES) - {"settings"}
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page("pages/settings.py")
    # A pending deletion and a "Yes, delete" click forged into the session delete nothing.
    at.session_state["confirm_delete"] = [ready_workspace.doc_id]
    at.session_state["confirm_delete_yes"] = True
    run(at)
    assert not at.exception and "Yes, delete" not in labels(at)
    assert not {"Find likely duplicates", "Dismiss"} & labels(at)
    assert [d.id for d in lib.documents.list()] == [ready_workspace.doc_id]

    # Graph: an entity and one of its relations opened by URL; no rename, retype, merge, delete or undo.
    index = graph_index.load_index(lib)
    key = max((k for k in index.nodes if not k.startswith(PAPER_PREFIX)), key=index.degree)
    edge = next(e for e in lib.graph.node_edges(key)
                if not e.source.startswith(PAPER_PREFIX) and not e.target.startswith(PAPER_PREFIX))
    at.switch_page("pages/graph.py")
    at.query_params["entity"] = key
    at.query_params["edge"] = f"{edge.source}|{edge.target}"
    at.session_state[f"g_confirm_delete_{key}"] = True  # forged confirmation of an entity deletion
    run(at)
    assert texts(at.title) == "Graph" and index.nodes[key].name in texts(at.subheader)
    editor_buttons = {"Rename", "Change type", "Delete the entity", "Delete this relation", "Undo"}
    assert not editor_buttons & labels(at)
    assert not any(label.startswith("Merge") for label in labels(at))
    assert "Fix this entity" not in [e.label for e in at.expander]
    assert key in graph_index.load_index(open_library(Workspace(root))).nodes

    # Gallery: no re-describe. Evaluate: results and leaderboard only.
    at.switch_page("pages/gallery.py")
    run(at)
    assert texts(at.title) == "Gallery" and "Re-describe" not in labels(at)
    at.switch_page("pages/evaluate.py")
    run(at)
    assert [t.label for t in at.tabs] == ["Results", "Leaderboard"]
    assert not {"Start the run", "Add the question set", "Judge", "Generate"} & labels(at)
    # Search and Ask work for a viewer.
    at.switch_page("pages/search.py")
    run(at)
    assert texts(at.title) == "Search"


def test_a_viewer_asking_for_settings_directly_is_refused_server_side(monkeypatch, tmp_path, two_accounts):
    vera = sessions.open_session("vera")
    at = deep_link(monkeypatch, tmp_path / "ws", "settings", session={APPTEST_COOKIE_KEY: vera})
    assert "Only an editor can do this" in texts(at.error)
    assert texts(at.title) != "Settings" and "Save settings" not in labels(at) and not at.text_input
    # Not signed in at all: the page shows the sign-in form itself.
    at = deep_link(monkeypatch, tmp_path / "ws", "library")
    assert texts(at.title) == "Sign in" and not at.file_uploader


def test_an_editor_has_every_control_and_the_settings_page(monkeypatch, tmp_path, two_accounts):
    at = new_app(monkeypatch, tmp_path / "ws", cookie=sessions.sign_in("edna", EDITOR_PASSWORD, "::1").cookie)
    assert texts(at.title) == "Library" and len(at.file_uploader) == 2
    assert nav_pages(at) == set(PAGES) and "Sign out" in [b.label for b in at.sidebar.button]
    # (Signing out is clicked in tests/pages/test_browser_auth.py: AppTest's later runs skip app.py's sidebar.)
    at.switch_page("pages/settings.py")
    run(at)
    assert texts(at.title) == "Settings" and "Save settings" in labels(at)


def test_a_removed_or_demoted_account_loses_its_rights_at_the_next_run(monkeypatch, tmp_path, two_accounts):
    at = new_app(monkeypatch, tmp_path / "ws")
    sign_in(at, "edna", EDITOR_PASSWORD)
    assert at.file_uploader
    accounts.add_account("edna", EDITOR_PASSWORD, "viewer")
    run(at)
    assert texts(at.title) == "Library" and not at.file_uploader
    accounts.remove_account("edna")
    run(at)
    assert texts(at.title) == "Sign in"


OIDC_SECRETS = {
    "auth": {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "test-cookie-secret",
             "client_id": "papergraph", "client_secret": "test-client-secret",
             "server_metadata_url": "https://id.example.org/.well-known/openid-configuration"},
    "papergraph": {"editors": ["ed@example.org"], "viewers": ["*@example.org"]},
}


def oidc_app(monkeypatch, root, user: dict | None) -> AppTest:
    monkeypatch.setenv("PAPERGRAPH_WORKSPACE", str(root))
    at = AppTest.from_file(APP, default_timeout=90)
    at.secrets.update(OIDC_SECRETS)
    if user is not None:
        at.user = user
    return run(at)


def test_openid_connect_sign_in_with_roles_from_the_allow_lists(monkeypatch, tmp_path):
    at = oidc_app(monkeypatch, tmp_path / "ws", None)
    assert texts(at.title) == "Sign in" and "Sign in with your organisation's account" in labels(at)
    assert not at.text_input  # no PaperGraph account: no password form
    at = oidc_app(monkeypatch, tmp_path / "ws", {"is_logged_in": True, "email": "vi@example.org"})
    assert texts(at.title) == "Library" and not at.file_uploader and "settings" not in nav_pages(at)
    at = oidc_app(monkeypatch, tmp_path / "ws", {"is_logged_in": True, "email": "ed@example.org"})
    assert texts(at.title) == "Library" and len(at.file_uploader) == 2 and "settings" in nav_pages(at)
    at = oidc_app(monkeypatch, tmp_path / "ws", {"is_logged_in": True, "email": "someone@gmail.com"})
    assert texts(at.title) == "Sign in" and "may not use this PaperGraph" in texts(at.error)


def cli(*args: str, stdin: str = "", config_dir) -> subprocess.CompletedProcess:
    env = dict(os.environ, PAPERGRAPH_CONFIG_DIR=str(config_dir))
    return subprocess.run([sys.executable, "-m", "core", "users", *args], input=stdin, capture_output=True,
                          text=True, cwd=REPO, env=env, timeout=120)


def test_users_add_list_remove_from_the_command_line(tmp_path, monkeypatch):
    config = tmp_path / "cli-config"
    added = cli("add", "edna", "--role", "editor", stdin=EDITOR_PASSWORD + "\n", config_dir=config)
    assert added.returncode == 0, added.stderr
    assert "edna (editor)" in added.stdout and EDITOR_PASSWORD not in added.stdout + added.stderr
    assert cli("add", "vera", "--role", "viewer", stdin=VIEWER_PASSWORD + "\n", config_dir=config).returncode == 0
    path = config / accounts.ACCOUNTS_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert EDITOR_PASSWORD not in text and VIEWER_PASSWORD not in text and "$2b$" in text
    listed = cli("list", config_dir=config)
    assert listed.returncode == 0 and listed.stdout.split("\n")[:2] == ["edna\teditor", "vera\tviewer"]
    assert "$2b$" not in listed.stdout
    # A password reset signs out the sessions the old password opened.
    monkeypatch.setenv("PAPERGRAPH_CONFIG_DIR", str(config))
    old = sessions.open_session("edna")
    reset = cli("add", "edna", "--role", "editor", stdin="new-editor-pass\n", config_dir=config)
    assert reset.returncode == 0 and "signed out 1 session(s) of edna" in reset.stdout
    assert sessions.session_for(old) is None
    short = cli("add", "sam", "--role", "viewer", stdin="short\n", config_dir=config)
    assert short.returncode != 0 and "too short" in short.stderr
    assert cli("remove", "vera", config_dir=config).returncode == 0
    assert cli("list", config_dir=config).stdout.split("\n")[0] == "edna\teditor"
    assert "vera" not in path.read_text()
    missing = cli("remove", "vera", config_dir=config)
    assert missing.returncode != 0 and "no account named" in missing.stderr
