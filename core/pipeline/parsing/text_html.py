"""HTML → content items with the standard library's tolerant parser (html.parser): h1-h6 → headings, p/div/... →
paragraphs, ul/ol → lists, pre → code, table → table items (cells as escaped text). Hostile input is the norm:
script, style and other non-content elements are dropped with their content, nothing is executed or fetched,
no markup is kept, and the parser builds no tree (a deeply nested page costs nothing more)."""
from __future__ import annotations

from html.parser import HTMLParser

from core.pipeline.parsing import text_items as mk
from core.schema.records import ContentItem

# Their content is not the page's text (code, styles, embedded objects, form widgets, inline SVG).
_DROPPED = {"script", "style", "noscript", "template", "iframe", "object", "embed", "svg", "math", "canvas",
            "select", "textarea", "button", "head"}
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = {"p", "div", "section", "article", "main", "header", "footer", "aside", "nav", "blockquote", "hr",
           "figure", "figcaption", "dl", "dt", "dd", "address", "details", "summary", "form", "fieldset",
           "body", "html", "center"}
_VOID = {"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "wbr", "source", "track", "param"}
MAX_TABLE_CELLS = 10_000  # a bigger "table" is a page layout, read as text


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.items: list[ContentItem] = []
        self.text: list[str] = []
        self.drop_depth = 0
        self.drop_tag = ""
        self.heading_level = 0
        self.in_pre = 0
        self.lists: list[list[str]] = []  # open <ul>/<ol>: their entries so far
        self.table: list[list[str]] | None = None  # rows of the open (outermost) table
        self.cell: list[str] | None = None
        self.table_depth = 0
        self.title: list[str] = []
        self.in_title = False

    # ------------------------------------------------------------------------------------------ text buffers
    def flush(self) -> None:
        """The text gathered so far becomes an item of the kind the open elements say."""
        raw = "".join(self.text)
        self.text = []
        if self.in_pre:
            if raw.strip():
                self.items.append(mk.code(raw))
            return
        text = mk.squash(raw)
        if not text:
            return
        if self.heading_level:
            self.items.append(mk.heading(text, self.heading_level))
        elif self.lists:
            self.lists[-1].append(text)
        else:
            self.items.append(mk.paragraph(text))

    # ------------------------------------------------------------------------------------------ parser events
    def handle_starttag(self, tag: str, attrs) -> None:
        if self.drop_depth:
            if tag == self.drop_tag:
                self.drop_depth += 1
            return
        if tag in _DROPPED:
            if tag == "head":  # its <title> is worth keeping; the rest of <head> holds no text
                return
            self.drop_depth, self.drop_tag = 1, tag
            return
        if tag == "title":
            self.in_title = True
            return
        if tag == "table":
            self.table_depth += 1
            if self.table_depth == 1:
                self.flush()
                self.table = []
            return
        if self.table is not None:
            if self.table_depth > 1:  # a table inside a cell: its words join the outer cell
                return
            if tag == "tr":
                self.table.append([])
            elif tag in ("td", "th"):
                self.cell = []
            elif tag == "br" and self.cell is not None:
                self.cell.append(" ")
            return
        if tag in _HEADINGS:
            self.flush()
            self.heading_level = _HEADINGS[tag]
        elif tag in ("ul", "ol"):
            self.flush()
            self.lists.append([])
        elif tag == "li":
            self.flush()
        elif tag == "pre":
            self.flush()
            self.in_pre += 1
        elif tag in _BLOCKS:
            self.flush()
        elif tag == "br":
            self.handle_data("\n" if self.in_pre else " ")
        elif tag == "img":
            alt = dict(attrs).get("alt")
            if alt:
                self.handle_data(f" {alt} ")

    def handle_startendtag(self, tag: str, attrs) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.drop_depth:
            if tag == self.drop_tag:
                self.drop_depth -= 1
            return
        if tag == "title":
            self.in_title = False
            return
        if self.table is not None:
            self._table_end(tag)
            return
        if tag in _HEADINGS and self.heading_level:
            self.flush()
            self.heading_level = 0
        elif tag in ("ul", "ol") and self.lists:
            self.flush()
            entries = self.lists.pop()
            if self.lists:  # a nested list's entries join the parent list
                self.lists[-1].extend(entries)
            elif entries:
                self.items.append(mk.list_item(entries))
        elif tag == "li":
            self.flush()
        elif tag == "pre" and self.in_pre:
            self.flush()
            self.in_pre -= 1
        elif tag in _BLOCKS:
            self.flush()

    def _table_end(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None and self.table is not None and self.table_depth == 1:
            if not self.table:
                self.table.append([])
            self.table[-1].append(mk.squash("".join(self.cell)))
            self.cell = None
        elif tag == "table":
            self.table_depth -= 1
            if self.table_depth == 0:
                self._close_table()

    def _close_table(self) -> None:
        rows = [r for r in self.table or [] if any(c for c in r)]
        self.table, self.cell = None, None
        if not rows:
            return
        width = max(len(r) for r in rows)
        if sum(len(r) for r in rows) > MAX_TABLE_CELLS:
            self.items.append(mk.paragraph("\n".join(" ".join(r) for r in rows)))
            return
        self.items.append(mk.table([r + [""] * (width - len(r)) for r in rows]))

    def handle_data(self, data: str) -> None:
        if self.drop_depth:
            return
        if self.in_title:
            self.title.append(data)
        elif self.cell is not None:
            self.cell.append(data)
        elif self.table is None:
            self.text.append(data)

    def close(self) -> None:
        super().close()
        if self.table is not None:
            self._close_table()
        self.heading_level = 0
        self.flush()
        while self.lists:
            entries = self.lists.pop()
            if self.lists:
                self.lists[-1].extend(entries)
            elif entries:
                self.items.append(mk.list_item(entries))


def html_items(text: str) -> list[ContentItem]:
    """The page's content items; when it has no heading at all, its <title> (if any) becomes the first one."""
    reader = _Reader()
    reader.feed(text)
    reader.close()
    items = [i for i in reader.items if mk.has_words(i)]
    title = mk.squash("".join(reader.title))
    if title and not any(i.is_heading for i in items):
        items.insert(0, mk.heading(title, 1))
    return mk.normalise_levels(items)
