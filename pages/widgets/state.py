"""The app's shared resources: one Library and one background ingestor per workspace, kept across reruns and
sessions with st.cache_resource. The only module besides the pages that imports Streamlit."""
from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit import config

from core.library import Library, open_library
from core.pipeline.worker import BackgroundIngestor
from core.query.warmup import start_warm_up
from core.settings.config import Settings
from core.settings.workspace import Workspace, default_workspace

POLL_SECONDS = 1.5


def workspace_root() -> str:
    """The workspace this run serves (PAPERGRAPH_WORKSPACE, read at every run, or the repo's data/)."""
    return str(default_workspace().root)


@st.cache_resource(show_spinner=False, max_entries=8)
def _library(root: str) -> Library:
    lib = open_library(Workspace(Path(root)))
    if not config.get_option("global.appTest"):  # AppTest scripts ask their own questions, timed
        start_warm_up(lib)
    return lib


@st.cache_resource(show_spinner=False, max_entries=8)
def _ingestor(root: str) -> BackgroundIngestor:
    return BackgroundIngestor(_library(root))


@st.cache_resource(show_spinner=False, max_entries=8)
def _eval_jobs(root: str):
    from core.eval.background import EvalJobs

    return EvalJobs(_library(root))


def eval_jobs():
    """The workspace's evaluation runs in progress (threads of this server process)."""
    return _eval_jobs(workspace_root())


def library() -> Library:
    return _library(workspace_root())


def ensure_entry_point() -> None:
    """Every page runs inside app.py (navigation, sidebar, sign-in). Streamlit 1.67 runs a server's first
    requests in its legacy multipage mode while a pages/ folder sits beside app.py, until some run of app.py
    calls st.navigation: a deep link (/document?doc=…) as the very first request would run the page script
    alone. Every page calls this first (auth.page_guard): it leaves legacy mode and reruns, and the
    rerun goes through app.py to the same page and query. A no-op once app.py has run st.navigation."""
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    if not PagesManager.uses_pages_directory or config.get_option("global.appTest"):
        return  # AppTest runs page files on their own by design
    PagesManager.uses_pages_directory = False
    ctx = get_script_run_ctx()
    page = ctx.pages_manager.get_pages().get(getattr(ctx, "active_script_hash", "")) if ctx else None
    if page and page.get("script_path"):  # the page and query the link asked for, now through app.py
        st.switch_page(page["script_path"], query_params=st.query_params.to_dict())
    st.rerun()


def ingestor() -> BackgroundIngestor:
    return _ingestor(workspace_root())


def kick_ingest() -> None:
    """Make sure queued documents are being processed (after an upload, a retry or an app restart)."""
    ingestor().kick()


def reset_settings(settings: Settings) -> None:
    """Write settings without opening the Library (whose settings file may be the broken thing)."""
    root = workspace_root()
    Workspace(Path(root)).save_settings(settings)
    _library.clear(root)


def reload_library() -> None:
    """After settings change: let the running ingest finish its document, then open the workspace afresh."""
    root = workspace_root()
    try:
        _ingestor(root).stop()
    finally:
        _ingestor.clear(root)
        _eval_jobs.clear(root)
        _library.clear(root)
