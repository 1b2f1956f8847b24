"""A paper's metadata, offline: a pure function of its parsed items and its PDF (first page, own metadata).

Each field says where it came from: "pdf metadata" (the file's own title/author fields, used only when the first
page confirms them), "first page" (the largest type near the top, the byline under it, a venue or copyright
line), "arxiv pattern" / "doi pattern" (identifiers in the first page's text, the arXiv margin stamp included),
"content list" (the parsed items: a text document, an import without a PDF, or an abstract), "running header"
(a page cut from a paper, with no title but its running head)."""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from core.pipeline.metadata.layout import FirstPage, read_first_page, running_header, title_and_byline, title_text
from core.pipeline.metadata.names import names_in, pdf_author_names, vote_with_pdf_field
from core.pipeline.metadata.patterns import (
    arxiv_year,
    find_arxiv,
    find_doi,
    find_venue,
    pdf_date_year,
    stated_year,
)
from core.pipeline.metadata.rules import rules
from core.schema.metadata import PaperMetadata
from core.schema.records import ContentItem
from core.text.plain import prose_text
from core.text.venues import venue_name

FIRST_PAGE, PDF_META, DOI_PATTERN, ARXIV_PATTERN, CONTENT_LIST, RUNNING_HEADER = (
    "first page", "pdf metadata", "doi pattern", "arxiv pattern", "content list", "running header")
_ABSTRACT = re.compile(r"^\W*(?:abstract|summary|a b s t r a c t)\W*", re.I)


def norm_text(text: str) -> str:
    """Lower case, letters and digits only, accents folded: how titles are compared (here and in references)."""
    return re.sub(r"[^a-z0-9]", "", unicodedata.normalize("NFKD", text).lower())


def extract_metadata(items: list[ContentItem], pdf: Path | None, filename: str = "", doc_id: str = ""
                     ) -> PaperMetadata:
    meta = PaperMetadata(doc_id=doc_id)
    page = read_first_page(pdf) if pdf is not None and pdf.exists() else None
    head_items = [i for i in items if i.page_idx <= 1 and i.text and i.sub_type != "reference"]
    lines = (page.text.splitlines() if page else []) + [i.text for i in head_items]
    _title_and_authors(meta, page, items, filename)
    _identifiers(meta, page, lines)
    # The year from the first page only (its text layer, else its items): page 2 is body text, citing years.
    _year(meta, page, page.text.splitlines() if page else [i.text for i in head_items if i.page_idx == 0])
    # Paragraphs first: a venue line is not broken there. Its pages, places and dates are no part of the name.
    venue = venue_name(find_venue([i.text for i in head_items] + lines))
    if venue:
        _set(meta, "venue", venue, FIRST_PAGE)
    abstract = prose_text(abstract_of(items))  # MinerU writes Markdown with inline HTML
    if abstract:
        _set(meta, "abstract", abstract, CONTENT_LIST)
    return meta


def _set(meta: PaperMetadata, name: str, value, source: str) -> None:
    setattr(meta, name, value)
    meta.sources[name] = source


def _title_and_authors(meta: PaperMetadata, page: FirstPage | None, items: list[ContentItem], filename: str) -> None:
    stem = filename.rsplit(".", 1)[0] if "." in filename else filename
    if page is not None:
        pdf_title = _pdf_title(page, stem)
        group, names = title_and_byline(page, pdf_title)
        title = title_text(group)
        if pdf_title:  # the producer's field, printed on the first page: exact, and spaced as typed
            _set(meta, "title", pdf_title, PDF_META)
        elif title:
            _set(meta, "title", title, FIRST_PAGE)
        elif header := running_header(page):
            _set(meta, "title", header, RUNNING_HEADER)
        pdf_names = pdf_author_names(page.info.get("author", ""))
        page_text = norm_text(page.text)
        if not all(norm_text(n.split()[-1]) in page_text for n in pdf_names):
            pdf_names = []  # a field the page does not bear out (a template's, an uploader's)
        authors, from_pdf = vote_with_pdf_field(names, pdf_names)
        if authors:
            _set(meta, "authors", authors, PDF_META if from_pdf else FIRST_PAGE)
    if not meta.title:
        title = _items_title(items)
        if title:
            _set(meta, "title", title, CONTENT_LIST)
    if not meta.authors:
        names = _items_byline(items)
        if names:
            _set(meta, "authors", names, CONTENT_LIST)


def _pdf_title(page: FirstPage, stem: str) -> str:
    """The PDF's own title field when the first page prints it (producers often leave a file name or a
    template's title there)."""
    title = " ".join((page.info.get("title") or "").split())
    if len(title) < 12 or len(title.split()) < 3 or norm_text(title) == norm_text(stem) \
            or any(p.search(title) for p in rules().pdf_title_junk):
        return ""
    return title[:500] if norm_text(title) in norm_text(page.text) else ""


def _items_title(items: list[ContentItem]) -> str:
    for item in items:
        if item.page_idx > 1:
            break
        text = " ".join(item.text.split())
        if item.type == "text" and item.text_level == 1 and len(text) >= 3 and \
                not any(p.search(text) for p in rules().not_title):
            return text[:500]
    return ""


def _items_byline(items: list[ContentItem]) -> list[str]:
    names: list[str] = []
    seen_title = False
    for item in items:
        if item.page_idx > 0:
            break
        if item.is_heading:
            if seen_title:
                break
            seen_title = True
            continue
        if seen_title and item.type == "text":
            if _ABSTRACT.match(item.text):
                break
            names += [n for n in names_in(item.text, leading=True) if n not in names]
    return names


def _identifiers(meta: PaperMetadata, page: FirstPage | None, lines: list[str]) -> None:
    info = page.info if page else {}
    for text, source in ((" ".join(str(info.get(k) or "") for k in ("subject", "keywords", "title")), PDF_META),
                         ("\n".join(lines), DOI_PATTERN)):
        doi = find_doi(text)
        if doi and not meta.doi:
            _set(meta, "doi", doi, source)
    # The arXiv stamp is rotated text in the left margin; it is in the page's text. A DOI of arXiv (10.48550/
    # arXiv.…) names the id too.
    arxiv = find_arxiv(lines)
    if not arxiv and meta.doi.startswith("10.48550/arxiv."):
        arxiv = meta.doi.split("arxiv.", 1)[1]
    if arxiv:
        _set(meta, "arxiv", arxiv, ARXIV_PATTERN)


def _year(meta: PaperMetadata, page: FirstPage | None, lines: list[str]) -> None:
    year = arxiv_year(meta.arxiv) if meta.arxiv else None
    if year:
        _set(meta, "year", year, ARXIV_PATTERN)
        return
    year = stated_year(lines)
    if year:
        _set(meta, "year", year, FIRST_PAGE)
        return
    year = pdf_date_year((page.info if page else {}).get("creationDate", ""))
    if year:
        _set(meta, "year", year, PDF_META)


def abstract_of(items: list[ContentItem]) -> str:
    """The abstract: the paragraph that starts with "Abstract", or the body text under an Abstract heading."""
    limit = rules().abstract_max_chars
    for k, item in enumerate(items):
        if item.page_idx > 1:
            break
        text = " ".join(item.text.split())
        if not _ABSTRACT.match(text):
            continue
        rest = _ABSTRACT.sub("", text, count=1).strip()
        if len(rest) > 80 and not item.is_heading:
            return rest[:limit]
        parts = []
        for nxt in items[k + 1:k + 6]:
            if nxt.is_heading or nxt.type != "text":
                break
            parts.append(" ".join(nxt.text.split()))
        return " ".join(parts)[:limit]
    return ""
