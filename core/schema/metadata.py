"""A paper's bibliographic metadata: title, authors in order, year, venue, DOI, arXiv id and abstract, each field
with where it came from ("first page", "pdf metadata", "doi pattern", "manual", …).

A field's source decides what survives a re-parse: an extractor replaces only what extractors wrote, so a field
corrected by hand ("manual") or given by an import ("bibtex", "csl", "zotero": the format it came in) stays until it
is corrected again."""
from __future__ import annotations

from dataclasses import dataclass, field

FIELDS = ("title", "authors", "year", "venue", "doi", "arxiv", "abstract")
# What a person or an import said: an extractor never replaces these.
MANUAL = "manual"
BIBTEX, CSL, ZOTERO = "bibtex", "csl", "zotero"  # imports: a .bib, a CSL-JSON file, a Zotero data folder
# A library entry without a PDF (an import's entry whose file is missing or refused): metadata under an id of
# its own, never a document.
ENTRY_PREFIX = "bib:"
KEPT_SOURCES = (MANUAL, BIBTEX, CSL, ZOTERO)
# Filled from an online service when the user enabled it (core.pipeline.metadata.enrich): kept across re-parses like a
# correction, but never written over a manual or imported value, and replaced by the next correction.
CROSSREF, OPENALEX = "crossref", "openalex"
ENRICHED_SOURCES = (CROSSREF, OPENALEX)
# Longest value kept per field (characters; authors: per name, and at most MAX_AUTHORS names). A 100k-character
# "title" from a hostile .bib or a broken PDF is cut, and the caller says so.
MAX_CHARS = {"title": 500, "authors": 200, "year": 4, "venue": 300, "doi": 200, "arxiv": 40, "abstract": 5000}
MAX_AUTHORS = 100


@dataclass
class PaperMetadata:
    doc_id: str = ""
    title: str = ""
    authors: list[str] = field(default_factory=list)  # "Given Family" (as printed), in order
    year: int | None = None
    venue: str = ""
    doi: str = ""  # lower case, without https://doi.org/
    arxiv: str = ""  # "2304.02623" or "hep-th/9901001", without version
    abstract: str = ""
    sources: dict[str, str] = field(default_factory=dict)  # field → where its value came from

    def get(self, name: str):
        return getattr(self, name)

    def has(self, name: str) -> bool:
        value = getattr(self, name)
        return value is not None and value != "" and value != []

    def filled(self) -> list[str]:
        return [f for f in FIELDS if self.has(f)]

    def first_author_family(self) -> str:
        """The first author's family name ("Cohan" of "Arman Cohan", "Cohan, Arman"), '' when none is known."""
        if not self.authors:
            return ""
        name = self.authors[0].strip()
        if "," in name:
            return name.split(",", 1)[0].strip()
        parts = name.split()
        return parts[-1] if parts else ""
