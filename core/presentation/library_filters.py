"""The Library's filters over the papers' metadata: by year (a range, with or without the papers that state none),
by author (text typed by a person) and by venue (the venues the listed papers name). Pure functions: the page
only lays out the widgets and shows what filter_documents keeps."""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.schema.metadata import PaperMetadata
from core.schema.records import Document
from core.text.venues import venue_key, venue_name


@dataclass(frozen=True)
class LibraryFilter:
    years: tuple[int, int] | None = None  # inclusive; None: every year
    keep_unknown_year: bool = True  # with a range: papers that state no year stay
    author: str = ""  # "cohan", "Arman Cohan", "Cohan; Beltagy": every part names one of the paper's authors
    venues: tuple[str, ...] = ()  # any of these; (): every venue

    @property
    def active(self) -> bool:
        return self.years is not None or not self.keep_unknown_year or bool(self.author.strip()) or bool(self.venues)


def folded(text: str) -> str:
    """Lower case without accents: "Gyöngyi" is found by "gyongyi"."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def author_terms(text: str) -> list[list[str]]:
    """The parts of an author filter (separated by ',', ';' or ' and '), each as its folded words."""
    parts = re.split(r"\s*[;,]\s*|\s+and\s+", folded(text).strip())
    return [p.split() for p in parts if p.split()]


def matches_author(meta: PaperMetadata | None, text: str) -> bool:
    """Every part of `text` names one of the paper's authors: each of its words is in that author's name, in any
    order ("cohan arman" finds "Arman Cohan")."""
    terms = author_terms(text)
    if not terms:
        return True
    names = [folded(a) for a in (meta.authors if meta else [])]
    return all(any(all(word in name for word in term) for name in names) for term in terms)


def year_range(docs: Sequence[Document], metas: Mapping[str, PaperMetadata]) -> tuple[int, int] | None:
    """The earliest and latest year the listed papers state, None when fewer than two years are known (nothing
    to filter)."""
    years = {metas[d.id].year for d in docs if d.id in metas and metas[d.id].year}
    return (min(years), max(years)) if len(years) >= 2 else None


def venue_options(docs: Sequence[Document], metas: Mapping[str, PaperMetadata]) -> list[str]:
    """The venues the listed papers name, one option per venue (venue_key: a stored venue with its pages, another
    spacing or an invisible character is the same venue), shown by its name; the most papers first, then
    alphabetically."""
    counts: Counter[str] = Counter()
    shown: dict[str, str] = {}
    for d in docs:
        venue = metas[d.id].venue if d.id in metas else ""
        key = venue_key(venue) if venue else ""
        if key:
            counts[key] += 1
            shown.setdefault(key, venue_name(venue))
    return sorted((shown[k] for k in counts), key=lambda v: (-counts[venue_key(v)], v.casefold()))


def filter_documents(docs: Sequence[Document], metas: Mapping[str, PaperMetadata], chosen: LibraryFilter
                     ) -> list[Document]:
    """The documents every part of the filter keeps, in their order."""
    venues = {venue_key(v) for v in chosen.venues}

    def keep(d: Document) -> bool:
        meta = metas.get(d.id)
        year = meta.year if meta else None
        if year is None and not chosen.keep_unknown_year:
            return False
        if year is not None and chosen.years is not None and not chosen.years[0] <= year <= chosen.years[1]:
            return False
        if venues and (meta is None or venue_key(meta.venue) not in venues):
            return False
        return matches_author(meta, chosen.author)

    return [d for d in docs if keep(d)]


def describe(chosen: LibraryFilter, shown: int, total: int) -> str:
    """"1 of 2 documents published 2021–2021 or of unknown year, by an author matching 'cohan', in 1 venue"."""
    parts = []
    if chosen.years is not None:
        parts.append(f"published {chosen.years[0]}–{chosen.years[1]}"
                     + (" or of unknown year" if chosen.keep_unknown_year else ""))
    elif not chosen.keep_unknown_year:
        parts.append("of known year")
    if chosen.author.strip():
        parts.append(f"by an author matching '{' '.join(chosen.author.split())[:80]}'")
    if chosen.venues:
        parts.append(f"in {chosen.venues[0][:80]}" if len(chosen.venues) == 1 else f"in {len(chosen.venues)} venues")
    return f"{shown} of {total} documents " + ", ".join(parts)
