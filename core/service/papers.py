"""The papers of the workspace: list, metadata, delete, and BibTeX for citing them (from each paper's metadata:
core.presentation.bibtex, the same entries as `core cite` and the pages' Export BibTeX)."""
from __future__ import annotations

from core.library import Library
from core.pipeline.documents import delete_document
from core.presentation.bibtex import to_bibtex
from core.presentation.citations import papers_metadata
from core.schema.records import Document
from core.service.errors import invalid
from core.service.inputs import find_paper
from core.service.records import PaperInfo

MAX_CITE = 50


def _years(lib: Library, doc_ids: list[str]) -> dict[str, int | None]:
    """Each paper's year: its metadata's (read from the paper, or corrected by hand), else the graph's."""
    years: dict[str, int | None] = {}
    try:
        years = {doc_id: record.year for doc_id, record in lib.graph_sources.papers(doc_ids).items()}
    except Exception:  # a workspace whose graph tables are not there yet: no years from it, not an error
        pass
    for doc_id, meta in lib.metadata.get_many(doc_ids).items():
        if isinstance(meta.get("year"), int):
            years[doc_id] = meta.get("year")
    return years


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
    stage = lib.stages.progress().get(doc.id) or lib.stages.graph_progress().get(doc.id)
    if stage:
        info.stage, info.fraction = stage[0], round(float(stage[1]), 3)
    return info


def delete_paper(lib: Library, paper_id: str) -> PaperInfo:
    """Delete the paper and everything derived from it (core.pipeline.documents.delete_document); its record as it
    was."""
    info = get_paper(lib, paper_id)
    delete_document(lib, info.id)
    return info


def cite(lib: Library, paper_ids: list[str]) -> str:
    """BibTeX entries of these papers, in the order given."""
    if not paper_ids or len(paper_ids) > MAX_CITE:
        raise invalid(f"give 1 to {MAX_CITE} paper ids")
    return to_bibtex(papers_metadata(lib, [find_paper(lib, p).id for p in paper_ids]))
