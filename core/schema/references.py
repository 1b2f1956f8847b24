"""Records of a paper's reference list: each entry parsed into fields, each in-text citation marker linked to its
entry with the sentence that makes it, and the library paper an entry resolves to (core/pipeline/references/)."""
from __future__ import annotations

from dataclasses import dataclass, field

CITES = "CITES"  # graph edge type: citing paper node → cited paper node, both in the library
MAX_ENTRY_CHARS = 2000  # an entry's text is cut here: a broken parse can glue pages into one "entry"
MAX_SENTENCE_CHARS = 600


@dataclass
class ParsedReference:
    doc_id: str  # the citing paper
    idx: int  # position in its reference list, from 0
    text: str  # the entry as printed (whitespace folded, links unwrapped), at most MAX_ENTRY_CHARS
    label: str = ""  # "12" of "[12] …" / "12. …" / "(12) …"; '' for author-year entries
    authors: list[str] = field(default_factory=list)  # family names, in order
    # The same authors whole, as the entry prints them ("Matthew E. Peters", "M. E. Peters" of "Peters, M. E."),
    # what an export writes; [] for an entry read before names were kept (its export falls back to family names).
    names: list[str] = field(default_factory=list)
    title: str = ""
    year: int | None = None
    year_suffix: str = ""  # "a" of "2020a": author-year markers tell two entries of one author and year apart
    venue: str = ""
    doi: str = ""
    arxiv: str = ""
    page: int = 0  # page index (from 0) and 0–1000 box of the entry's first item
    bbox: list[float] | None = None
    cited_doc_id: str = ""  # the library paper this entry is, '' when it is not in the library
    llm_fields: list[str] = field(default_factory=list)  # fields the LLM pass read ("title", "year"…), not the rules

    @property
    def first_author(self) -> str:
        return self.authors[0] if self.authors else ""


@dataclass
class CitationLink:
    """One in-text citation of one entry: "[3, 5–7]" makes four links, one per entry, with the same sentence."""

    doc_id: str
    ref_idx: int
    marker: str  # as printed: "[5–7]", "(Ammar et al., 2018)"
    sentence: str
    page: int = 0
    bbox: list[float] | None = None


@dataclass
class Citation:
    """One paper of the library citing another, with every sentence in which it does (empty when the entry is
    listed but no marker in the text could be linked to it)."""

    citing: str
    cited: str
    ref_idx: int
    links: list[CitationLink] = field(default_factory=list)
