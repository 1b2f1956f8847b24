"""Text documents (Markdown, plain text, HTML) → the same content list a parsed PDF has, so chunking, indexing, the
graph, delete, retry and citations treat them as papers.

The source is kept as docs/<id>/source.<md|txt|html> (the id is the sha256 of the bytes, as for a PDF); the parse
stage reads it from there, so Retry parses it again and a purge removes it with the folder.

Pages: a text document has no layout, but a citation names a page, so items are laid onto pages of about
PAGE_CHARS characters (about one printed page of prose, ~500 words), breaking only between items. A short note
is one page; a 60-page report cites "page 37" instead of "page 1" for everything, and the Document page lists a
page's items instead of the whole file. Items have no boxes: a citation opens the page's text, not a region."""
from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from core.content.content_list import renumber
from core.content.sources import text_format
from core.pipeline.parsing import text_items as mk
from core.pipeline.parsing.markdown import to_markdown
from core.pipeline.parsing.result import ParseError, ParseOutput, process_cpu_seconds, write_output
from core.pipeline.parsing.text_decode import decode_text
from core.pipeline.parsing.text_html import html_items
from core.pipeline.parsing.text_markdown import markdown_items
from core.schema.records import ContentItem
from core.settings.config import ParsingConfig

PAGE_CHARS = 3000
_KIND_NAMES = {"markdown": "Markdown", "text": "plain text", "html": "HTML"}

# Plain text: a heading only when it cannot be a sentence: a short numbered line ("2.1 Methods"), a short line in
# capitals ("RESULTS"), or a line underlined with = or - (as Markdown's setext headings). The first paragraph is the
# title when it is one short line without a full stop. Everything else is a paragraph, split at blank lines.
_NUMBERED = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2}){0,3}\.?|[IVX]{1,5}\.)\s+[A-Z][^.!?:;]{0,70}$")
_UNDERLINE = re.compile(r"^(=+|-+)\s*$")
_MAX_HEADING_WORDS = 12


def _is_caps_heading(line: str) -> bool:
    letters = [c for c in line if c.isalpha()]
    return len(letters) >= 3 and all(c.isupper() for c in letters) and len(line.split()) <= 8 \
        and not line.endswith((".", ",", ";"))


def _plain_heading(block: list[str]) -> tuple[str, int] | None:
    if len(block) == 2 and (m := _UNDERLINE.match(block[1])) and len(block[0].split()) <= _MAX_HEADING_WORDS:
        return block[0], 1 if m.group(1).startswith("=") else 2
    if len(block) != 1 or len(block[0].split()) > _MAX_HEADING_WORDS:
        return None
    line = block[0]
    if _NUMBERED.match(line):
        return line, 2
    if _is_caps_heading(line):
        return line, 2
    return None


def plain_items(text: str) -> list[ContentItem]:
    blocks: list[list[str]] = [[]]
    for line in text.split("\n"):
        if line.strip():
            blocks[-1].append(line.strip())
        elif blocks[-1]:
            blocks.append([])
    items = []
    for n, block in enumerate(b for b in blocks if b):
        found = _plain_heading(block)
        if found is None and n == 0 and len(block) == 1 and len(block[0]) <= 150 and not block[0].endswith(".") \
                and len(block[0].split()) <= _MAX_HEADING_WORDS:
            found = block[0], 1  # a short first line without a full stop: the title
        if found:
            items.append(mk.heading(*found))
        else:
            items.append(mk.paragraph("\n".join(block)))
    return mk.normalise_levels([i for i in items if mk.has_words(i)])


def _item_chars(item: ContentItem) -> int:
    return len(item.text) + sum(len(e) for e in item.list_items) + len(item.table_body)


def paginate(items: list[ContentItem], page_chars: int = PAGE_CHARS) -> int:
    """Sets each item's page_idx (a new page once the current one holds `page_chars`, never inside an item, and
    never right after a heading, which stays with what follows it); returns the page count."""
    page, used = 0, 0
    for n, item in enumerate(items):
        after_heading = n > 0 and items[n - 1].is_heading
        if used >= page_chars and not after_heading:
            page, used = page + 1, 0
        item.page_idx = page
        used += _item_chars(item)
    return page + 1 if items else 0


def read_text_items(data: bytes, fmt: str) -> tuple[list[ContentItem], list[str]]:
    text, warnings = decode_text(data, _KIND_NAMES[fmt])
    reader = {"markdown": markdown_items, "html": html_items, "text": plain_items}[fmt]
    items = reader(text)
    if not items:
        raise ParseError(f"no text found in this {_KIND_NAMES[fmt]} file"
                         + (" (only markup, scripts or styles)" if fmt == "html" else ""))
    return items, warnings


def parse_text_document(source: Path, out_dir: Path, config: ParsingConfig,
                        progress: Callable[[str], None] | None = None) -> ParseOutput:
    """The parse stage of a text document: same output files and ParseOutput as parse_pdf."""
    report = progress or (lambda _msg: None)
    cpu0, start = process_cpu_seconds(), time.monotonic()
    fmt = text_format(source.name) or "text"
    limit = config.max_file_mb * 2**20
    size = source.stat().st_size
    if size > limit:
        raise ParseError(f"the file is {size / 2**20:.1f} MB, more than the {config.max_file_mb} MB the parsing "
                         "settings accept")
    report(f"reading {_KIND_NAMES[fmt]}")
    items, warnings = read_text_items(source.read_bytes(), fmt)
    pages = paginate(items)
    if pages > config.max_pages:
        raise ParseError(f"the document is {pages} pages of ~{PAGE_CHARS} characters, more than the "
                         f"{config.max_pages} pages the parsing settings accept")
    items = renumber(items)
    output = ParseOutput(items=items, backend=f"text-{fmt}", pages=pages, markdown=to_markdown(items),
                         warnings=warnings, cpu_seconds=process_cpu_seconds() - cpu0)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    write_output(Path(out_dir), output)
    report(f"read {pages} page{'s' if pages != 1 else ''} into {len(items)} items in "
           f"{time.monotonic() - start:.2f} s")
    return output
