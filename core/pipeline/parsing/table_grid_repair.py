"""A table's grid rebuilt from the PDF's own text layer, used where MinerU's table HTML is damaged.

The flash tier has no table model: on tables without ruling lines it merges header cells ("MAP nDCG" in one cell),
merges a row's numbers into one cell ("0.965 0.969"), or loses header rows. A born-digital PDF still carries every
word with its position, so the grid can be read again:

- the words inside the table's box (widened a little sideways only — MinerU's boxes clip a row's outer words, and
  widening down takes in the next caption; a "Table N:" caption line and what lies beyond it left out)
  are put into lines by their vertical centre, and a line's words into phrases where the gap between them is no
  wider than a space;
- the columns are the x-extents of the phrases of the numeric lines (two numbers or more) merged where they
  overlap: the numbers of one column overlap each other and not the next column's; a line of one phrase (a group
  row) does not take part, so it cannot bridge two columns;
- the lines above the first numeric line are the header: a header phrase over several columns (a booktabs group
  header, "Citation prediction" over four) gets a colspan; the body's phrases go to the column they overlap most;
- bold words (PyMuPDF's span flags) are written inside <b>, so the paper's "best" marks survive.

The rebuilt table replaces MinerU's only when a measurable test says MinerU's is damaged (`damage`): a cell of
several numbers where the rebuilt one has none, a header cell holding two of the rebuilt header's cells, fewer
columns, or words of the table MinerU's HTML lost. A page without a text layer (a scan) gives no words and is left
alone. MinerU's HTML is kept in the item's `extra` (MINERU_TABLE_KEY) for provenance.
"""
from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass, field

import pymupdf

from core.schema.records import ContentItem
from core.text.tables import table_grid

MINERU_TABLE_KEY = "papergraph_mineru_table"  # MinerU's own HTML of a table whose grid was rebuilt
MARGIN = 6  # 0-1000 units the table's box is widened by, sideways: MinerU's boxes clip the outer words
PHRASE_GAP = 0.45  # of a word's height: a wider gap between two words of a line separates cells
LINE_SHARE = 0.5  # of a word's height: words whose centres lie closer are on one line
MIN_NUMERIC_LINES = 2
MAX_COLUMNS = 40
LOST_WORDS = 0.1  # share of the text layer's words missing from MinerU's HTML past which its table lost content
_NUMBER = re.compile(r"^[(\[]?[-+−–]?(?:\d+(?:[.,]\d+)*|\.\d+)%?[)\]]?[*†‡§¶∗⋆]*$")
_CAPTION = re.compile(r"^(?:Table|Tab\.|TABLE)\s*[0-9IVX]+[.:]?", re.I)
_PROSE = re.compile(r"^[A-Za-z][\w,;:'’()-]*(?: [\w,;:'’()-]+){3,}\.$")  # "the model improves over single tasks."
_BOLD = 16  # PyMuPDF's span flag for a bold font


@dataclass
class _Word:
    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    bold: bool = False

    @property
    def cy(self) -> float:
        return (self.y0 + self.y1) / 2


@dataclass
class _Phrase:
    words: list[_Word]

    @property
    def x0(self) -> float:
        return min(w.x0 for w in self.words)

    @property
    def x1(self) -> float:
        return max(w.x1 for w in self.words)

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)

    def markup(self) -> str:
        """The phrase as HTML, bold words inside <b> (a run of bold words in one)."""
        out, run = [], []
        for w in self.words + [_Word(0, 0, 0, 0, "", False)]:
            if w.bold and w.text:
                run.append(html.escape(w.text))
                continue
            if run:
                out.append("<b>" + " ".join(run) + "</b>")
                run = []
            if w.text:
                out.append(html.escape(w.text))
        return " ".join(out)


@dataclass
class RebuiltTable:
    header: list[list[tuple[str, int]]] = field(default_factory=list)  # per row: (cell HTML, colspan)
    body: list[list[str]] = field(default_factory=list)  # cell HTML, one per column
    columns: int = 0
    words: list[str] = field(default_factory=list)  # every word the grid holds

    def html(self) -> str:
        rows = ["<tr>" + "".join(f"<th colspan=\"{span}\">{text}</th>" if span > 1 else f"<th>{text}</th>"
                                 for text, span in row) + "</tr>" for row in self.header]
        rows += ["<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in self.body]
        return "<table>" + "".join(rows) + "</table>"


def is_number(text: str) -> bool:
    return bool(_NUMBER.match(text.replace(" ", "")))


def table_words(page: pymupdf.Page, box: list[float], margin: float = MARGIN) -> list[_Word]:
    """The words of the text layer inside the table's box (0-1000 units) widened sideways by `margin`, in points,
    with whether each is bold; [] on a page without a text layer. Not widened down or up: below a table's box
    there is often the next caption, whose garbled text layer ("T bl 6 C l l t") would read as lost words."""
    width, height = page.rect.width, page.rect.height
    clip = pymupdf.Rect((box[0] - margin) * width / 1000, box[1] * height / 1000,
                        (box[2] + margin) * width / 1000, box[3] * height / 1000)
    bold_boxes = [pymupdf.Rect(span["bbox"]) for block in page.get_text("dict", clip=clip)["blocks"]
                  for line in block.get("lines", []) for span in line["spans"]
                  if span["flags"] & _BOLD and span["text"].strip()]
    out = []
    for x0, y0, x1, y1, text, *_ in page.get_text("words", clip=clip):
        centre = pymupdf.Point((x0 + x1) / 2, (y0 + y1) / 2)
        out.append(_Word(x0, y0, x1, y1, text, any(b.contains(centre) for b in bold_boxes)))
    return out


def table_rules(page: pymupdf.Page, box: list[float], margin: float = MARGIN) -> list[tuple[float, float, float]]:
    """The short horizontal rules inside the table's box, (x0, x1, y) in points: booktabs' \\cmidrule under a group
    header, which says which columns the header spans. Rules across the whole table (top, mid, bottom) are left out."""
    width, height = page.rect.width, page.rect.height
    x0, y0 = (box[0] - margin) * width / 1000, (box[1] - margin) * height / 1000
    x1, y1 = (box[2] + margin) * width / 1000, (box[3] + margin) * height / 1000
    out = []
    for drawing in page.get_drawings():
        r = drawing["rect"]
        if r.height <= 1.5 and r.width >= 8 and x0 <= r.x0 and r.x1 <= x1 and y0 <= r.y0 <= y1:
            out.append((r.x0, r.x1, (r.y0 + r.y1) / 2))
    widest = max((b - a for a, b, _ in out), default=0)
    return [rule for rule in out if rule[1] - rule[0] < 0.9 * widest]


def _lines(words: list[_Word]) -> list[list[_Word]]:
    """Words grouped into lines by their vertical centre, top to bottom, each line left to right."""
    if not words:
        return []
    heights = sorted(w.y1 - w.y0 for w in words)
    tolerance = LINE_SHARE * heights[len(heights) // 2]
    lines: list[list[_Word]] = []
    for word in sorted(words, key=lambda w: w.cy):
        if lines and abs(word.cy - sum(w.cy for w in lines[-1]) / len(lines[-1])) <= tolerance:
            lines[-1].append(word)
        else:
            lines.append([word])
    return [sorted(line, key=lambda w: w.x0) for line in lines]


def _phrases(line: list[_Word], gap: float) -> list[_Phrase]:
    out: list[_Phrase] = []
    for word in line:
        if out and word.x0 - out[-1].x1 <= gap:
            out[-1].words.append(word)
        else:
            out.append(_Phrase([word]))
    return out


def _numeric(phrases: list[_Phrase]) -> bool:
    return sum(is_number(p.text) for p in phrases) >= 2


def _without_caption(lines: list[list[_Word]]) -> list[list[_Word]]:
    """The lines without a "Table N:" caption line and the lines beyond it (above it when it is in the top half,
    below it when in the bottom half), nor a sentence at the top (the end of a caption set above the table)."""
    for i, line in enumerate(lines):
        if _CAPTION.match(" ".join(w.text for w in line)):
            lines = lines[i + 1:] if i < len(lines) / 2 else lines[:i]
            break
    while lines and _PROSE.match(" ".join(w.text for w in lines[0])):  # a caption's last line, above the table
        lines = lines[1:]
    return lines


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return min(a1, b1) - max(a0, b0)


def rebuild(words: list[_Word], rules: list[tuple[float, float, float]] = ()) -> RebuiltTable | None:
    """The table's grid from its words, or None when they do not make one (fewer than two numeric lines, or
    a numeric line with two numbers in one column)."""
    lines = _without_caption(_lines(words))
    if not lines:
        return None
    heights = sorted(w.y1 - w.y0 for line in lines for w in line)
    gap = PHRASE_GAP * heights[len(heights) // 2]
    phrased = [_phrases(line, gap) for line in lines]
    numeric = [i for i, p in enumerate(phrased) if _numeric(p)]
    if len(numeric) < MIN_NUMERIC_LINES:
        return None
    spans = sorted((p.x0, p.x1) for i in numeric for p in phrased[i])
    columns: list[list[float]] = []
    for x0, x1 in spans:
        if columns and x0 < columns[-1][1]:
            columns[-1][1] = max(columns[-1][1], x1)
        else:
            columns.append([x0, x1])
    if not 2 <= len(columns) <= MAX_COLUMNS:
        return None

    def column_of(p: _Phrase) -> int:
        best = max(range(len(columns)), key=lambda c: _overlap(p.x0, p.x1, *columns[c]))
        if _overlap(p.x0, p.x1, *columns[best]) > 0:
            return best
        centre = (p.x0 + p.x1) / 2
        return min(range(len(columns)), key=lambda c: abs((columns[c][0] + columns[c][1]) / 2 - centre))

    def header_span(p: _Phrase, line: list[_Word], last: bool) -> tuple[int, int]:
        """The columns a header phrase spans: those of a rule just under it (a \\cmidrule), else those it
        overlaps; a phrase of an upper header row in the gap between two columns spans both."""
        bottom = max(w.y1 for w in line)
        centre = (p.x0 + p.x1) / 2
        for rx0, rx1, ry in rules:
            if rx0 <= centre <= rx1 and bottom - 2 <= ry <= bottom + gap * 4:
                p = _Phrase([_Word(rx0 + 1, 0, rx1 - 1, 0, "")])
                break
        covered = [c for c in range(len(columns)) if _overlap(p.x0, p.x1, *columns[c]) > 1]
        if covered:
            return covered[0], covered[-1]
        left = [c for c in range(len(columns)) if columns[c][1] <= p.x0 + 1]
        right = [c for c in range(len(columns)) if columns[c][0] >= p.x1 - 1]
        if not last and left and right:
            return left[-1], right[0]
        return (column_of(p),) * 2

    table = RebuiltTable(columns=len(columns))
    first = numeric[0]
    for n, phrases in enumerate(phrased[:first]):
        cells: list[tuple[int, int, list[str]]] = []  # (first column, last column, phrase HTML)
        for p in phrases:
            lo, hi = header_span(p, lines[n], n == first - 1)
            if cells and lo <= cells[-1][1]:  # spans into the cell before: it keeps its columns
                lo = cells[-1][1] + 1
            if lo > hi:  # over the cell before only: one cell
                cells[-1] = (cells[-1][0], cells[-1][1], cells[-1][2] + [p.markup()])
            else:
                cells.append((lo, hi, [p.markup()]))
        row, at = [], 0
        for lo, hi, texts in cells:
            row += [("", 1)] * (lo - at) + [(" ".join(texts), hi - lo + 1)]
            at = hi + 1
        table.header.append(row + [("", 1)] * (len(columns) - at))
    for phrases in phrased[first:]:
        row_cells: list[list[str]] = [[] for _ in columns]
        for p in phrases:
            row_cells[column_of(p)].append(p.markup())
        if any(sum(_numbers_in(_plain(t)) for t in cell) >= 2 for cell in row_cells):
            return None  # two numbers fell in one column: the columns are not what the numbers say
        table.body.append([" ".join(cell) for cell in row_cells])
    table.words = [w.text for line in lines for w in line]
    return table


_TAG = re.compile(r"<[^>]+>")


def _plain(cell: str) -> str:
    return " ".join(html.unescape(_TAG.sub(" ", cell)).split())


_SPREAD = re.compile(r"(?:±|\+/-)\s*\S+|\([^()]*\)")


def _numbers_in(cell: str) -> int:
    """Numbers in a cell, a spread ("± 0.2") and a parenthesis ("(2019)", "(+1.2)") not counted."""
    return sum(is_number(t) for t in _SPREAD.sub(" ", cell).split())


def _key(word: str) -> str:
    return re.sub(r"[^\w.]", "", word).casefold()


def damage(mineru_html: str, rebuilt: RebuiltTable, box_words: list[str] | None = None) -> str:
    """Why MinerU's table is damaged, as measured against the rebuilt grid ("" when it is not). `box_words`: the
    words inside MinerU's own box (not the widened one); only they count as lost, since MinerU cannot have lost a
    word it never claimed."""
    grid = table_grid(mineru_html)
    if not grid.rows:
        return "no grid"
    cells = [c for row in grid.rows for c in row]
    merged_numbers = sum(1 for c in set(cells) if _numbers_in(c) >= 2)
    if merged_numbers:
        return f"{merged_numbers} cells of several numbers"
    header_cells = {_plain(text) for row in rebuilt.header for text, _ in row if _plain(text)}
    for row in rebuilt.header:
        texts = [_plain(t) for t, _ in row if _plain(t)]
        pairs = {" ".join(texts[i:j]) for i in range(len(texts)) for j in range(i + 2, min(i + 4, len(texts)) + 1)}
        merged = {c for r in grid.rows[:max(grid.header_rows, 1)] for c in r if c in pairs}
        if merged - header_cells:
            return f"header cells merged ({sorted(merged)[0]!r})"
    if grid.width < rebuilt.columns:
        return f"{grid.width} columns of the text layer's {rebuilt.columns}"
    have = Counter(_key(t) for c in cells for t in c.split())
    want = Counter(k for k in map(_key, rebuilt.words) if k)
    if box_words is not None:
        want &= Counter(k for k in map(_key, box_words) if k)
    lost = sum((want - have).values())
    if lost > LOST_WORDS * sum(want.values()):
        return f"{lost} of the table's {sum(want.values())} words lost"
    return ""


@dataclass
class GridCounts:
    tables: int = 0  # tables whose grid was rebuilt
    examples: list[str] = field(default_factory=list)


def repair_table_grid(item: ContentItem, page: pymupdf.Page, counts: GridCounts) -> bool:
    """Replace a damaged MinerU table's HTML by the grid rebuilt from the page's words; True when replaced."""
    if item.type != "table" or not item.bbox or not item.table_body or MINERU_TABLE_KEY in item.extra:
        return False
    words = table_words(page, item.bbox)
    if not words:  # a scan, or a page whose text layer holds nothing here
        return False
    rebuilt = rebuild(words, table_rules(page, item.bbox))
    if rebuilt is None:
        return False
    x0, x1 = (item.bbox[0] * page.rect.width / 1000, item.bbox[2] * page.rect.width / 1000)
    reason = damage(item.table_body, rebuilt, [w.text for w in words if x0 <= (w.x0 + w.x1) / 2 <= x1])
    if not reason:
        return False
    item.extra[MINERU_TABLE_KEY] = item.table_body
    item.table_body = rebuilt.html()
    counts.tables += 1
    counts.examples.append(f"p{item.page_idx + 1} table rebuilt from the text layer: {reason}")
    return True
