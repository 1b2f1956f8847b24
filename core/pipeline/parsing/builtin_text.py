"""Text blocks of a page for the builtin (PyMuPDF) parser: clean paragraphs with the font facts headings need."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import pymupdf

from core.pipeline.parsing.layout import Box

_BOLD_FLAG = 16
CAPTION = re.compile(r"^(?P<kind>fig(?:ure)?s?\.?|table|tab\.)\s*(?P<num>\d+|[ivxlc]+)\b\s*(?P<sep>[:.|\-–—]|$)?",
                     re.IGNORECASE)
NUMBERED_HEADING = re.compile(r"^(\d+(\.\d+)*\.?|[IVX]+\.|[A-H]\.)\s+[A-Z]")
PAGE_NUMBER = re.compile(r"^((page|p\.)\s*)?(\d{1,4}|[ivxlc]{1,6})(\s*(of|/)\s*\d{1,4})?$", re.IGNORECASE)


@dataclass
class TextBlock:
    box: Box
    text: str
    size: float  # dominant font size, by characters
    bold: float  # share of characters in a bold face
    lines: int
    vertical: bool = False  # rotated text, e.g. arXiv's side stamp


def _is_bold(span: dict) -> bool:
    return bool(span["flags"] & _BOLD_FLAG) or "bold" in span["font"].lower() or "black" in span["font"].lower()


def _line_style(line: dict) -> tuple[float, bool]:
    chars = Counter()
    bold = 0
    for span in line["spans"]:
        n = len(span["text"].strip())
        chars[round(span["size"] * 2) / 2] += n
        bold += n if _is_bold(span) else 0
    total = sum(chars.values()) or 1
    return (chars.most_common(1)[0][0] if chars else 0.0), bold / total > 0.6


def join_lines(lines: list[str]) -> str:
    """Join a paragraph's lines, undoing end-of-line hyphenation ("migra-" + "tion")."""
    out = ""
    for line in (ln.strip() for ln in lines):
        if not line:
            continue
        if out.endswith("-") and len(out) > 1 and out[-2].isalpha() and line[:1].islower():
            out = out[:-1] + line
        else:
            out = f"{out} {line}" if out else line
    return out


def _make_block(lines: list[dict]) -> TextBlock | None:
    texts = ["".join(s["text"] for s in ln["spans"]) for ln in lines]
    text = join_lines(texts)
    if not text:
        return None
    sizes, bold, total = Counter(), 0, 0
    for ln in lines:
        for span in ln["spans"]:
            n = len(span["text"].strip())
            sizes[round(span["size"] * 2) / 2] += n
            bold += n if _is_bold(span) else 0
            total += n
    box = (min(ln["bbox"][0] for ln in lines), min(ln["bbox"][1] for ln in lines),
           max(ln["bbox"][2] for ln in lines), max(ln["bbox"][3] for ln in lines))
    vertical = abs(lines[0]["dir"][0]) < 0.5
    return TextBlock(box, text, sizes.most_common(1)[0][0], bold / max(1, total), len(lines), vertical)


def page_blocks(page: pymupdf.Page) -> list[TextBlock]:
    """PyMuPDF's blocks, split where the style changes (a bold heading line glued to its paragraph)."""
    data = page.get_text("dict", flags=pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_IMAGES)
    blocks: list[TextBlock] = []
    for raw in data["blocks"]:
        if raw.get("type", 0) != 0:
            continue
        run: list[dict] = []
        prev_style: tuple[float, bool] | None = None
        for line in raw["lines"]:
            if not "".join(s["text"] for s in line["spans"]).strip():
                continue
            style = _line_style(line)
            changed = prev_style is not None and (abs(style[0] - prev_style[0]) >= 1 or style[1] != prev_style[1])
            # A run-in heading ("Model. We train...") shares its row with the text: keep them together.
            if run and changed and not _same_row(run[-1], line):
                if (block := _make_block(run)) is not None:
                    blocks.append(block)
                run = []
            run.append(line)
            prev_style = style
        if run and (block := _make_block(run)) is not None:
            blocks.append(block)
    return blocks


def _same_row(a: dict, b: dict) -> bool:
    overlap = min(a["bbox"][3], b["bbox"][3]) - max(a["bbox"][1], b["bbox"][1])
    return overlap > 0.5 * min(a["bbox"][3] - a["bbox"][1], b["bbox"][3] - b["bbox"][1])


def body_size(pages_blocks: list[list[TextBlock]]) -> float:
    """The font size of most of the document's characters: headings are measured against it."""
    sizes: Counter = Counter()
    for blocks in pages_blocks:
        for b in blocks:
            sizes[b.size] += len(b.text)
    return sizes.most_common(1)[0][0] if sizes else 10.0


def is_heading(block: TextBlock, body: float) -> bool:
    words = block.text.split()
    if not words or len(words) > 15 or block.lines > 3 or block.vertical or CAPTION.match(block.text):
        return False
    if not any(c.isalpha() for c in block.text) or block.text.endswith((",", ";")):
        return False
    # Sentences that end in a full stop are body text, except numbered headings like "2. Method".
    if block.text.endswith(".") and len(words) > 4:
        return False
    if block.size >= body * 1.12 or (block.bold >= 0.8 and block.size >= body * 0.9):
        return True
    return _numbered_heading(block.text, words) and block.lines == 1


def _numbered_heading(text: str, words: list[str]) -> bool:
    """IEEE-style headings are set in the body size: "III. METHOD", "A. Two-Pass Spatial Cost Aggregation"."""
    if not NUMBERED_HEADING.match(text) or len(words) > 10 or text.endswith((".", ",", ";", ":")):
        return False
    rest = [w for w in words[1:] if w[:1].isalpha()]
    if not rest:
        return False
    capitalised = sum(w[0].isupper() for w in rest) / len(rest)
    return text.isupper() or capitalised >= 0.6


def furniture_type(block: TextBlock, page_height: float) -> str:
    """"page_number", "header", "footer" or "aside_text" for page furniture, "" for content."""
    if block.vertical:
        return "aside_text"
    top, bottom = block.box[3] <= page_height * 0.06, block.box[1] >= page_height * 0.93
    if not (top or bottom) or len(block.text) > 200:
        return ""
    if PAGE_NUMBER.match(block.text.strip()):
        return "page_number"
    return "header" if top else "footer"
