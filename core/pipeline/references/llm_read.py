"""The LLM pass over a reference list, only when the workspace has an LLM: the entries the rules could not read
fully (no title, no year or no authors) are sent `llm_batch` at a time, and each field of the reply is taken only
when it is printed in that entry's text. A title or venue needs `llm_min_overlap` of its words in the entry, a
year, DOI or author's family name must appear in it as printed: the model may read an entry, never complete it.

A grounded field replaces the rules' guess (the rules failed on this entry) and is named in the record's
`llm_fields`. Anything else (an unknown `n`, an entry left out, a reply that is not JSON, an LLM error) keeps
the rules' record as it was; the paper never fails for it. Replies are cached by prompt hash (core.models.llm.cache),
so parsing the same entries again costs no call."""
from __future__ import annotations

import logging
import re
import unicodedata
from typing import Any

from core.models.llm.base import ChatModel, LLMError
from core.pipeline.metadata.patterns import find_doi, plausible_year
from core.pipeline.references.entries import family_name, fold
from core.pipeline.references.rules import ref_rules
from core.prompts import PROMPTS
from core.schema.references import MAX_ENTRY_CHARS, ParsedReference
from core.text.json_reply import key_lookup, read_json_object

log = logging.getLogger(__name__)

_FIELD = {"type": "string", "maxLength": 500}
RESPONSE_FORMAT: dict[str, Any] = {"type": "json_schema", "json_schema": {"name": "reference_entries", "schema": {
    "type": "object", "required": ["entries"], "properties": {"entries": {"type": "array", "items": {
        "type": "object", "required": ["n", "title", "authors", "year", "venue", "doi"],
        "properties": {"n": {"type": "integer"}, "title": _FIELD, "authors": {"type": "array", "items": _FIELD},
                       "year": {"type": ["integer", "null"]}, "venue": _FIELD, "doi": _FIELD}}}}}}}
_WORD = re.compile(r"[a-z0-9]+")


class StopAfterError:
    """A chat model that, once a call failed for good, fails every later call without making it: a refresh over
    many papers pays an unreachable endpoint's timeout once, not once per paper."""

    def __init__(self, inner: ChatModel):
        self.inner, self.name, self.error = inner, inner.name, ""

    def chat(self, messages, **kwargs):
        if self.error:
            raise LLMError(self.error)
        try:
            return self.inner.chat(messages, **kwargs)
        except LLMError as exc:
            self.error = str(exc)
            raise


def needs_llm(ref: ParsedReference) -> bool:
    """The rules could not read this entry fully."""
    return not ref.title or ref.year is None or not ref.authors


def _clean(value: Any, limit: int) -> str:
    """A reply's string with control characters and repeated spaces gone, or '' when it is not a string or too long
    (a model pasting the whole entry as its title)."""
    if not isinstance(value, str):
        return ""
    text = " ".join("".join(c if unicodedata.category(c)[0] != "C" else " " for c in value).split()).strip(" .,;")
    return text if len(text) <= limit else ""


def _words(text: str) -> list[str]:
    return _WORD.findall(fold(text))


def _printed(phrase: str, entry_words: set[str]) -> bool:
    words = set(_words(phrase))
    return bool(words) and len(words & entry_words) >= ref_rules()["llm_min_overlap"] * len(words)


def _year(value: Any, text: str) -> tuple[int, str] | None:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if not isinstance(value, int) or isinstance(value, bool) or not plausible_year(value):
        return None
    m = re.search(rf"(?<![\d.\-–]){value}([a-z]?)(?![\da-z\-–])", text)  # not a page range's "1995-2003"
    return (value, m.group(1)) if m else None


def grounded_fields(reply: dict, text: str) -> dict[str, Any]:
    """The fields of one reply entry that the entry's printed text bears out, in ParsedReference's terms."""
    entry_words = set(_words(text))
    out: dict[str, Any] = {}
    title = _clean(reply.get("title"), 500)
    longest = ref_rules()["llm_max_title_share"] * len(text)
    if 3 <= len(title) <= longest and _printed(title, entry_words):
        out["title"] = title
    venue = _clean(reply.get("venue"), 300)
    if venue and _printed(venue, entry_words):
        out["venue"] = venue
    authors = reply.get("authors")
    if isinstance(authors, list):
        names = [family_name(_clean(a, 120)) for a in authors[:100]]
        names = [n for n in names if n and len(n) <= 60 and set(_words(n)) and set(_words(n)) <= entry_words]
        if names:
            out["authors"] = names
    year = _year(reply.get("year"), text)
    if year:
        out["year"], out["year_suffix"] = year
    doi = find_doi(_clean(reply.get("doi"), 300))
    if doi and doi in text.lower():
        out["doi"] = doi
    return out


def _apply(ref: ParsedReference, fields: dict[str, Any]) -> None:
    changed = []
    for name, value in fields.items():
        if getattr(ref, name) != value:
            setattr(ref, name, value)
            if name == "authors":
                ref.names = []  # the rules' whole names were of other people: the export writes family names
            if name != "year_suffix":
                changed.append(name)
    ref.llm_fields = sorted(set(ref.llm_fields) | set(changed))


def _read_batch(chat_model: ChatModel | StopAfterError, batch: list[ParsedReference]) -> bool:
    """One call for up to `llm_batch` entries; False when the reply could not be read at all."""
    rules = ref_rules()
    lines = "\n".join(f"{n}. {ref.text[:MAX_ENTRY_CHARS]}" for n, ref in enumerate(batch, 1))
    messages = [{"role": "user", "content": PROMPTS["reference_entries"].format(entries=lines)}]
    reply = chat_model.chat(messages, purpose="references", response_format=RESPONSE_FORMAT,
                            max_tokens=rules["llm_max_tokens"], temperature=0.0)
    data = read_json_object(reply.text)
    entries = key_lookup(data, "entries") if data else None
    if not isinstance(entries, list):
        return False
    seen: set[int] = set()
    for item in entries:
        if not isinstance(item, dict):
            continue
        n = item.get("n")
        if isinstance(n, str) and n.strip().isdigit():
            n = int(n.strip())
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= len(batch) or n in seen:
            continue  # an unknown or repeated number: which entry it reads cannot be told
        seen.add(n)
        _apply(batch[n - 1], grounded_fields(item, batch[n - 1].text))
    return True


def llm_read(chat_model: ChatModel | StopAfterError | None, refs: list[ParsedReference], doc_id: str = "") -> int:
    """Fill what the rules missed in `refs` (in place) from the model's reading; returns the entries changed.
    Never raises: a failure leaves the records as the rules made them, logged once for the paper."""
    if chat_model is None:
        return 0
    rules = ref_rules()
    todo = [r for r in refs if needs_llm(r)][:rules["llm_max_entries"]]
    unread = 0
    for start in range(0, len(todo), max(1, rules["llm_batch"])):
        batch = todo[start:start + rules["llm_batch"]]
        try:
            unread += 0 if _read_batch(chat_model, batch) else len(batch)
        except LLMError as exc:  # the endpoint is down for good: the other batches would fail the same way
            log.warning("LLM pass over the references of %s stopped: %s", doc_id[:12], exc)
            return sum(1 for r in todo if r.llm_fields)
        except Exception:  # a bug must not cost the paper its references
            log.exception("LLM pass over the references of %s failed", doc_id[:12])
            return sum(1 for r in todo if r.llm_fields)
    if unread:
        log.warning("LLM pass over the references of %s: %d entries' replies could not be read; the rules' "
                    "fields kept", doc_id[:12], unread)
    return sum(1 for r in todo if r.llm_fields)
