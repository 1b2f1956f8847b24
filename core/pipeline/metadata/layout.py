"""The first page of a PDF as lines with their font size and place: the title is the largest type near the top,
the byline what follows it before the abstract."""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from core.pipeline.metadata.names import SEP, names_in, read_byline_line
from core.pipeline.metadata.rules import rules


@dataclass
class Line:
    text: str
    size: float
    y0: float
    y1: float
    x0: float
    horizontal: bool
    raw: str = ""  # as printed, wide gaps kept: a byline's names are often apart by spaces alone
    x1: float = 0.0
    bold: bool = False
    baseline: float = 0.0  # where its main type sits: a superscript mark before a name must not start a row
    marked: str = ""  # raw, with SEP where a superscript mark or a wide gap stood ("Kyle Lo ¦ Zejiang Shen")


@dataclass
class FirstPage:
    lines: list[Line]
    height: float
    text: str  # the whole page's text (rotated margin stamps included)
    info: dict  # the PDF's own metadata (title, author, subject, keywords, creationDate…)


def read_first_page(pdf: Path) -> FirstPage | None:
    """None when the file is not a readable PDF or has no page."""
    try:
        with pymupdf.open(pdf) as doc:
            if doc.page_count == 0 or doc.needs_pass:
                return None
            page = doc[0]
            lines = []
            for block in page.get_text("dict").get("blocks", []):
                for line in block.get("lines", []):
                    every = line.get("spans", [])
                    spans = _main_spans(every)
                    raw = join_accents("".join(s["text"] for s in spans))
                    text = " ".join(raw.split())
                    spans = [s for s in spans if s["text"].strip()]
                    if not spans:
                        continue
                    size = Counter({round(s["size"], 1): len(s["text"]) for s in spans}).most_common(1)[0][0]
                    bold = sum(len(s["text"]) for s in spans if s.get("flags", 0) & 16) * 2 > \
                        sum(len(s["text"]) for s in spans)
                    baseline = max(s["origin"][1] for s in spans if abs(round(s["size"], 1) - size) < 0.5)
                    x0, y0, x1, y1 = line["bbox"]
                    lines.append(Line(text, size, y0, y1, x0, abs(line["dir"][1]) < 0.01 and line["dir"][0] > 0,
                                      raw, x1, bold, baseline, _marked(every, spans, size)))
            return FirstPage(lines, page.rect.height, page.get_text(), dict(doc.metadata or {}))
    except Exception:  # a broken file: the items alone speak for it
        return None


def join_accents(text: str) -> str:
    """NFKC text, with TeX's spacing accents put back on their letter: "Zolt´an Gy¨ongyi" → "Zoltán Gyöngyi",
    "Kru¨ger" → "Krüger" (the accent sits before or after its letter: on the vowel of the two); a cedilla on the
    consonant ("Franc¸ois" → "François")."""
    text = unicodedata.normalize("NFKC", text)  # "´" becomes " ́" (a space and a combining accent)

    def place(m: re.Match) -> str:
        before, accent, after = m.group(1), m.group(2), m.group(3)
        vowel_before, vowel_after = before.lower() in "aeiou", after.lower() in "aeiou"
        if accent == "\u0327":  # a cedilla hangs under a consonant ("Franc¸ois"), whichever side it was set
            vowel_before, vowel_after = not vowel_before, not vowel_after
        if vowel_before and not vowel_after:
            return unicodedata.normalize("NFC", before + accent) + after
        return before + unicodedata.normalize("NFC", after + accent)

    return unicodedata.normalize("NFC", re.sub(r"(\w)\s?([\u0300-\u036f])\s?(\w)", place, text))


def _main_spans(spans: list[dict]) -> list[dict]:
    """A line's spans without superscripts (footnote marks, affiliation indices: "Kyle Lo^α"); space spans kept."""
    sized = [s["size"] for s in spans if s.get("text", "").strip()]
    if not sized:
        return []
    top = max(sized)
    return [s for s in spans if not s.get("text", "").strip()
            or not (s.get("flags", 0) & 1 or s["size"] < top * rules().superscript_ratio)]


def _marked(every: list[dict], main: list[dict], size: float) -> str:
    """The line's text with SEP where a superscript mark stood between words ("Russell Authur^α Erin Bransom^α" →
    "Russell Authur ¦ Erin Bransom") or where a gap wider than an em parts two spans: a byline's separators."""
    kept = {id(s) for s in main}
    out: list[str] = []
    right = None
    for span in every:
        body = span.get("text", "")
        if not body.strip():
            out.append(body)
            continue
        if id(span) not in kept:  # a mark; a TeX accent set apart ("J˛edrzej") stays with its letter
            accent = all(unicodedata.category(c) in ("Sk", "Mn", "Lm") for c in body.strip())
            out.append(body if accent else SEP)
            continue
        if right is not None and span["bbox"][0] - right > rules().byline_gap_em * size:
            out.append(SEP)
        out.append(body)
        right = span["bbox"][2]
    return join_accents("".join(out))


def reading_order(lines: list[Line]) -> list[Line]:
    """Rows top to bottom (lines whose baselines are within half a line of each other are one row: a mark raised
    before a name, on a line of its own, starts no row), each left to right."""
    rows: list[list[Line]] = []
    for line in sorted(lines, key=lambda ln: ln.baseline or ln.y1):
        first = rows[-1][0] if rows else None
        if first is not None and (line.baseline or line.y1) - (first.baseline or first.y1) \
                <= 0.5 * max(line.size, first.size):
            rows[-1].append(line)
        else:
            rows.append([line])
    return [ln for row in rows for ln in sorted(row, key=lambda ln: ln.x0)]


def _letters(text: str) -> int:
    return sum(c.isalpha() for c in text)


def body_size(lines: list[Line]) -> float:
    sizes: Counter[float] = Counter()
    for line in lines:
        sizes[line.size] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _titleish(line: Line) -> bool:
    r = rules()
    return (line.horizontal and _letters(line.text) >= 4
            and not any(p.search(line.text) for p in r.not_title)
            and not re.search(r"\S+@\S+|https?://", line.text))


def title_candidates(page: FirstPage) -> list[list[Line]]:
    """Runs of lines in the largest types near the top of the page that read like a title, largest first."""
    r = rules()
    top = [ln for ln in page.lines if ln.y0 < page.height * r.title_region and _titleish(ln)]
    body = body_size(page.lines)
    out = []
    for size in sorted({ln.size for ln in top}, reverse=True):
        if size < body * r.title_min_size_over_body:
            break
        group = _group(reading_order([ln for ln in top if abs(ln.size - size) <= r.title_size_tolerance]), size)
        text = " ".join(ln.text for ln in group)
        if _letters(text) >= r.title_min_letters and len(text) <= r.title_max_chars:
            out.append(group)
    return out


def _folded(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", unicodedata.normalize("NFKD", text).lower())


def title_and_byline(page: FirstPage, known_title: str = "") -> tuple[list[Line], list[str]]:
    """The title's lines and the names under them: the largest type followed by a byline (a journal banner or a
    figure's large lettering is followed by none), else the largest type alone. A title the PDF's own field gives
    (and the page prints) is tried first: a banner above it ("EDGE ARTICLE" under "Chemical Science") is no
    title and what follows it no byline."""
    candidates = title_candidates(page)
    known = _folded(known_title)
    if known:
        candidates.sort(key=lambda g: not (_folded(title_text(g)) and (_folded(title_text(g)) in known
                                                                         or known in _folded(title_text(g)))))
    candidates = candidates[:rules().title_candidates]
    for group in candidates:
        names = byline_names(page, group)
        if names:
            return group, names
    return (candidates[0], []) if candidates else ([], [])


def _group(lines: list[Line], size: float) -> list[Line]:
    """The first run of lines that follow each other closely (a title's lines), not every line of that size."""
    group: list[Line] = []
    for line in lines:
        if group and line.y0 - group[-1].y1 > size * rules().title_line_gap:
            if _letters(" ".join(g.text for g in group)) >= rules().title_min_letters:
                break
            group = []
        group.append(line)
    return group


_FRONT_END = re.compile(r"^\W*(abstract|summary|introduction|keywords|a b s t r a c t)\b", re.I)


def _overlaps(line: Line, x0: float, x1: float) -> bool:
    return line.x0 < x1 and line.x1 > x0


def byline_names(page: FirstPage, title: list[Line]) -> list[str]:
    """The names printed under the title, before the abstract or the first paragraph of body text.

    The byline's type (size and weight) is the first name line's: lines in another type (affiliations, e-mail
    addresses in a grid of authors) are stepped over, lines in the same type read, so a second row of the grid is
    found. A line must stand under the title or the names so far (a side column of affiliations does not). An
    "Abstract" heading beside the byline closes its own column only; one under it ends the byline. A lone given name
    at a line's end is finished by the next line ("… and Andrew" / "D. White")."""
    r = rules()
    if not title:
        return []
    below = reading_order([ln for ln in page.lines if ln.horizontal and ln.y0 >= title[-1].y1 - 1
                           and ln.y0 < page.height * r.front_region])
    body = body_size(page.lines)
    names: list[str] = []
    style: Line | None = None  # the first line that named people
    left, right = min(ln.x0 for ln in title), max(ln.x1 for ln in title)
    closed: list[Line] = []  # headings beside the byline: their column is the abstract's
    carried, carried_from = "", None
    seen_lines = 0
    for line in below:
        if any(_overlaps(line, c.x0, c.x1) and line.y0 >= c.y0 - 1 for c in closed):
            continue
        if _FRONT_END.match(line.text):
            if not names or _overlaps(line, left, right) and not _beside(line, style):
                break
            closed.append(line)
            continue
        if line.size < body * r.author_min_size_ratio and not names:
            continue
        if style is not None and (not _same_type(line, style) or not _overlaps(line, left, right)):
            continue
        if len(line.text) > 60 and line.text.endswith((".", ",")) and not names_in(line.text):
            break  # prose: the front matter is over
        if re.fullmatch(r"[\s,;]*(?:(?:\{[^}]*\}|\S+)@\S+[\s,;]*)+", line.text):
            continue  # e-mail addresses under each name of a grid, in the names' type
        if names and r.affiliation_line.search(line.text):
            break  # the affiliations under the names, in the names' type: "Ecosystem Studies" is no person
        # A dangling given name is finished only by the first line of the next row.
        if carried_from is not None and line.baseline - carried_from.baseline < 0.5 * line.size:
            carried = ""
        read = read_byline_line(line.marked or line.raw or line.text, carried)
        # Only a byline under way wraps a name ("Col1 | Col2" / "Val11" is a table's head, not "Col Val").
        carried, carried_from = (read.dangling if names or read.names else ""), line
        found = read.names if len(read.names) > read.others else []
        if found:
            names += [n for n in found if n not in names]
            if style is None:
                style = line
            left, right = min(left, line.x0), max(right, line.x1)
        elif names and not carried and seen_lines >= r.max_author_lines:
            break
        seen_lines += 1
    return names


def _same_type(line: Line, style: Line) -> bool:
    return abs(line.size - style.size) <= rules().byline_style_size_tolerance and line.bold == style.bold


def _beside(line: Line, style: Line | None) -> bool:
    """A heading on the first name line's row, right of it (a grid of authors beside the abstract)."""
    return style is not None and abs(line.y0 - style.y0) < style.size and line.x0 > style.x1


def running_header(page: FirstPage) -> str:
    """The running head at the top of a page that is not the paper's first ("Optimized Table Tokenization for
    Table Structure Recognition 9"): on a single page cut from a paper it is the only title printed."""
    r = rules()
    top = reading_order([ln for ln in page.lines if ln.horizontal and ln.y0 < page.height * r.header_region])
    if not top:
        return ""
    m = re.match(r"^(?:\d{1,4}\s+)?(.+?)(?:\s+\d{1,4})?$", top[0].text)
    text = m.group(1).strip() if m else ""
    if _letters(text) < r.header_min_letters or any(p.search(text) for p in r.not_title) or names_in(text):
        return ""
    return text


def title_text(lines: list[Line]) -> str:
    text = " ".join(ln.text for ln in lines)
    text = re.sub(r"(\w)- (\w)", r"\1-\2", text)  # a hyphen that ended a line
    return re.sub(r"[∗*†‡§¶]+$|(?<=[a-z])\d$", "", text).strip()
