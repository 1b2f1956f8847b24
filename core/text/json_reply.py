"""Reading the JSON a prompt asks for out of a reply that may wrap it in a code fence (closed or cut off) or
prose, or leave a trailing comma: what small local models and chatty API models both do. Shared by graph
extraction, community reports and evaluation."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)(?:```|$)", re.S)  # a fence cut off by the token limit still counts
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def read_json_object(text: str) -> dict[str, Any] | None:
    """The first candidate that parses as a JSON object, or None when there is none."""
    for candidate in json_candidates(text or ""):
        for attempt in (candidate, _TRAILING_COMMA.sub(r"\1", candidate)):
            try:
                data = json.loads(attempt)
            except ValueError:
                continue
            if isinstance(data, dict):
                return data
    return None


def json_candidates(text: str) -> Iterator[str]:
    """Where the JSON may be, most likely first: inside fences, the whole reply, the outermost braces."""
    for match in _FENCE.finditer(text):
        yield match.group(1).strip()
    yield text.strip()
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        yield text[start:end + 1]


def excerpt(text: str, limit: int = 80) -> str:
    """A reply's start, on one line, for an error message."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def key_lookup(data: dict[str, Any], *names: str) -> Any:
    """The value of the first key that matches one of `names`, ignoring case, spaces and underscores
    ("Overall Winner" matches "overall"): models rarely keep the exact spelling of the keys asked for."""
    normalised = {_norm(k): v for k, v in data.items() if isinstance(k, str)}
    for name in names:
        wanted = _norm(name)
        if wanted in normalised:
            return normalised[wanted]
    for name in names:
        wanted = _norm(name)
        for key, value in normalised.items():
            if key.startswith(wanted):
                return value
    return None


def _norm(key: str) -> str:
    return re.sub(r"[^a-z0-9]", "", key.lower())
