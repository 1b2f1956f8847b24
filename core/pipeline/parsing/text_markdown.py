"""Markdown → content items: ATX (#) and setext (=== / ---) headings, paragraphs, lists, fenced and indented code,
simple pipe tables, block quotes. Line-based, linear in the input, no regex that can backtrack badly.

Markup is never kept: raw HTML tags are dropped (script and style blocks with their content), links keep their
text, images their alt text; nothing is fetched. A pipe table whose rows do not all have the header's number of
cells stays a paragraph, so its words are still searched."""
from __future__ import annotations

import re

from core.pipeline.parsing import text_items as mk
from core.schema.records import ContentItem

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BULLET = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])[ \t]+(.*)$")
_RULE = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_TABLE_RULE = re.compile(r"^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_QUOTE = re.compile(r"^ {0,3}> ?")
_RAW_BLOCK_TAGS = ("script", "style", "noscript", "template", "iframe", "object")
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\([^)\n]*\)")
_LINK = re.compile(r"\[([^\]\n]+)\]\([^)\n]*\)")
_CODE_SPAN = re.compile(r"`+([^`\n]+)`+")


def inline(text: str) -> str:
    """A line's words without markup: images → alt text, links → their text, code spans → their text, tags out."""
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _CODE_SPAN.sub(r"\1", text)
    return _TAG.sub("", text)


def drop_raw_blocks(text: str) -> str:
    """Comments and script/style/... elements with their content, by a linear scan (a regex with `.*?` rescans to
    the end for every unclosed opening tag: quadratic on hostile input). An opening tag that is never closed is
    dropped alone, so prose that mentions "<script>" loses one word, not the rest of the document."""
    lower = text.lower()
    marks = {"<!--": "-->", **{f"<{t}": f"</{t}" for t in _RAW_BLOCK_TAGS}}
    next_at = {m: lower.find(m) for m in marks}  # each mark's next occurrence, searched again only once passed
    close_at = dict.fromkeys(marks, -2)  # each closing mark's next occurrence; -1: none after some point
    out, pos = [], 0
    while True:
        for m, at in next_at.items():
            if 0 <= at < pos:
                next_at[m] = lower.find(m, pos)
        found = [(at, m) for m, at in next_at.items() if at >= 0]
        if not found:
            out.append(text[pos:])
            return "".join(out)
        start, mark = min(found)
        after = lower[start + len(mark):start + len(mark) + 1]
        if mark != "<!--" and after not in (">", "/", " ", "\t", "\n"):  # <styles>, <objective>: not ours
            out.append(text[pos:start + 1])
            pos = start + 1
            continue
        out.append(text[pos:start])
        if close_at[mark] == -2 or 0 <= close_at[mark] < start + len(mark):
            close_at[mark] = lower.find(marks[mark], start + len(mark))
        end = close_at[mark]
        if end < 0:  # never closed: drop the opening tag only
            close = lower.find(">", start)
            pos = len(text) if close < 0 else close + 1
            continue
        close = lower.find(">", end)
        pos = len(text) if close < 0 else close + 1


def _cells(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    return [inline(c.replace("\\|", "|")).strip() for c in re.split(r"(?<!\\)\|", line)]


def _front_matter(lines: list[str]) -> tuple[list[ContentItem], int]:
    """YAML front matter (---, key: value lines, ---) is metadata, not text: its title becomes the title heading."""
    if not lines or lines[0].strip() != "---":
        return [], 0
    for end in range(1, min(len(lines), 200)):
        if lines[end].strip() in ("---", "..."):
            titles = [ln.split(":", 1)[1].strip().strip("\"'") for ln in lines[1:end]
                      if ln.lower().startswith("title:")]
            return ([mk.heading(titles[0], 1)] if titles and titles[0] else []), end + 1
    return [], 0


class _Reader:
    def __init__(self, lines: list[str]):
        self.lines = lines
        self.items: list[ContentItem] = []
        self.para: list[str] = []

    def flush(self) -> None:
        text = "\n".join(inline(p) for p in self.para).strip()
        if text:
            self.items.append(mk.paragraph(text))
        self.para = []

    def read(self, start: int) -> list[ContentItem]:
        i, lines = start, self.lines
        while i < len(lines):
            line = lines[i]
            stripped = line.strip()
            if not stripped:
                self.flush()
                i += 1
            elif m := _FENCE.match(line):
                self.flush()
                i = self._fenced(i, m.group(1))
            elif m := _ATX.match(line):
                self.flush()
                title = inline(re.sub(r"[ \t]+#+$", "", m.group(2) or ""))
                if title.strip():
                    self.items.append(mk.heading(title, len(m.group(1))))
                i += 1
            elif self.para and _SETEXT.match(line) and not _BULLET.match(self.para[0]):
                level = 1 if stripped.startswith("=") else 2
                title = " ".join(inline(p) for p in self.para)
                self.para = []
                if title.strip():
                    self.items.append(mk.heading(title, level))
                i += 1
            elif _RULE.match(line):
                self.flush()
                i += 1
            elif "|" in line and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1]) and "-" in lines[i + 1]:
                self.flush()
                i = self._table(i)
            elif _BULLET.match(line) and not self.para:
                i = self._list(i)
            elif _QUOTE.match(line):
                self.para.append(_QUOTE.sub("", line))
                i += 1
            elif line.startswith(("    ", "\t")) and not self.para:
                i = self._indented(i)
            else:
                self.para.append(stripped)
                i += 1
        self.flush()
        return self.items

    def _fenced(self, i: int, fence: str) -> int:
        body = []
        i += 1
        while i < len(self.lines) and not self.lines[i].strip().startswith(fence[0] * len(fence)):
            body.append(self.lines[i])
            i += 1
        if "".join(body).strip():
            self.items.append(mk.code("\n".join(body)))
        return i + 1

    def _indented(self, i: int) -> int:
        body = []
        while i < len(self.lines) and (self.lines[i].startswith(("    ", "\t")) or not self.lines[i].strip()):
            body.append(self.lines[i][4:] if self.lines[i].startswith("    ") else self.lines[i][1:])
            i += 1
        if "".join(body).strip():
            self.items.append(mk.code("\n".join(body)))
        return i

    def _table(self, i: int) -> int:
        header = _cells(self.lines[i])
        rows, raw = [header], [self.lines[i]]
        i += 2
        while i < len(self.lines) and "|" in self.lines[i] and self.lines[i].strip():
            rows.append(_cells(self.lines[i]))
            raw.append(self.lines[i])
            i += 1
        if all(len(r) == len(header) for r in rows):
            self.items.append(mk.table(rows))
        else:  # ragged: not a simple table; keep its words as text
            self.items.append(mk.paragraph("\n".join(inline(r) for r in raw)))
        return i

    def _list(self, i: int) -> int:
        entries: list[str] = []
        while i < len(self.lines):
            line = self.lines[i]
            if m := _BULLET.match(line):
                entries.append(inline(m.group(1)))
            elif line.strip() and line.startswith((" ", "\t")) and entries:
                entries[-1] += " " + inline(line.strip())  # a continuation or a nested entry's words
            elif not line.strip() and i + 1 < len(self.lines) and (
                    _BULLET.match(self.lines[i + 1]) or self.lines[i + 1].startswith(("  ", "\t"))):
                pass  # a loose list: blank lines between its entries
            else:
                break
            i += 1
        if entries:
            self.items.append(mk.list_item(entries))
        return i


def markdown_items(text: str) -> list[ContentItem]:
    text = drop_raw_blocks(text)
    lines = text.split("\n")
    front, start = _front_matter(lines)
    items = front + _Reader(lines).read(start)
    return mk.normalise_levels([i for i in items if mk.has_words(i)])
