"""The settings of online metadata enrichment, a section of Settings (core.settings.config) kept in a file of its own
so config.py stays readable."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from core.settings.fields import setting

ENRICH_SERVICES = ("crossref+openalex", "crossref", "openalex")


@dataclass
class MetadataConfig:
    """Online enrichment of papers' metadata (core.pipeline.metadata.enrich): off by default, so nothing leaves
    the machine until the user turns it on. When on, `python -m core meta enrich` and the Document page's button
    fill missing or low-confidence fields from Crossref and OpenAlex; hand corrections and imports stay."""

    TITLE: ClassVar[str] = "Paper metadata online"

    online_enrichment: bool = setting(False, label="Fill missing metadata from Crossref / OpenAlex",
                                      help="Off: no request is ever made. On: a paper's DOI (or its title, when it "
                                           "has none) is sent to the services below, only when you ask (the "
                                           "Document page's button or `core meta enrich`).")
    services: str = setting("crossref+openalex", label="Services", choices=ENRICH_SERVICES,
                            help="Crossref: authors, year, venue and DOI by DOI or by a title query. OpenAlex: the "
                                 "abstract, which Crossref rarely has, and the same fields when Crossref has none.")
    contact_email: str = setting("", label="Contact e-mail (optional)",
                                 help="Sent in the User-Agent and as mailto, as both services ask of polite "
                                      "clients; it puts requests in their faster pool. Empty: none is sent.")
    crossref_url: str = setting("https://api.crossref.org", label="Crossref API URL")
    openalex_url: str = setting("https://api.openalex.org", label="OpenAlex API URL")
    timeout_s: float = setting(10.0, label="Timeout per request (s)", above=0)
    retries: int = setting(3, label="Retries after a timeout, 429 or 5xx", min=0, max=8)
    max_wait_s: float = setting(30.0, label="Longest wait before a retry (s)", min=0,
                                help="A Retry-After asking for longer ends the attempt instead.")
