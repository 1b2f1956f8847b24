"""The one private Streamlit switch PaperGraph relies on, pinned (docs/architecture.md, "Why pages/ needs a
switch"): a `pages/` folder beside the main script makes Streamlit treat the app as a legacy multipage app until
some run calls st.navigation, and serve.py turns that off before the first session. When a Streamlit upgrade
renames the switch or stops reading the folder, these tests say so."""
from __future__ import annotations

import runpy

from tests.paths import REPO


def test_streamlit_reads_a_pages_folder_as_a_legacy_app_unless_told_otherwise(monkeypatch):
    from streamlit.runtime.pages_manager import PagesManager

    monkeypatch.setattr(PagesManager, "uses_pages_directory", None)
    PagesManager(str(REPO / "app.py"))
    assert PagesManager.uses_pages_directory is True  # the behaviour the switch exists for


def test_serve_py_turns_the_legacy_mode_off_before_any_session(monkeypatch):
    from streamlit.runtime.pages_manager import PagesManager

    monkeypatch.setattr(PagesManager, "uses_pages_directory", None)
    runpy.run_path(str(REPO / "serve.py"))
    PagesManager(str(REPO / "app.py"))  # what a session's first run builds
    assert PagesManager.uses_pages_directory is False
