"""A parsed document as the later stages and the pages read it: its content items and its page images, rendered
once and kept in the workspace."""
from __future__ import annotations

import os
import uuid
from functools import lru_cache
from pathlib import Path

from core.content.content_list import load_content_list
from core.content.sources import text_source
from core.library import Library
from core.schema.records import ContentItem

PAGE_DPI = 110


class PageImageUnavailable(Exception):
    """The page cannot be drawn: no source PDF (an imported MinerU output) or no such page."""


def load_items(lib: Library, doc_id: str) -> list[ContentItem]:
    """The document's content list, or [] when it has not been parsed (yet)."""
    path = lib.workspace.parsed_dir(doc_id) / "content_list.json"
    try:
        stamp = path.stat().st_mtime_ns
    except FileNotFoundError:
        return []
    return list(_load_items_cached(str(path), stamp))


@lru_cache(maxsize=16)
def _load_items_cached(path: str, stamp: int) -> tuple[ContentItem, ...]:
    # Keyed on the file's mtime: a re-parse (a new file renamed into place) is read afresh. A search page
    # shows several hits of one paper; it reads that paper's content list once.
    return tuple(load_content_list(Path(path)))


def page_count(lib: Library, doc_id: str) -> int:
    doc = lib.documents.get(doc_id)
    return doc.pages if doc else 0


def page_image_path(lib: Library, doc_id: str, page_idx: int, dpi: int = PAGE_DPI) -> Path:
    """The page rendered to PNG, once; later calls reuse the file. Raises PageImageUnavailable."""
    ws = lib.workspace
    pdf = ws.source_pdf(doc_id)
    if not pdf.exists() and text_source(ws.doc_dir(doc_id)) is not None:
        raise PageImageUnavailable("this is a text document, so it has no page images: its passages are text "
                                   "(the Document page's Markdown tab shows all of it)")
    if not pdf.exists():
        raise PageImageUnavailable("page images are unavailable: this document was imported as a MinerU "
                                   "output, without its source PDF")
    pages = page_count(lib, doc_id)
    if page_idx < 0 or (pages and page_idx >= pages):
        raise PageImageUnavailable(f"page {page_idx + 1} does not exist (the document has {pages} pages)")
    out = ws.pages_dir(doc_id) / f"page_{page_idx:04d}.png"
    if out.exists():
        return out
    from core.content.render import render_page_image  # PyMuPDF: only when a page is first shown

    out.parent.mkdir(parents=True, exist_ok=True)
    # Render beside the target and rename: two sessions showing the same page never see half a file.
    tmp = out.with_name(f".{out.stem}-{uuid.uuid4().hex[:8]}.png")
    try:
        render_page_image(pdf, page_idx, tmp, dpi=dpi)
        os.replace(tmp, out)
    except PageImageUnavailable:
        raise
    except Exception as exc:
        raise PageImageUnavailable(f"page {page_idx + 1} could not be rendered: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    return out
