"""Turn OCR lines into MinerU-style text items: paragraphs in reading order, tall lines as headings."""
from __future__ import annotations

import re
from statistics import median

from core.pipeline.parsing.layout import reading_order, to_1000, union
from core.pipeline.parsing.ocr import OcrLine
from core.schema.records import ContentItem

TITLE_RATIO = 1.5  # the first page's title line is at least this much taller than the typical line


# OCR boxes of a bold 12 pt heading are barely taller than 10 pt body lines, so headings are recognised by form:
# a short line that is numbered ("2 Method", "3.1 Data", "IV. Results") or a standard section name.
NUMBERED_HEADING = re.compile(r"^(\d+(\.\d+)*\.?|[IVX]+\.|[A-H]\.)\s*[A-Z]")
NAMED_HEADING = re.compile(r"^(abstract|introduction|background|related work|methods?|results|discussion|"
                           r"conclusions?|references|acknowledge?ments?|appendix)\b", re.IGNORECASE)
_CJK = re.compile(r"[\u3000-\u9fff\uac00-\ud7af\uff00-\uffef]")


def _join(lines: list[str]) -> str:
    """Join lines, undoing end-of-line hyphenation ("migra-" + "tion") and adding no space between CJK lines."""
    out = ""
    for line in lines:
        if out.endswith("-") and line[:1].islower():
            out = out[:-1] + line
        elif out and _CJK.match(out[-1]) and _CJK.match(line[0]):
            out += line
        else:
            out = f"{out} {line}" if out else line
    return out


def _is_heading_line(line: OcrLine) -> bool:
    text, words = line.text, line.text.split()
    if text.endswith((".", ",", ";")) or len(words) > 8:
        return False
    return bool(NUMBERED_HEADING.match(text)) or (len(words) <= 3 and bool(NAMED_HEADING.match(text)))


def _same_paragraph(prev: OcrLine, cur: OcrLine, line_h: float) -> bool:
    p, c = prev.box, cur.box
    gap = c[1] - p[3]
    overlap = min(p[2], c[2]) - max(p[0], c[0])
    if not (-0.5 * line_h < gap < 0.8 * line_h and overlap > 0 and abs(c[0] - p[0]) < 3 * line_h):
        return False
    # A line that stops well short of the next one ended its paragraph (or was a heading); headings stand alone.
    if p[2] < c[2] - 2 * line_h:
        return False
    return not (_is_heading_line(prev) or _is_heading_line(cur))


def _title_group(groups: list[list[int]], lines: list[OcrLine], line_h: float, height: float) -> int | None:
    """The first page's title: the tallest line near the top, clearly taller than the body."""
    def tallest(g: list[int]) -> float:
        return max(lines[i].box[3] - lines[i].box[1] for i in g)
    top = [k for k, g in enumerate(groups) if len(g) <= 3 and lines[g[0]].box[1] < 0.3 * height
           and tallest(g) >= TITLE_RATIO * line_h]
    return max(top, key=lambda k: tallest(groups[k])) if top else None


def ocr_items(lines: list[OcrLine], page_idx: int, width: float, height: float) -> list[ContentItem]:
    if not lines:
        return []
    boxes = [ln.box for ln in lines]
    line_h = median(b[3] - b[1] for b in boxes)
    groups: list[list[int]] = []
    for i in reading_order(boxes):
        if groups and _same_paragraph(lines[groups[-1][-1]], lines[i], line_h):
            groups[-1].append(i)
        else:
            groups.append([i])
    title = _title_group(groups, lines, line_h, height) if page_idx == 0 else None
    # Paragraph order: reading order again, on whole paragraphs, so a two-column scan reads column by column.
    para_boxes = [union([boxes[i] for i in g]) for g in groups]
    items = []
    for k in reading_order(para_boxes):
        group = groups[k]
        heading = len(group) == 1 and _is_heading_line(lines[group[0]])
        level = 1 if k == title else 2 if heading else 0
        items.append(ContentItem(type="text", page_idx=page_idx, text=_join([lines[i].text for i in group]),
                                 text_level=level, bbox=to_1000(para_boxes[k], width, height), source="ocr"))
    return items
