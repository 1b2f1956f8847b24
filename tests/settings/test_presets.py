"""Named presets shipped as data (core/settings/presets/*.json): each applies on top of the current settings and
validates, the CLI applies one to a workspace, and none ever carries an API key."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.settings.config import Settings, SettingsError
from core.settings.presets import PRESETS_DIR, _check, apply_preset, list_presets, preset_changes, preset_names
from core.settings.workspace import Workspace
from tests.paths import REPO


def cli(workspace: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(workspace))
    for name in ("CHROMA_HOST", "CHROMA_PORT"):  # `settings show` prints them on top of the file
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120)


def test_the_three_presets_ship_with_a_description():
    assert preset_names() == ["offline", "ollama", "openai"]
    for preset in list_presets():
        assert preset.description.strip() and preset.settings, preset.name


@pytest.mark.parametrize("name", ["offline", "ollama", "openai"])
def test_each_preset_applies_on_top_of_the_current_settings_and_validates(name):
    current = Settings()
    current.chunking.chunk_tokens = 900  # not named by any preset: kept
    current.llm.provider, current.llm.base_url, current.llm.model = "openai", "http://10.0.0.5:8000/v1", "qwen"
    before = current.to_dict()
    after = apply_preset(current, name)
    assert current.to_dict() == before, "the settings passed in are left as they were"
    assert after.chunking.chunk_tokens == 900
    for section, values in next(p for p in list_presets() if p.name == name).settings.items():
        for key, value in values.items():
            assert getattr(getattr(after, section), key) == value, (section, key)


def test_the_presets_say_what_they_are_for():
    offline = apply_preset(Settings(), "offline")
    assert (offline.llm.provider, offline.graph.extractor, offline.vlm.provider) == ("none", "spacy", "none")
    ollama = apply_preset(Settings(), "ollama")
    assert (ollama.llm.provider, ollama.llm.base_url, ollama.llm.model) == ("openai", "http://localhost:11434/v1",
                                                                              "llama3.1:8b")
    openai = apply_preset(Settings(), "openai")
    assert (openai.llm.provider, openai.llm.base_url, openai.llm.model) == ("openai", "https://api.openai.com/v1",
                                                                              "gpt-4o-mini")
    changes = {f"{c.section}.{c.name}": (c.old, c.new) for c in preset_changes(Settings(), "openai")}
    assert changes["llm.model"] == ("", "gpt-4o-mini") and "chunking.chunk_tokens" not in changes
    assert preset_changes(offline, "offline") == []


def test_a_preset_never_carries_a_key():
    for path in PRESETS_DIR.glob("*.json"):
        text = path.read_text().lower()
        assert "key" not in json.dumps(json.loads(text)["settings"]) and "sk-" not in text, path.name
    with pytest.raises(SettingsError, match="must not carry llm.api_key"):
        _check("leaky", {"settings": {"llm": {"api_key": "sk-123"}}})
    with pytest.raises(SettingsError, match="llm.modle is not a setting"):
        _check("typo", {"settings": {"llm": {"modle": "gpt-4o-mini"}}})
    with pytest.raises(SettingsError, match="no preset named 'fast'; there are: offline, ollama, openai"):
        apply_preset(Settings(), "fast")


@pytest.mark.slow
def test_the_cli_applies_a_preset_and_shows_the_settings(tmp_path):
    root = tmp_path / "ws"
    ws = Workspace(root).ensure()
    settings = Settings()
    settings.parsing.backend = "builtin"
    ws.save_settings(settings)

    out = cli(root, "settings", "preset", "ollama")
    assert out.returncode == 0, out.stderr
    assert "preset ollama applied" in out.stdout and "llm.model: '' → 'llama3.1:8b'" in out.stdout
    saved = json.loads((root / "settings.json").read_text())
    assert (saved["llm"]["provider"], saved["llm"]["base_url"]) == ("openai", "http://localhost:11434/v1")
    assert saved["parsing"]["backend"] == "builtin", "what the preset does not name is kept"
    assert "key" not in json.dumps(saved["llm"]).lower()
    assert not (tmp_path / "config").exists(), "no credentials file is written"
    assert not (root / "papergraph.sqlite").exists(), "settings need no database"

    shown = cli(root, "settings", "show")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == saved

    bad = cli(root, "settings", "preset", "turbo")
    assert bad.returncode != 0 and "no preset named 'turbo'" in bad.stderr
    assert json.loads((root / "settings.json").read_text()) == saved


@pytest.mark.slow
def test_the_settings_page_applies_a_preset_and_redraws_the_form_from_it(monkeypatch, tmp_path):
    from tests.pages.app_helpers import run_app, texts

    root = tmp_path / "ws"
    at = run_app(monkeypatch, root, "pages/settings.py")
    at.text_input(key="setting_llm_api_key").input("sk-typed-but-not-saved")
    assert at.selectbox(key="settings_preset").options == ["offline", "ollama", "openai"]
    at.selectbox(key="settings_preset").set_value("openai").run()
    captions = texts(at.caption)
    assert "OpenAI's API with gpt-4o-mini" in captions
    assert "It changes Provider (llm.provider) from 'none' to 'openai'; " in captions
    at.button(key="apply_preset").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "The openai preset is applied and saved: 3 settings changed." in texts(at.success)
    llm = json.loads((root / "settings.json").read_text())["llm"]
    assert (llm["provider"], llm["base_url"], llm["model"]) == ("openai", "https://api.openai.com/v1", "gpt-4o-mini")
    assert at.selectbox(key="setting_llm_provider").value == "openai"
    assert at.text_input(key="setting_llm_base_url").value == "https://api.openai.com/v1"
    assert at.text_input(key="setting_llm_model").value == "gpt-4o-mini"
    assert "It changes nothing: the saved settings already match it." in texts(at.caption)
    assert not (tmp_path / "config").exists() and "sk-typed" not in (root / "settings.json").read_text()
