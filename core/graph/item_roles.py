"""What each parsed item of a paper is for, from what parsing knows about it: the title, the author and
affiliation block (the first page's front matter before the abstract), headings, reference-list entries (list
items of sub_type reference, or anything under a References section), page furniture and footnotes, or body.

Shared by the LLM-free reader (core/query/reading/extractive.py:
only body text answers) and the LLM-free entity extractor
(core/graph/extract/spacy/extract.py: only body text, captions and tables give entities; the byline gives its
people and organisations)."""
from __future__ import annotations

import re

from core.content.items import item_text
from core.graph.extract.spacy.text import is_references_section
from core.schema.records import ContentItem

BODY = "body"
NEVER = {"title", "front", "heading", "reference", "footnote", "furniture"}  # roles that never answer a question

_FURNITURE = {"header", "footer", "page_number", "discarded", "page_footnote", "page_header", "page_footer"}
_ABSTRACT = re.compile(r"^\W*abstract\b", re.I)
# A sentence, not an author or affiliation line: a dozen words ending with a full stop (a page excerpt without a
# title starts with body text).
_PROSE = re.compile(r"^(?:\S+\s+){11,}\S+[.!?]$")


def item_roles(items: list[ContentItem]) -> dict[int, str]:
    """Item index → body, or why it may never answer (title, front, heading, reference, footnote, furniture)."""
    roles: dict[int, str] = {}
    first_page = [i for i in items if i.page_idx == 0]
    abstract_at = next((k for k, i in enumerate(first_page) if _ABSTRACT.match(item_text(i) or "")), None)
    if abstract_at is None:  # no abstract: the front matter ends at the first heading after the title
        abstract_at = next((k for k, i in enumerate(first_page) if k and i.is_heading), 0)
    front = {i.index for i in first_page[:abstract_at]}
    in_refs = False
    for item in items:
        text = item_text(item)
        if item.is_heading:
            in_refs = is_references_section(text)
        if item.type in _FURNITURE:
            role = "footnote" if "footnote" in item.type else "furniture"
        elif item.is_heading:
            role = "title" if item.text_level == 1 and item.page_idx == 0 and not roles else "heading"
        elif item.type == "list" and item.sub_type == "reference" or in_refs:
            role = "reference"
        elif item.index in front and len(text) < 400 and not _PROSE.search(text):
            role = "front"  # a long front-matter paragraph is an unlabelled abstract, a full sentence is body
        else:
            role = BODY
        roles[item.index] = role
    return roles
