"""Reading the JSON a prompt asks for out of a reply that may wrap it in a code fence (closed or cut off) or
prose, or leave a trailing comma: what small local models and chatty API models both do. Every LLM or VLM reply
that should be JSON is read here: graph extraction, community reports and search, query keywords, the LLM
reranker, media descriptions and evaluation."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)(?:```|$)", re.S)  # a fence cut off by the token limit still counts
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_FLAT_OBJECT = re.compile(r"\{[^{}]*\}")


def read_json_object(text: str) -> dict[str, Any] | None:
    """The first candidate that parses as a JSON object, or None when there is none."""
    return _first_parsed(text, (dict,))


def read_json(text: str) -> dict[str, Any] | list | None:
    """The first candidate that parses as a JSON object or array, or None when there is none."""
    return _first_parsed(text, (dict, list))


def flat_json_objects(text: str) -> list[dict[str, Any]]:
    """Every complete object in the text that holds no other, in order: the finished records of a reply cut off
    at the token limit, whose outer object or list never closes."""
    found = (_parsed(m.group(), (dict,)) for m in _FLAT_OBJECT.finditer(text or ""))
    return [data for data in found if data is not None]


def read_first_object(text: str) -> dict[str, Any] | None:
    """The text's first balanced {...} (strings and escapes respected) read as an object, or None: for a reply
    that may hold a second object or stray braces after the one asked for."""
    blob = _first_balanced(text or "")
    return _parsed(blob, (dict,)) if blob is not None else None


def json_candidates(text: str) -> Iterator[str]:
    """Where the JSON may be, most likely first: inside fences, the whole reply, the outermost braces."""
    for match in _FENCE.finditer(text):
        yield match.group(1).strip()
    yield text.strip()
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        yield text[start:end + 1]


def _first_parsed(text: str | None, kinds: tuple[type, ...]) -> Any:
    for candidate in json_candidates(text or ""):
        data = _parsed(candidate, kinds)
        if data is not None:
            return data
    return None


def _parsed(candidate: str, kinds: tuple[type, ...]) -> Any:
    """The candidate as JSON of one of `kinds`, as written or without its trailing commas; None otherwise."""
    for attempt in (candidate, _TRAILING_COMMA.sub(r"\1", candidate)):
        try:
            data = json.loads(attempt)
        except ValueError:
            continue
        if isinstance(data, kinds):
            return data
    return None


def _first_balanced(text: str) -> str | None:
    """The first {...} whose braces balance outside strings; an opening brace that never closes (a reply cut
    off) is skipped for the next one."""
    start = text.find("{")
    while start != -1:
        depth, in_string, escaped = 0, False, False
        for i in range(start, len(text)):
            ch = text[i]
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
                continue
            if ch == '"':
                in_string = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return text[start:i + 1]
        start = text.find("{", start + 1)
    return None


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
