"""Metadata kept in step with a paper: extracted at ingest and by `python -m core meta refresh` (papers ingested
before metadata existed), corrected by hand; the document's display title follows the metadata title."""
from __future__ import annotations

from collections.abc import Iterable

from core.content.pages import load_items
from core.library import Library
from core.pipeline.metadata.extract import extract_metadata
from core.pipeline.metadata.fields import clean_field
from core.schema.metadata import FIELDS, MANUAL, PaperMetadata
from core.schema.records import ContentItem


def bounded(meta: PaperMetadata) -> PaperMetadata:
    """Every field within its limits (a broken PDF can hold a 'title' of any length)."""
    for name in FIELDS:
        if meta.has(name):
            value, _ = clean_field(name, meta.get(name))
            setattr(meta, name, value)
    return meta


def store_extracted(lib: Library, doc_id: str, filename: str, items: list[ContentItem]) -> PaperMetadata:
    """Extract and store a paper's metadata (fields kept by hand stay); returns what is stored now. A pure function
    of the parsed items and the source PDF, cheap (the PDF's first page and its info dictionary)."""
    pdf = lib.workspace.source_pdf(doc_id)
    meta = bounded(extract_metadata(items, pdf if pdf.is_file() else None, filename, doc_id))
    return lib.metadata.put_extracted(meta)


def title_from(meta: PaperMetadata | None, fallback: str) -> str:
    """The display title: the metadata title when there is one (not a file name or a running header), else what
    parsing picked."""
    return meta.title if meta is not None and meta.title else fallback


def refresh_metadata(lib: Library, doc_ids: Iterable[str] | None = None) -> list[PaperMetadata]:
    """Extract again for these papers (default: every parsed one); each one's display title follows."""
    docs = [lib.documents.get(d) for d in doc_ids] if doc_ids is not None else lib.documents.list()
    out = []
    for doc in docs:
        if doc is None:
            continue
        items = load_items(lib, doc.id)
        if not items and not lib.workspace.source_pdf(doc.id).is_file():
            continue  # not parsed yet: the ingest will do it
        stored = store_extracted(lib, doc.id, doc.filename, items)
        lib.documents.set_title(doc.id, title_from(stored, doc.title))
        out.append(stored)
    return out


def correct_field(lib: Library, doc_id: str, name: str, value: object, source: str = MANUAL
                  ) -> tuple[PaperMetadata, list[str]]:
    """A hand correction (or an import's value), kept through re-parses; an empty value drops the correction and
    the extracted value shows again. Returns the paper's metadata now and what was cut or cleaned."""
    doc = lib.documents.get(doc_id)
    if doc is None:
        raise KeyError(doc_id)
    clean, notes = clean_field(name, value)
    stored = lib.metadata.set_field(doc_id, name, clean, source)
    if name == "title":
        lib.documents.set_title(doc_id, title_from(stored, doc.filename.rsplit(".", 1)[0]))
    return stored, notes
