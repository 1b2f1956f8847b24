"""Passages matching a query (core.query.search), each as a citation: paper, page, box and the matched text."""
from __future__ import annotations

from core.library import Library
from core.query.search import SearchFilters
from core.query.search import search as query_search
from core.service import citations
from core.service.errors import CONFLICT, ServiceError, invalid
from core.service.inputs import bounded, clean_text, find_paper
from core.service.records import SearchResult

MAX_RESULTS = 50
KINDS = ("text", "table", "image", "equation")


def search(lib: Library, query: str, top_k: int = 5, papers: list[str] | None = None,
           kinds: list[str] | None = None) -> SearchResult:
    query = clean_text(query, "query")
    bounded(top_k, "top_k", 1, MAX_RESULTS)
    if unknown := [k for k in kinds or [] if k not in KINDS]:
        raise invalid(f"unknown kind(s) {', '.join(map(repr, unknown))}: choose from {', '.join(KINDS)}")
    filters = SearchFilters(doc_ids=[find_paper(lib, p).id for p in papers or []], kinds=list(kinds or []))
    try:
        hits = query_search(lib, query, top_k=top_k, filters=filters)
    except ValueError as exc:  # VectorSpaceMismatch
        raise ServiceError(CONFLICT, str(exc)) from None
    return SearchResult(query=query, citations=[citations.from_hit(h, n, query) for n, h in enumerate(hits, 1)],
                        scores=[round(float(h.score), 4) for h in hits])
