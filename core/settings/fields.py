"""A setting described once: its default, label, help, choices and bounds live on its dataclass field.

The Settings page draws its form from this metadata and `validate` checks single fields from it, so a new knob
needs no entry anywhere else. Rules that tie two fields together stay written out in config.py.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any

SPEC = "papergraph"  # the metadata key, so other metadata on the same field cannot collide with ours


class SettingsError(ValueError):
    pass


@dataclass(frozen=True)
class FieldSpec:
    name: str
    label: str
    help: str = ""
    choices: tuple[str, ...] | None = None
    min: float | None = None  # inclusive
    max: float | None = None  # inclusive
    above: float | None = None  # exclusive lower bound, for values that must be positive (timeouts)


def setting(default: Any = MISSING, *, label: str, help: str = "", choices: Iterable[str] | None = None,
            min: float | None = None, max: float | None = None, above: float | None = None) -> Any:
    """`dataclasses.field` carrying a FieldSpec. A list default is copied per instance, as default_factory would."""
    spec = {"label": label, "help": help, "choices": tuple(choices) if choices is not None else None,
            "min": min, "max": max, "above": above}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata={SPEC: spec})
    return field(default=default, metadata={SPEC: spec})


def spec_of(f: Field) -> FieldSpec:
    """A field's spec; a field declared without `setting` gets a label made from its name."""
    meta = f.metadata.get(SPEC)
    if meta is None:
        return FieldSpec(f.name, f.name.replace("_", " ").capitalize())
    return FieldSpec(f.name, **meta)


def specs(config: Any) -> list[FieldSpec]:
    """The specs of a config dataclass (class or instance), in declaration order."""
    return [spec_of(f) for f in fields(config)]


def field_spec(config: Any, name: str) -> FieldSpec:
    for spec in specs(config):
        if spec.name == name:
            return spec
    raise KeyError(f"{type(config).__name__ if not isinstance(config, type) else config.__name__} has no {name!r}")


def _number(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def field_problem(section: str, spec: FieldSpec, value: Any) -> str | None:
    """What is wrong with one value, in words that name the setting as the page and the file both do."""
    where = f"{spec.label} ({section}.{spec.name})"
    if spec.choices is not None and value not in spec.choices:
        return f"{where} must be one of {', '.join(spec.choices)}; not {value!r}"
    # bool is an int to Python, but a toggle has no bounds.
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    low, high = spec.min, spec.max
    if spec.above is not None and not value > spec.above:
        return f"{where} must be more than {_number(spec.above)}, not {_number(value)}"
    if (low is not None and value < low) or (high is not None and value > high):
        if low is not None and high is not None:
            return f"{where} must be between {_number(low)} and {_number(high)}, not {_number(value)}"
        if low is not None:
            return f"{where} must be at least {_number(low)}, not {_number(value)}"
        return f"{where} must be at most {_number(high)}, not {_number(value)}"
    return None


def check_fields(section: str, config: Any) -> None:
    for spec in specs(config):
        problem = field_problem(section, spec, getattr(config, spec.name))
        if problem:
            raise SettingsError(problem)
