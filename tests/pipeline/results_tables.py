"""Hand-made content lists for the results tests: a table item with its caption, and the text citing it."""
from __future__ import annotations

from core.pipeline.results import read_paper_results
from core.schema.records import ContentItem
from core.schema.results import ResultRecord


def table(body: str, caption: str = "", page: int = 3, footnote: str = "") -> ContentItem:
    return ContentItem(type="table", page_idx=page, table_body=body, captions=[caption] if caption else [],
                       footnotes=[footnote] if footnote else [], bbox=[100.0, 200.0, 900.0, 500.0])


def paper(*items: ContentItem) -> list[ContentItem]:
    out = []
    for i, item in enumerate(items):
        item.index = i
        out.append(item)
    return out


def text(body: str, page: int = 3) -> ContentItem:
    return ContentItem(type="text", page_idx=page, text=body)


def html(*rows: list[str], head: int = 1) -> str:
    """A table's HTML: cells are written as given (so "<b>80.0</b>" stays bold); `head` rows are <th>."""
    out = ["<table>"]
    for i, row in enumerate(rows):
        tag = "th" if i < head else "td"
        out.append("<tr>" + "".join(c if c.startswith("<t") else f"<{tag}>{c}</{tag}>" for c in row) + "</tr>")
    out.append("</table>")
    return "".join(out)


def read(*items: ContentItem) -> list[ResultRecord]:
    return read_paper_results("doc", paper(*items))


def one(records: list[ResultRecord], method: str, **where) -> ResultRecord:
    found = [r for r in records if r.method == method and all(getattr(r, k) == v for k, v in where.items())]
    assert len(found) == 1, (method, where, [(r.method, r.dataset, r.metric, r.value) for r in records])
    return found[0]
