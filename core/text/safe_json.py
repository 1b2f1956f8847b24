"""JSON from files a user hands us (content lists, question sets): bounded in size and depth, strings valid.

Python's json module raises RecursionError on deeply nested input (100k "[" is enough) and accepts NaN and
Infinity; neither is a message a user can act on. `load_untrusted_json` reads the text, refuses what is too big or
too deep with a JsonLimitError, and returns data whose strings are valid Unicode (lone surrogates replaced).
"""
from __future__ import annotations

import json
from typing import Any

from core.text.unicode import valid_unicode

MAX_JSON_DEPTH = 64  # a content list or question set is 3-4 levels deep; 64 leaves room for MinerU's extras


class JsonLimitError(ValueError):
    """The JSON is too large or nested too deeply; the message says which limit."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:40]} is too large")
    return value


def load_untrusted_json(text: str, *, max_chars: int, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse `text`; raises json.JSONDecodeError for bad syntax (NaN / Infinity included) and JsonLimitError."""
    if len(text) > max_chars:
        raise JsonLimitError(f"it is {len(text):,} characters long, more than the {max_chars:,} allowed")
    try:
        data = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except RecursionError:
        raise JsonLimitError(f"it is nested more than {max_depth} levels deep") from None
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError):
            raise
        raise json.JSONDecodeError(str(exc), text, 0) from None
    return _checked(data, max_depth)


def _checked(data: Any, max_depth: int) -> Any:
    """Depth check and string repair in one iterative walk (no recursion: the input decides the depth)."""
    root = [data]
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack:
        container, depth = stack.pop()
        if depth > max_depth:
            raise JsonLimitError(f"it is nested more than {max_depth} levels deep")
        if isinstance(container, list):
            for i, value in enumerate(container):
                if isinstance(value, str):
                    container[i] = valid_unicode(value)
                elif isinstance(value, (list, dict)):
                    stack.append((value, depth + 1))
        else:
            for key in list(container):
                value = container[key]
                fixed_key = valid_unicode(key)
                if fixed_key != key:
                    del container[key]
                    container[fixed_key] = value
                if isinstance(value, str):
                    container[fixed_key] = valid_unicode(value)
                elif isinstance(value, (list, dict)):
                    stack.append((value, depth + 1))
    return root[0]


__all__ = ["JsonLimitError", "MAX_JSON_DEPTH", "load_untrusted_json"]
