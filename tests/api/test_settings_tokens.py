"""The Settings page's API tokens through Streamlit's AppTest: the local user on loopback creates a token for an
account (shown once, verifiable), sees it listed, and revokes it."""
from __future__ import annotations

import pytest

from core.settings import tokens
from core.settings.accounts import add_account
from tests.pages.app_helpers import run_app, texts

pytestmark = pytest.mark.slow  # the app runs several times (~10 s)


def test_the_settings_page_creates_lists_and_revokes_a_token(monkeypatch, tmp_path):
    add_account("edna", "a long enough password", "editor")
    at = run_app(monkeypatch, tmp_path / "ws", "pages/settings.py")
    assert "API tokens" in [h.value for h in at.subheader]
    at.selectbox(key="api_token_scope").set_value("viewer")
    at.number_input(key="api_token_days").set_value(7)
    next(b for b in at.button if b.label == "Create token").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = [c.value for c in at.code if c.value.startswith("pgt_")]
    assert len(shown) == 1 and "shown this once" in texts(at.warning)
    record = tokens.verify_token(shown[0])
    assert record and record.name == "edna" and record.role == "viewer"
    assert record.id in texts(at.markdown)
    at.run()  # the next run shows it no more
    assert not [c.value for c in at.code if c.value.startswith("pgt_")]
    at.button(key=f"revoke_token_{record.id}").click()
    at.run()
    assert not at.exception and tokens.verify_token(shown[0]) is None
    assert record.id not in texts(at.markdown)
