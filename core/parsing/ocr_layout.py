"""Turn OCR lines into MinerU-style text items: paragraphs in reading order, tall lines as headings."""
from __future__ import annotations

import re
from statistics import median

from core.parsing.layout import Box, reading_order, to_1000, union
from core.parsing.ocr import OcrLine
from core.records import ContentItem

HEADING_RATIO = 1.35  # a lone line this much taller than the page's typical line reads as a heading


# OCR line heights vary with superscripts and accents, so height alone makes author lists look like headings.
SECTION_HEADING = re.compile(r"^((\d+(\.\d+)*\.?|[IVX]+\.|[A-H]\.?)\s+\S|(abstract|introduction|background|"
                             r"related work|methods?|results|discussion|conclusions?|references|acknowledge?ments?|"
                             r"appendix)\b)", re.IGNORECASE)
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


def _same_paragraph(prev: Box, cur: Box, line_h: float) -> bool:
    gap = cur[1] - prev[3]
    overlap = min(prev[2], cur[2]) - max(prev[0], cur[0])
    return -0.5 * line_h < gap < 0.8 * line_h and overlap > 0 and abs(cur[0] - prev[0]) < 3 * line_h


def ocr_items(lines: list[OcrLine], page_idx: int, width: float, height: float) -> list[ContentItem]:
    if not lines:
        return []
    boxes = [ln.box for ln in lines]
    line_h = median(b[3] - b[1] for b in boxes)
    groups: list[list[int]] = []
    for i in reading_order(boxes):
        if groups and _same_paragraph(boxes[groups[-1][-1]], boxes[i], line_h):
            groups[-1].append(i)
        else:
            groups.append([i])
    # Paragraph order: reading order again, on whole paragraphs, so a two-column scan reads column by column.
    para_boxes = [union([boxes[i] for i in g]) for g in groups]
    items = []
    for k in reading_order(para_boxes):
        group = groups[k]
        tall = len(group) == 1 and (boxes[group[0]][3] - boxes[group[0]][1]) > HEADING_RATIO * line_h
        text = _join([lines[i].text for i in group])
        heading = tall and len(text.split()) <= 12 and bool(SECTION_HEADING.match(text))
        items.append(ContentItem(type="text", page_idx=page_idx, text=text, text_level=2 if heading else 0,
                                 bbox=to_1000(para_boxes[k], width, height), source="ocr"))
    return items
