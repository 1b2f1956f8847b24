"""What the graph takes from a paper's content list besides its chunks: the publication year, for
MENTIONED_IN edges, and the bibliography, kept for citation links."""
from __future__ import annotations

import re
from collections import Counter
from datetime import date

from core.schema.graph import Reference
from core.schema.records import ContentItem

_ARXIV_ID = re.compile(r"arXiv:\s?(\d{2})(\d{2})\.\d{4,5}", re.IGNORECASE)
_YEAR = re.compile(r"(?<![\d.])(19[5-9]\d|20\d\d)(?!\d|\.\d)")
# Where a first page states when the paper appeared: venues, copyright lines, dates of publication.
_YEAR_CONTEXT = re.compile(r"(?:©|\(c\)|copyright|published|proceedings|conference|workshop|journal|preprint|"
                           r"accepted|submitted|received|arxiv|january|february|march|april|may|june|july|august|"
                           r"september|october|november|december|iclr|neurips|nips|icml|acl|emnlp|naacl|cvpr|"
                           r"iccv|eccv|aaai|ijcai|kdd|sigir|www)", re.IGNORECASE)


def _plausible(year: int) -> bool:
    return 1950 <= year <= date.today().year + 1


def publication_year(items: list[ContentItem]) -> int | None:
    """The year the paper states on its first pages: an arXiv identifier, else the most frequent year in a
    line that reads like a venue, copyright or date; None rather than a guess from cited works."""
    head = [i.text for i in items if i.page_idx <= 1 and i.text and i.sub_type != "reference"]
    for text in head:
        m = _ARXIV_ID.search(text)
        if m:
            year = 2000 + int(m.group(1))
            if _plausible(year) and 1 <= int(m.group(2)) <= 12:
                return year
    votes: Counter[int] = Counter()
    for text in head:
        for line in re.split(r"[\n.;]", text):
            if _YEAR_CONTEXT.search(line):
                votes.update(int(y) for y in _YEAR.findall(line) if _plausible(int(y)))
    return votes.most_common(1)[0][0] if votes else None


def bibliography(doc_id: str, items: list[ContentItem]) -> list[Reference]:
    refs: list[Reference] = []
    for item in items:
        if item.type != "list" or item.sub_type != "reference":
            continue
        for entry in item.list_items or [item.text]:
            text = " ".join(entry.split())
            if len(text) < 10:
                continue
            years = [int(y) for y in _YEAR.findall(text) if _plausible(int(y))]
            refs.append(Reference(doc_id=doc_id, index=len(refs), text=text[:2000], year=years[-1] if years else None))
    return refs
