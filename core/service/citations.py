"""Citations out of what the query layer returns: a context source, a search hit, a stored chunk. The quote is
the passage's sentence that best matches what cites it, at most QUOTE_CHARS long."""
from __future__ import annotations

import re

from core.content.content_list import MalformedContentList
from core.content.pages import load_items
from core.library import Library
from core.presentation.graph.paths import supporting_passage
from core.query.records import Source
from core.schema.records import Chunk, SearchHit
from core.service.records import Citation

QUOTE_CHARS = 240
_MARKER = re.compile(r"\[\d+(?:\s*,\s*\d+)*\]")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9.\-]{2,}")


def quote_of(text: str, cue: str = "") -> str:
    """The sentence of `text` sharing most words with `cue` (its first sentence without one)."""
    words = list(dict.fromkeys(_WORD.findall(_MARKER.sub("", cue))))[:24]
    return supporting_passage(text or "", words, limit=QUOTE_CHARS)


def from_source(source: Source, cue: str = "") -> Citation:
    return Citation(n=source.n, paper_id=source.doc_id, paper=source.doc_title, page=source.page + 1,
                    box=list(source.bbox) if source.bbox else None, quote=quote_of(source.text, cue),
                    chunk_id=source.chunk_id, kind=source.kind, section=source.section)


def from_hit(hit: SearchHit, n: int) -> Citation:
    return Citation(n=n, paper_id=hit.chunk.doc_id, paper=hit.doc_title, page=hit.page + 1,
                    box=list(hit.bbox) if hit.bbox else None, quote=quote_of(hit.window_text),
                    chunk_id=hit.chunk.id, kind=hit.chunk.kind, section=hit.chunk.section)


def chunk_box(lib: Library, chunk: Chunk, page_idx: int | None) -> list[float] | None:
    """The union box of the chunk's items on its page, or None (no page, no boxes, an unreadable parse)."""
    if page_idx is None:
        return None
    try:
        items = load_items(lib, chunk.doc_id)
    except (MalformedContentList, OSError):
        return None
    wanted = set(chunk.item_indices)
    boxes = [i.bbox for i in items if i.index in wanted and i.page_idx == page_idx and i.bbox]
    if not boxes:
        return None
    return [min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)]


def from_chunk(lib: Library, chunk: Chunk, n: int, title: str, cue: str = "") -> Citation:
    page = chunk.pages[0] if chunk.pages else None
    return Citation(n=n, paper_id=chunk.doc_id, paper=title, page=None if page is None else page + 1,
                    box=chunk_box(lib, chunk, page), quote=quote_of(chunk.text, cue), chunk_id=chunk.id,
                    kind=chunk.kind, section=chunk.section)
