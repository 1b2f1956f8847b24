"""How a paper is named where people read it: "Cohan et al. 2020", "Cohan and Feldman 2020, p. 3"; the display
title when the metadata names no author."""
from __future__ import annotations

from collections.abc import Sequence

from core.schema.metadata import ENTRY_PREFIX, PaperMetadata


def _family(name: str) -> str:
    name = name.strip()
    if "," in name:
        return name.split(",", 1)[0].strip()
    parts = name.split()
    return parts[-1] if parts else ""


def author_year(meta: PaperMetadata | None) -> str:
    """"Cohan et al. 2020", "Dean and Ghemawat 2004", "Gigerenzer 2015", "Cohan et al." without a year; '' when no
    author is known (the caller names the paper by its title)."""
    if meta is None or not meta.authors:
        return ""
    families = [f for f in (_family(a) for a in meta.authors) if f]
    if not families:
        return ""
    if len(families) == 1:
        who = families[0]
    elif len(families) == 2:
        who = f"{families[0]} and {families[1]}"
    else:
        who = f"{families[0]} et al."
    return f"{who} {meta.year}" if meta.year else who


def source_label(meta: PaperMetadata | None, title: str, page: int | None = None) -> str:
    """A cited source: "Cohan et al. 2020, p. 3" (page 1-based), or the title with the page when no author is
    known."""
    name = author_year(meta) or title
    return f"{name}, p. {page}" if page else name


def authors_short(meta: PaperMetadata | None, limit: int = 3) -> str:
    """The Library's authors column: "Arman Cohan, Sergey Feldman, Iz Beltagy, …"."""
    if meta is None or not meta.authors:
        return ""
    shown = ", ".join(meta.authors[:limit])
    return shown + (", …" if len(meta.authors) > limit else "")


def papers_metadata(lib, doc_ids: Sequence[str] | None = None) -> list[PaperMetadata]:
    """The metadata of these papers (default: every registered one, oldest first, then the metadata-only entries of
    BibTeX imports), in that order; a paper with nothing stored (ingested before metadata existed) is named by its
    display title."""
    docs = {d.id: d for d in lib.documents.list()}
    stored = lib.metadata.get_many(doc_ids)
    ids = list(doc_ids) if doc_ids is not None else \
        list(docs) + sorted(d for d in stored if d.startswith(ENTRY_PREFIX))
    out = []
    for doc_id in ids:
        if doc_id.startswith(ENTRY_PREFIX) and doc_id in stored:
            out.append(stored[doc_id])
            continue
        if doc_id not in docs:
            continue
        meta = stored.get(doc_id) or PaperMetadata(doc_id=doc_id)
        if not meta.title:
            meta.title = docs[doc_id].display_title
        out.append(meta)
    return out
