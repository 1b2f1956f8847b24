"""A CSL-JSON file (what Zotero, Pandoc, citeproc and `core cite --format csl` write: an array of items with title,
author [{family, given}], issued.date-parts, container-title, DOI, URL, abstract) into the library. CSL names no
files, so every item becomes a metadata-only entry (id "bib:…", source "csl"), through the same path as a .bib's
entries (metadata/imports.py). The file is read whole, bounded in size and depth (core/text/safe_json.py), before
anything is written; an item that is not an object, or has nothing to keep, is skipped and said. CSL strings are
plain text: a backslash or a brace stays what it is."""
from __future__ import annotations

import json
import re
from pathlib import Path

from core.library import Library
from core.pipeline.metadata.bib_import import read_import_file
from core.pipeline.metadata.imports import MAX_ENTRIES, MAX_IMPORT_BYTES, ImportReport, add_record
from core.schema.metadata import CSL
from core.text.safe_json import load_untrusted_json

_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/([^\s/?#]+(?:/\d{7})?)", re.I)
_ARXIV_NUMBER = re.compile(r"^\s*arxiv:\s*(\S+)", re.I)


def _text(value: object) -> str:
    if isinstance(value, list):  # container-title is sometimes a list of one
        value = value[0] if value else ""
    return value if isinstance(value, str) else str(value) if isinstance(value, (int, float)) else ""


def _name(person: object) -> str:
    if not isinstance(person, dict):
        return _text(person)
    if person.get("literal"):
        return _text(person["literal"])
    parts = (person.get(k) for k in ("given", "dropping-particle", "non-dropping-particle", "family", "suffix"))
    return " ".join(t for t in (_text(p).strip() for p in parts) if t)


def _year(issued: object) -> object:
    if not isinstance(issued, dict):
        return _text(issued) or None
    parts = issued.get("date-parts")
    if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
        return _text(parts[0][0]) or None
    match = re.search(r"\d{4}", _text(issued.get("raw") or issued.get("literal") or ""))
    return match.group(0) if match else (_text(issued.get("raw") or issued.get("literal")) or None)


def item_metadata(item: dict) -> dict[str, object]:
    """A CSL item as PaperMetadata fields (not yet cleaned)."""
    authors = item.get("author")
    arxiv = ""
    if m := _ARXIV_NUMBER.match(_text(item.get("number"))) or _ARXIV_URL.search(_text(item.get("URL"))):
        arxiv = m.group(1)
    return {"title": _text(item.get("title")),
            "authors": [n for n in (_name(a) for a in authors) if n] if isinstance(authors, list) else [],
            "year": _year(item.get("issued")),
            "venue": _text(item.get("container-title")) or _text(item.get("event-title")),
            "doi": _text(item.get("DOI")), "arxiv": arxiv, "abstract": _text(item.get("abstract"))}


def import_csl(lib: Library, path: Path) -> ImportReport:
    """Add every CSL item as a metadata-only entry. Raises ValueError for a file that is no CSL-JSON at all."""
    report = ImportReport()
    text, report.notes = read_import_file(path)
    try:
        data = load_untrusted_json(text, max_chars=MAX_IMPORT_BYTES, max_depth=16)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path.name} is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if isinstance(data, dict) and "items" in data:  # some exporters wrap the array
        data = data["items"]
    if not isinstance(data, list):
        raise ValueError(f"{path.name} is not CSL-JSON: an array of items was expected")
    if len(data) > MAX_ENTRIES:
        report.skipped.append((f"{len(data) - MAX_ENTRIES} items", f"more than {MAX_ENTRIES:,} in one file"))
        data = data[:MAX_ENTRIES]
    for n, item in enumerate(data, 1):
        if not isinstance(item, dict):
            report.skipped.append((f"item {n}", "not a CSL item (a JSON object)"))
            continue
        key = " ".join(_text(item.get("id") or item.get("citation-key")).split())[:200] or f"item{n}"
        add_record(lib, key, item_metadata(item), [], path.parent, report, CSL)
    return report
