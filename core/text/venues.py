"""A venue as a name: what the Library's filter lists, what the extractor stores and an export names. A venue line
carries pages, volume and issue, places and dates ("Proceedings of the 58th Annual Meeting of the ACL, pages
2270–2282"); two papers of one proceedings must name one venue, whatever else their lines say. Here (core.text), not
in the extractor's rules, because the Library's filter (core.presentation) groups stored venues by it too."""
from __future__ import annotations

import re
import unicodedata

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
# "to appear in OSDI 2006", "Published as a conference paper at ICLR 2021", "in Proceedings of …": not the name.
_PREFIX = re.compile(r"^(?:(?:appearing|appeared|published|to appear|accepted)\s+(?:in|at)\s+(?:the\s+)?"
                     r"|published as a conference paper at\s+|in\s+(?=proceedings\b))", re.I)
# Where the name ends: pages, volume / issue / article number, "(2005)", "310 (2005)", "26:1", "521, 436", a date
# ("June 1 - 6"), an identifier or a link.
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?" \
         r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_CUTS = [re.compile(p, re.I) for p in (
    r",?\s*\b(?:pages?|pp\.?)\s*\d",
    r",?\s*\b(?:vol(?:ume)?\.?|no\.|issue|article(?: id| no\.?)?)\s*\d",
    r"\s*\(\s*(?:19|20)\d\d\s*\)",
    r"\s+\d+\s*\(\s*(?:19|20)\d\d",
    r"\s+\d+\s*:\s*\d",
    r"\s+\d+\s*,\s*\d",
    r",?\s*\b" + _MONTH + r"\.?\s+\d{1,2}\b",
    r",?\s*\b(?:doi\s*:|https?://|issn|isbn)",
    r"\s+\(stacks\b",
)]
_MEETING = re.compile(r"^(?:proceedings|conference|workshop|symposium)\b|\b(?:conference|workshop|symposium)\b", re.I)


def venue_name(text: str) -> str:
    """The venue's name ("Journal of Hydrology 310 (2005) 253–265" → "Journal of Hydrology"; "in Proceedings of the
    28 th ICML, Bellevue, WA, USA, 2011" → "Proceedings of the 28th ICML"). An edition year in a proceedings' name
    stays ("Proceedings of NAACL-HLT 2018"); one after a bare name is a date ("To appear in OSDI 2006" → "OSDI")."""
    venue = " ".join(_CONTROL.sub(" ", unicodedata.normalize("NFKC", text or "")).split())
    venue = _PREFIX.sub("", venue)
    venue = re.sub(r"\b(\d+)\s+(st|nd|rd|th)\b", r"\1\2", venue)  # "28 th" → "28th"
    for pattern in _CUTS:
        venue = pattern.split(venue, maxsplit=1)[0]
    if _MEETING.search(venue):
        venue = venue.split(",", 1)[0]
    venue = re.sub(r"(?:\s+\d{1,3})+$", "", venue.strip(" ,.;:(-–"))  # a page number glued to a footer line
    if not venue.lower().startswith("proceedings"):
        venue = re.sub(r",?\s+(?:19|20)\d\d$", "", venue)
    return venue.strip(" ,.;:(-–")


def venue_key(text: str) -> str:
    """What makes two venue strings one venue: the name, case, accents, spacing and invisible characters aside."""
    decomposed = unicodedata.normalize("NFKD", venue_name(text).casefold())
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).split())


__all__ = ["venue_key", "venue_name"]
