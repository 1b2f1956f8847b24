"""A paper's references as the Document page and `python -m core refs` show them: the library papers it cites and
that cite it, each with the sentences that make the citation, and the references not in the library (with a
BibTeX of them)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from core.library import Library
from core.presentation.bibtex import to_bibtex
from core.presentation.citations import author_year, papers_metadata
from core.schema.metadata import PaperMetadata
from core.schema.references import CitationLink, ParsedReference

MAX_SHOWN_SENTENCES = 5  # per citation; the rest are counted


@dataclass
class LibraryCitation:
    other: str  # the cited (or citing) paper's doc id
    name: str  # "Cohan et al. 2020: SPECTER…", or its title
    entry: ParsedReference
    links: list[CitationLink] = field(default_factory=list)  # the citing paper's sentences


@dataclass
class ReferencePanel:
    cites: list[LibraryCitation]
    cited_by: list[LibraryCitation]
    outside: list[ParsedReference]  # "not in your library"
    total: int


def _names(lib: Library, doc_ids: Sequence[str]) -> dict[str, str]:
    out = {}
    for meta in papers_metadata(lib, list(dict.fromkeys(doc_ids))):
        who = author_year(meta)
        out[meta.doc_id] = f"{who}: {meta.title}" if who and meta.title else meta.title or who or meta.doc_id[:12]
    return out


def _links_by_entry(links: Sequence[CitationLink]) -> dict[int, list[CitationLink]]:
    out: dict[int, list[CitationLink]] = {}
    for link in links:
        out.setdefault(link.ref_idx, []).append(link)
    return out


def reference_panel(lib: Library, doc_id: str) -> ReferencePanel:
    refs = lib.references.references(doc_id)
    cited_by = lib.references.cited_by(doc_id)
    names = _names(lib, [r.cited_doc_id for r in refs if r.cited_doc_id] + [r.doc_id for r in cited_by])
    mine = _links_by_entry(lib.references.links(doc_id))
    cites = [LibraryCitation(r.cited_doc_id, names.get(r.cited_doc_id, r.cited_doc_id[:12]), r, mine.get(r.idx, []))
             for r in refs if r.cited_doc_id]
    back = []
    for r in cited_by:
        theirs = _links_by_entry(lib.references.links(r.doc_id))
        back.append(LibraryCitation(r.doc_id, names.get(r.doc_id, r.doc_id[:12]), r, theirs.get(r.idx, [])))
    return ReferencePanel(cites, back, [r for r in refs if not r.cited_doc_id], len(refs))


def whole_names(ref: ParsedReference) -> list[str]:
    """The entry's authors whole where it prints them so ("Matthew E. Peters", "M. E. Peters"), else their family
    names (an entry read by the LLM, or stored before whole names were kept)."""
    return list(ref.names) if ref.names and len(ref.names) == len(ref.authors) else list(ref.authors)


def as_metadata(ref: ParsedReference) -> PaperMetadata:
    """A reference as the metadata BibTeX and CSL are written from."""
    return PaperMetadata(doc_id=f"ref:{ref.doc_id[:12]}:{ref.idx}", title=ref.title or ref.text[:200],
                         authors=whole_names(ref), year=ref.year, venue=ref.venue, doi=ref.doi, arxiv=ref.arxiv)


def references_bibtex(refs: Sequence[ParsedReference]) -> str:
    return to_bibtex([as_metadata(r) for r in refs])


def entry_line(ref: ParsedReference) -> str:
    """"[12] Waleed Ammar, Dirk Groeneveld, Chandra Bhagavatula et al. 2018. Construction of the literature graph…
    (NAACL)"."""
    names = whole_names(ref)
    who = ", ".join(names[:3]) + (" et al." if len(names) > 3 else "")
    parts = [f"[{ref.label}]" if ref.label else "", who, str(ref.year or "") + ref.year_suffix + ".",
             ref.title or ref.text[:200]]
    line = " ".join(p for p in parts if p and p != ".")
    return line + (f" ({ref.venue})" if ref.venue else "") + (f" doi:{ref.doi}" if ref.doi else "") + (
        f" arXiv:{ref.arxiv}" if ref.arxiv else "")
