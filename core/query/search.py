"""Semantic search over the collection: query → best embedding windows → their chunks, with filters."""
from __future__ import annotations

from dataclasses import dataclass, field

from core.library import Library
from core.schema.records import SearchHit
from core.store.base import VectorFilter

# Windows are fetched several times over top_k because several windows of one chunk may match.
OVERFETCH = 4


@dataclass
class SearchFilters:
    doc_ids: list[str] = field(default_factory=list)  # papers; empty = all
    kinds: list[str] = field(default_factory=list)  # text / table / image / equation; empty = all
    sections: list[str] = field(default_factory=list)  # exact section headings; empty = all


def _vector_filter(filters: SearchFilters, ready: list[str]) -> VectorFilter:
    # The page's "empty = all" becomes the store's "None = no constraint"; papers are always limited to the
    # ready ones.
    doc_ids = sorted(set(filters.doc_ids) & set(ready)) if filters.doc_ids else ready
    return VectorFilter(doc_ids=doc_ids, kinds=list(filters.kinds) or None, sections=list(filters.sections) or None)


def _parse_bbox(value) -> list[float] | None:
    if not value:
        return None
    try:
        box = [float(v) for v in str(value).split(",")]
    except ValueError:
        return None
    return box if len(box) == 4 else None


def search(lib: Library, query: str, top_k: int = 10, filters: SearchFilters | None = None) -> list[SearchHit]:
    query = (query or "").strip()
    if not query or top_k <= 0:
        return []
    filters = filters or SearchFilters()
    # Only ready documents are searchable: a document mid-ingest or failed never shows half its vectors.
    docs = lib.documents.ready_papers()
    ready = [d.id for d in docs]
    if not ready or (filters.doc_ids and not set(filters.doc_ids) & set(ready)):
        return []
    vector = lib.embedder().embed_query(query)
    matches = lib.windows.query(vector, top_k * OVERFETCH, filters=_vector_filter(filters, ready))
    best = {}
    for match in matches:  # sorted by score: the first window of a chunk is its best
        chunk_id = match.metadata.get("chunk_id")
        if chunk_id and chunk_id not in best:
            best[chunk_id] = match
        if len(best) == top_k:
            break
    chunks = lib.chunks.get_many(list(best))
    titles = {d.id: d.display_title for d in docs}
    hits = []
    for chunk_id, match in best.items():
        chunk = chunks.get(chunk_id)
        if chunk is None:
            continue
        hits.append(SearchHit(chunk=chunk, score=match.score, window_text=match.document,
                              page=int(match.metadata.get("page", chunk.pages[0] if chunk.pages else 0)),
                              bbox=_parse_bbox(match.metadata.get("bbox")), doc_title=titles.get(chunk.doc_id, "")))
    return hits
