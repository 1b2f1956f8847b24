"""Named presets: partial settings shipped as data in presets/*.json, applied on top of the current settings.

A preset file is {"description": "...", "settings": {"llm": {"provider": ...}, ...}}. It names only what it
changes, so applying one keeps everything else (chunk sizes, the parser...) as the user set it. A preset never
carries an API key or a password: keys live in the credentials file (core.models.llm.secrets), whatever the preset.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from core.settings.config import Settings, settings_from_dict, validate
from core.settings.fields import SettingsError, field_spec

PRESETS_DIR = Path(__file__).resolve().parent / "presets"
# A field of this name would put a secret into settings.json, which is meant to be shared and exported.
SECRET_WORDS = ("key", "password", "secret")


@dataclass(frozen=True)
class Preset:
    name: str
    description: str
    settings: dict[str, dict[str, Any]]


@dataclass(frozen=True)
class Change:
    section: str
    name: str
    label: str
    old: Any
    new: Any

    def __str__(self) -> str:
        return f"{self.section}.{self.name}: {self.old!r} → {self.new!r}"


def _check(name: str, data: Any) -> Preset:
    """A preset names known sections and fields only: unlike an old settings.json, a typo here is a bug."""
    if not isinstance(data, dict) or not isinstance(data.get("settings"), dict):
        raise SettingsError(f"preset {name!r} must be an object with a 'settings' object")
    sections = {f.name: f.default_factory for f in fields(Settings)}
    for section, values in data["settings"].items():
        if section not in sections or not isinstance(values, dict):
            raise SettingsError(f"preset {name!r}: {section!r} is not a settings section")
        for key in values:
            if any(word in key.lower() for word in SECRET_WORDS):
                raise SettingsError(f"preset {name!r} must not carry {section}.{key}: secrets never go in presets")
            try:
                field_spec(sections[section], key)
            except KeyError:
                raise SettingsError(f"preset {name!r}: {section}.{key} is not a setting") from None
    return Preset(name, str(data.get("description", "")), data["settings"])


def list_presets() -> list[Preset]:
    return [load_preset(path.stem) for path in sorted(PRESETS_DIR.glob("*.json"))]


def preset_names() -> list[str]:
    return sorted(path.stem for path in PRESETS_DIR.glob("*.json"))


def load_preset(name: str) -> Preset:
    path = PRESETS_DIR / f"{name}.json"
    if name not in preset_names():
        raise SettingsError(f"no preset named {name!r}; there are: {', '.join(preset_names())}")
    try:
        return _check(name, json.loads(path.read_text(encoding="utf-8")))
    except json.JSONDecodeError as exc:
        raise SettingsError(f"preset {name!r} is not valid JSON: {exc}") from exc


def apply_preset(settings: Settings, name: str) -> Settings:
    """A new Settings: `settings` with the preset's values on top, validated (the argument is left as it was)."""
    preset = load_preset(name)
    merged = settings.to_dict()
    for section, values in preset.settings.items():
        merged[section].update(values)
    return validate(settings_from_dict(merged))


def preset_changes(settings: Settings, name: str) -> list[Change]:
    """What applying the preset would change, field by field: the Settings page and the CLI say it in words."""
    after = apply_preset(settings, name)
    changes = []
    for section in fields(Settings):
        old, new = getattr(settings, section.name), getattr(after, section.name)
        for f in fields(old):
            if getattr(old, f.name) != getattr(new, f.name):
                changes.append(Change(section.name, f.name, field_spec(old, f.name).label, getattr(old, f.name),
                                      getattr(new, f.name)))
    return changes
