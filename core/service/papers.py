"""The papers of the workspace: list, metadata, delete, and a minimal BibTeX entry for citing them."""
from __future__ import annotations

import re

from core.library import Library
from core.pipeline.documents import delete_document
from core.schema.records import Document
from core.service.errors import invalid
from core.service.inputs import find_paper
from core.service.records import PaperInfo

MAX_CITE = 50


def _years(lib: Library, doc_ids: list[str]) -> dict[str, int | None]:
    try:
        return {doc_id: record.year for doc_id, record in lib.graph_sources.papers(doc_ids).items()}
    except Exception:  # a workspace whose graph tables are not there yet: no years, not an error
        return {}


def _info(doc: Document, year: int | None) -> PaperInfo:
    return PaperInfo(id=doc.id, title=doc.display_title, file=doc.filename, pages=doc.pages, status=str(doc.status),
                     message=doc.message, graph_status=str(doc.graph_status), year=year, chunks=doc.chunk_count,
                     size_bytes=doc.size_bytes)


def list_papers(lib: Library) -> list[PaperInfo]:
    docs = lib.documents.list()
    years = _years(lib, [d.id for d in docs])
    return [_info(d, years.get(d.id)) for d in docs]


def get_paper(lib: Library, paper_id: str) -> PaperInfo:
    """The paper's record, with the stage it is at while it is being processed (what a client polls)."""
    doc = find_paper(lib, paper_id)
    info = _info(doc, _years(lib, [doc.id]).get(doc.id))
    stage = lib.documents.progress().get(doc.id) or lib.documents.graph_progress().get(doc.id)
    if stage:
        info.stage, info.fraction = stage[0], round(float(stage[1]), 3)
    return info


def delete_paper(lib: Library, paper_id: str) -> PaperInfo:
    """Delete the paper and everything derived from it (core.pipeline.documents.delete_document); its record as it
    was."""
    info = get_paper(lib, paper_id)
    delete_document(lib, info.id)
    return info


def _bib_escape(text: str) -> str:
    # BibTeX reads braces and backslashes; a title's own are dropped rather than risk an unbalanced entry.
    return " ".join(re.sub(r"[{}\\%#&$^_~]", " ", text).split())


def bibtex_entry(info: PaperInfo) -> str:
    """A minimal @misc entry from what the workspace knows: title, file name, year when the paper states one. No
    authors or venue: PaperGraph does not extract them reliably, so none are invented."""
    word = re.sub(r"[^a-z0-9]", "", (info.title.split() or ["paper"])[0].lower())[:20] or "paper"
    key = f"{word}{info.year or ''}_{info.id[:8]}"
    fields = [f"  title = {{{_bib_escape(info.title)}}}"]
    if info.year:
        fields.append(f"  year = {{{info.year}}}")
    fields.append(f"  note = {{PaperGraph paper {info.id[:12]}, file {_bib_escape(info.file)}}}")
    return f"@misc{{{key},\n" + ",\n".join(fields) + "\n}"


def cite(lib: Library, paper_ids: list[str]) -> str:
    if not paper_ids or len(paper_ids) > MAX_CITE:
        raise invalid(f"give 1 to {MAX_CITE} paper ids")
    return "\n\n".join(bibtex_entry(get_paper(lib, p)) for p in paper_ids)
