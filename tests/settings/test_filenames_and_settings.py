import json

import pytest

from core.settings.config import Settings, SettingsError, load_settings, save_settings
from core.text.filenames import safe_filename


@pytest.mark.parametrize("raw, expected", [
    ("paper.pdf", "paper.pdf"),
    ("../../etc/passwd.pdf", "passwd.pdf"),
    ("..\\..\\windows\\evil.pdf", "evil.pdf"),
    ("<script>alert(1)</script>.pdf", "script_.pdf"),
    ("<img src=x onerror=alert(1)>.pdf", "img src_x onerror_alert(1)_.pdf"),
    ("", "document.pdf"),
    ("....", "document.pdf"),
    ("name\x00with\nnul.pdf", "namewithnul.pdf"),
])
def test_safe_filename_strips_paths_html_and_control_characters(raw, expected):
    assert safe_filename(raw) == expected


def test_safe_filename_keeps_the_extension_of_long_names():
    name = safe_filename("a" * 500 + ".pdf")
    assert len(name) <= 120 and name.endswith(".pdf")


def test_settings_round_trip_and_env_override(tmp_path, monkeypatch):
    path = tmp_path / "settings.json"
    settings = Settings()
    settings.chunking.chunk_tokens = 800
    settings.parsing.backend = "builtin"
    save_settings(settings, path)
    monkeypatch.setenv("CHROMA_HOST", "127.0.0.1")
    monkeypatch.setenv("CHROMA_PORT", "9123")
    loaded = load_settings(path)
    assert loaded.chunking.chunk_tokens == 800 and loaded.parsing.backend == "builtin"
    assert (loaded.store.chroma_host, loaded.store.chroma_port) == ("127.0.0.1", 9123)


def test_invalid_settings_are_rejected_with_a_message(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"parsing": {"mineru_tier": "turbo"}}))
    with pytest.raises(SettingsError, match="MinerU tier"):
        load_settings(path)
    path.write_text(json.dumps({"chunking": {"chunk_tokens": "many"}}))
    with pytest.raises(SettingsError, match="chunk_tokens"):
        load_settings(path)
    path.write_text("{not json")
    with pytest.raises(SettingsError, match="not valid JSON"):
        load_settings(path)


def test_unknown_settings_keys_are_ignored(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"parsing": {"backend": "builtin", "retired_knob": 3}, "future": {}}))
    assert load_settings(path).parsing.backend == "builtin"


def test_the_environment_override_is_not_what_an_editor_sees(tmp_path, monkeypatch):
    path = tmp_path / "settings.json"
    save_settings(Settings(), path)
    monkeypatch.setenv("CHROMA_HOST", "10.1.2.3")
    assert load_settings(path).store.chroma_host == "10.1.2.3"
    assert load_settings(path, apply_environment=False).store.chroma_host == ""
