"""The text of a paper where a citation points: a chunk, or a page (all of it, or the items inside a box)."""
from __future__ import annotations

from core.content.content_list import MalformedContentList
from core.content.pages import load_items
from core.library import Library
from core.schema.records import ContentItem
from core.service import citations
from core.service.errors import invalid, not_found
from core.service.inputs import bounded, find_paper
from core.service.records import Citation, Passage, PassageItem
from core.text.tables import table_text

MAX_PASSAGE_CHARS = 20_000


def _item_text(item: ContentItem) -> str:
    parts = [item.text or " ".join(item.list_items), *item.captions]
    if item.type == "table" and item.table_body:
        parts.append(table_text(item.table_body))
    parts += item.footnotes
    return " ".join(" ".join(p.split()) for p in parts if p and p.strip())


def _overlaps(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def check_box(box: list[float] | None) -> list[float] | None:
    if box is None:
        return None
    if (not isinstance(box, list | tuple) or len(box) != 4
            or not all(isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 1000 for v in box)
            or box[0] >= box[2] or box[1] >= box[3]):
        raise invalid("a box is [x0, y0, x1, y1] in page coordinates from 0 to 1000, with x0 < x1 and y0 < y1")
    return [float(v) for v in box]


def get_passage(lib: Library, paper_id: str, page: int | None = None, box: list[float] | None = None,
                chunk_id: str | None = None) -> Passage:
    """A chunk of the paper by id, or the items of a page (1-based), only those overlapping `box` when given."""
    doc = find_paper(lib, paper_id)
    box = check_box(box)
    if chunk_id is not None:
        chunk = lib.chunks.get_many([str(chunk_id)]).get(str(chunk_id))
        if chunk is None or chunk.doc_id != doc.id:
            raise not_found(f"no passage {str(chunk_id)[:80]!r} in paper {doc.id[:12]}")
        cite = citations.from_chunk(lib, chunk, 1, doc.display_title)
        return Passage(paper_id=doc.id, paper=doc.display_title, page=cite.page or 0,
                       text=chunk.text[:MAX_PASSAGE_CHARS], items=[], citations=[cite])
    if page is None:
        raise invalid("give a page (from 1) or a chunk id")
    bounded(page, "page", 1, max(doc.pages, 1))
    try:
        items = load_items(lib, doc.id)
    except MalformedContentList as exc:
        raise not_found(f"paper {doc.id[:12]} has no readable parse ({exc})") from None
    on_page = [i for i in items if i.page_idx == page - 1 and (box is None or (i.bbox and _overlaps(i.bbox, box)))]
    found = [PassageItem(type=i.type, text=t, box=list(i.bbox) if i.bbox else None)
             for i in on_page if (t := _item_text(i))]
    if not found:
        raise not_found(f"nothing was read on page {page} of paper {doc.id[:12]}"
                        + (" inside that box" if box else ""))
    text = "\n".join(i.text for i in found)[:MAX_PASSAGE_CHARS]
    boxes = [i.box for i in found if i.box]
    union = box or ([min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes),
                     max(b[3] for b in boxes)] if boxes else None)
    cite = Citation(n=1, paper_id=doc.id, paper=doc.display_title, page=page, box=union,
                    quote=citations.quote_of(text))
    return Passage(paper_id=doc.id, paper=doc.display_title, page=page, text=text, items=found, citations=[cite])
