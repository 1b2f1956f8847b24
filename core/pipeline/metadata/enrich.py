"""Online enrichment of a paper's metadata, only when the user turned it on (settings.metadata.online_enrichment):
missing or low-confidence fields (authors, year, venue, DOI, abstract) are filled from Crossref (by DOI, else by a
bibliographic query on the title) and OpenAlex (by DOI or a title search; the abstract, which Crossref rarely has).

Why these two: both are open, keyless and cover nearly every DOI-registered paper; Crossref is the registry of
DOIs themselves, OpenAlex adds abstracts and works Crossref lacks. Semantic Scholar would need an API key for a
usable rate, and a key is one more secret to guard.

A title query's record is taken only when its title is close to the paper's (data/enrich.json: title_similarity)
and its year agrees; otherwise the match is refused and said. Every value goes through the same cleaning as an
extracted or typed one (core.pipeline.metadata.fields: no control characters, bounded lengths), after markup is
stripped; wrong types are dropped. A field is written with its source ("crossref" / "openalex") and never over a
manual or imported value (MetadataStore.put_enriched)."""
from __future__ import annotations

import difflib
import html
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

from core.library import Library
from core.models.scholarly import OnlineDisabled, ScholarlyClient, ServiceError
from core.pipeline.metadata.fields import clean_field
from core.schema.metadata import CROSSREF, KEPT_SOURCES, OPENALEX, PaperMetadata

RULES_PATH = Path(__file__).with_name("data") / "enrich.json"
_TAG = re.compile(r"<[^>]{0,2000}>")
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")


@lru_cache(maxsize=1)
def rules() -> dict[str, Any]:
    return json.loads(RULES_PATH.read_text(encoding="utf-8"))


@dataclass
class EnrichReport:
    doc_id: str
    filled: dict[str, str] = field(default_factory=dict)  # field → source
    notes: list[str] = field(default_factory=list)


def _plain(value: object) -> str:
    """Text without markup (JATS <jats:p>, HTML) or entities; '' for anything that is not a string."""
    if not isinstance(value, str):
        return ""
    return " ".join(html.unescape(_TAG.sub(" ", value[:200_000])).split())


def _first(value: object) -> str:
    return _plain(value[0]) if isinstance(value, list) and value else _plain(value)


def title_key(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def similarity(a: str, b: str) -> float:
    a, b = title_key(a), title_key(b)
    return difflib.SequenceMatcher(None, a, b).ratio() if a and b else 0.0


def _year(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 1000 <= value <= 2100 else None


def from_crossref(work: object) -> dict[str, Any]:
    """A Crossref work record as our fields (missing or ill-typed parts left out)."""
    if not isinstance(work, dict):
        return {}
    authors = [" ".join(p for p in (_plain(a.get("given")), _plain(a.get("family"))) if p) or _plain(a.get("name"))
               for a in work.get("author", []) if isinstance(a, dict)] if isinstance(work.get("author"), list) else []
    year = None
    for key in ("issued", "published", "published-print", "published-online"):
        parts = work.get(key, {}).get("date-parts") if isinstance(work.get(key), dict) else None
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            if (year := _year(parts[0][0])) is not None:
                break
    return {"title": _first(work.get("title")), "authors": [a for a in authors if a], "year": year,
            "venue": _first(work.get("container-title")), "doi": _plain(work.get("DOI")),
            "abstract": _plain(work.get("abstract"))}


def _inverted(index: object) -> str:
    """OpenAlex's abstract_inverted_index ({word: [positions]}) back to text, bounded."""
    if not isinstance(index, dict):
        return ""
    spots: dict[int, str] = {}
    for word, positions in list(index.items())[:20_000]:
        if isinstance(word, str) and isinstance(positions, list):
            spots.update({p: word for p in positions[:1000] if isinstance(p, int) and 0 <= p < 20_000})
    return _plain(" ".join(spots[p] for p in sorted(spots)))


def from_openalex(work: object) -> dict[str, Any]:
    if not isinstance(work, dict):
        return {}
    names = [_plain(a.get("author", {}).get("display_name")) for a in work.get("authorships", [])
             if isinstance(a, dict) and isinstance(a.get("author"), dict)] if isinstance(work.get("authorships"),
                                                                                          list) else []
    location = work.get("primary_location")
    source = location.get("source") if isinstance(location, dict) else None
    return {"title": _plain(work.get("display_name") or work.get("title")), "authors": [n for n in names if n],
            "year": _year(work.get("publication_year")),
            "venue": _plain(source.get("display_name")) if isinstance(source, dict) else "",
            "doi": _plain(work.get("doi")), "abstract": _inverted(work.get("abstract_inverted_index"))}


def _best(records: list[dict[str, Any]], meta: PaperMetadata, service: str, notes: list[str]) -> dict[str, Any]:
    """The record whose title is closest to the paper's, when close enough and of an agreeing year; else {}."""
    scored = sorted(((similarity(r.get("title", ""), meta.title), r) for r in records), key=lambda x: -x[0])
    threshold, slack = float(rules()["title_similarity"]), int(rules()["year_slack"])
    for score, record in scored:
        if score < threshold:
            break
        if meta.year is None or record.get("year") is None or abs(record["year"] - meta.year) <= slack:
            return record
    best = f"{scored[0][0]:.2f}" if scored else "none"
    notes.append(f"{service}: no record close enough to the title (best similarity {best}, needs {threshold:g}): "
                 "refused")
    return {}


def lookup(client: ScholarlyClient, service: str, meta: PaperMetadata, notes: list[str]) -> dict[str, Any]:
    """The service's record for the paper: by DOI when it has one, else by a title query checked for closeness."""
    rows = int(rules()["candidates"])
    if service == CROSSREF:
        if meta.doi:
            reply = client.get(service, f"/works/{quote(meta.doi, safe='/')}")
            return from_crossref(reply.get("message")) if reply else {}
        reply = client.get(service, "/works", {"query.bibliographic": meta.title, "rows": rows})
        items = reply.get("message", {}).get("items") if reply and isinstance(reply.get("message"), dict) else None
        return _best([from_crossref(i) for i in items[:rows]] if isinstance(items, list) else [], meta, service, notes)
    if meta.doi:
        reply = client.get(service, "/works/" + quote("https://doi.org/" + meta.doi, safe=":/"))
        return from_openalex(reply) if reply else {}
    reply = client.get(service, "/works", {"search": meta.title, "per-page": rows})
    results = reply.get("results") if reply else None
    return _best([from_openalex(r) for r in results[:rows]] if isinstance(results, list) else [], meta, service, notes)


def wanted_fields(meta: PaperMetadata) -> list[str]:
    """Fields missing, or extracted by a rule that often errs (a running header); never a kept or enriched one."""
    low = set(rules()["low_confidence_sources"])
    return [f for f in rules()["fields"] if not meta.has(f) or meta.sources.get(f) in low]


def _value(name: str, value: Any) -> Any:
    if name == "doi" and isinstance(value, str):
        value, _ = clean_field("doi", value)
        return value if _DOI.match(value) else None
    try:
        cleaned, _ = clean_field(name, value)
    except ValueError:
        return None
    return cleaned


def enrich_paper(lib: Library, client: ScholarlyClient, doc_id: str) -> EnrichReport:
    report = EnrichReport(doc_id)
    meta = lib.metadata.get(doc_id) or PaperMetadata(doc_id=doc_id)
    if not meta.title:
        meta.title = lib.documents.ready_titles().get(doc_id, "")
    wanted = [f for f in wanted_fields(meta) if meta.sources.get(f) not in KEPT_SOURCES]
    if not wanted:
        report.notes.append("nothing missing")
        return report
    if not meta.doi and not meta.title:
        report.notes.append("neither a DOI nor a title to look up")
        return report
    services = {"crossref+openalex": (CROSSREF, OPENALEX)}.get(lib.settings.metadata.services,
                                                               (lib.settings.metadata.services,))
    values: dict[str, tuple[Any, str]] = {}
    for service in services:
        try:
            record = lookup(client, service, meta, report.notes)
        except ServiceError as exc:
            report.notes.append(str(exc))
            continue
        if not record:
            continue
        if not meta.doi and record.get("doi") and _value("doi", record["doi"]):  # found by title: later ones by DOI
            meta.doi = _value("doi", record["doi"])
        for name in wanted:
            if name not in values and (value := _value(name, record.get(name))) not in (None, "", []):
                values[name] = (value, service)
    if values:
        written = lib.metadata.put_enriched(doc_id, values)
        report.filled = {name: values[name][1] for name in written}
    if not report.filled and not report.notes:
        report.notes.append("the services had nothing to add")
    return report


def enrich(lib: Library, doc_ids: Iterable[str], client: ScholarlyClient | None = None) -> list[EnrichReport]:
    """Enrich these papers; OnlineDisabled (no request made) when online enrichment is off."""
    if not lib.settings.metadata.online_enrichment:
        raise OnlineDisabled("online metadata enrichment is off: turn it on in Settings (Paper metadata online) or "
                             "set metadata.online_enrichment in the workspace's settings.json; nothing was sent")
    own = client is None
    client = client or ScholarlyClient(lib.settings.metadata, lib.web_cache)
    try:
        return [enrich_paper(lib, client, doc_id) for doc_id in doc_ids]
    finally:
        if own:
            client.close()
