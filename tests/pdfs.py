"""Small, deterministic test PDFs made with PyMuPDF, shared by every test suite.

Function names are a stable interface: other suites import them. Everything is generated (no fixtures on disk)
so tests never depend on /work/shared. The sentences in DEFAULT_SECTIONS are distinctive on purpose, so a test
can search for them after parsing, chunking or retrieval.
"""
from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pymupdf

PAGE_W, PAGE_H = 612.0, 792.0  # US letter, points
MARGIN = 54.0
GUTTER = 18.0
BODY_FONT, BOLD_FONT = "Times-Roman", "Times-Bold"
BODY_SIZE, HEADING_SIZE, TITLE_SIZE = 10.0, 12.0, 18.0
LINE_GAP = 1.25

DEFAULT_TITLE = "Quantum Lattice Solvers for Zebrafish Migration Graphs"
DEFAULT_AUTHORS = "Ada Lovelace and Alan Turing, Institute of Imaginary Studies"
TABLE_CAPTION = "Table 1: Accuracy of the three lattice solvers on the Okapi benchmark."
FIGURE_CAPTION = "Figure 1: Convergence of the heliotrope solver over seventeen iterations."
TABLE_ROWS = [
    ["Solver", "Accuracy", "Runtime (s)"],
    ["Heliotrope", "91.4", "12.7"],
    ["Marigold", "88.2", "9.3"],
    ["Saffron", "79.5", "4.1"],
]

Section = tuple[str, list[str]]

DEFAULT_SECTIONS: list[Section] = [
    ("Abstract", [
        "We present the heliotrope solver, a quantum lattice method that maps zebrafish migration onto sparse "
        "graphs. The heliotrope solver converges after seventeen iterations on every benchmark we tried.",
    ]),
    ("1 Introduction", [
        "Migration graphs of zebrafish larvae are notoriously hard to sample because each larva wanders "
        "through a tangle of currents. Earlier work relied on marigold sampling, which stalls on dense graphs.",
        "Our main finding is that the okapi benchmark rewards solvers that respect lattice symmetry. "
        "The purple walrus hypothesis predicts exactly this behaviour for coherent lattices.",
    ]),
    ("2 Method", [
        "The heliotrope solver alternates between a lattice relaxation step and a migration projection step. "
        "Each relaxation step costs time linear in the number of graph edges.",
        "We initialise the lattice from a saffron prior, which keeps the early iterations stable even when "
        "the migration graph contains isolated components.",
    ]),
    ("3 Experiments", [
        "We evaluate the three solvers on the Okapi benchmark of forty migration graphs. Table 1 reports "
        "accuracy and runtime, and Figure 1 shows how quickly the heliotrope solver converges.",
        "The marigold baseline reaches 88.2 percent accuracy but needs twice as many iterations as the "
        "heliotrope solver on the largest graphs of the benchmark.",
    ]),
    ("4 Conclusion", [
        "Lattice symmetry is the key ingredient for fast migration graph solvers. Future work will test the "
        "heliotrope solver on axolotl regeneration graphs, which are larger and far noisier.",
    ]),
]


def appendix_section(n: int) -> Section:
    """Filler for papers with more pages than sections; each sentence names its appendix number."""
    return (f"Appendix {n}", [
        f"Appendix {n} lists the hyperparameters of the heliotrope solver for run number {n}. "
        f"The lattice width for run {n} was {16 * n} cells and the learning rate was {n}e-3.",
        f"Run {n} used the okapi benchmark split number {n} and finished without divergence.",
    ])


def references_section(entries: Sequence[str]) -> Section:
    """A "References" section, one paragraph per entry ("[1] …" numbered, or author-year): what the reference
    parser reads (tests/references_papers.py)."""
    return ("References", list(entries))


def _wrap(text: str, width: float, font: str = BODY_FONT, size: float = BODY_SIZE) -> list[str]:
    lines: list[str] = []
    line = ""
    for word in text.split():
        trial = f"{line} {word}".strip()
        if line and pymupdf.get_text_length(trial, fontname=font, fontsize=size) > width:
            lines.append(line)
            line = word
        else:
            line = trial
    if line:
        lines.append(line)
    return lines


def _figure_png(width: int = 360, height: int = 160) -> bytes:
    """A bar-chart-like raster with no text in it, so OCR and captions do not get confused."""
    samples = bytearray(b"\xff" * (width * height * 3))
    bars = [0.35, 0.55, 0.7, 0.8, 0.87, 0.92, 0.95]
    bar_w = width // (len(bars) * 2)
    for i, frac in enumerate(bars):
        x0 = bar_w // 2 + i * 2 * bar_w
        top = int(height * (1 - frac))
        for y in range(top, height - 4):
            row = y * width * 3
            for x in range(x0, x0 + bar_w):
                samples[row + 3 * x: row + 3 * x + 3] = bytes((40 + 20 * i, 90, 200 - 20 * i))
    for x in range(width):  # axis
        samples[(height - 3) * width * 3 + 3 * x: (height - 3) * width * 3 + 3 * x + 3] = b"\x00\x00\x00"
    return pymupdf.Pixmap(pymupdf.csRGB, width, height, bytes(samples), False).tobytes("png")


class _Flow:
    """Places lines into one or two columns, page after page. Columns are balanced as LaTeX does on a
    paper's last page, so a short group of sections still fills both columns (reading-order tests need that)."""

    def __init__(self, doc: pymupdf.Document, two_columns: bool):
        self.doc, self.two_columns = doc, two_columns
        inner = PAGE_W - 2 * MARGIN
        self.col_w = (inner - GUTTER) / 2 if two_columns else inner
        self.page: pymupdf.Page | None = None
        self.top = MARGIN
        self.pending: list[tuple[str, str, float, float]] = []  # text, font, size, space after

    def new_page(self) -> pymupdf.Page:
        self.page = self.doc.new_page(width=PAGE_W, height=PAGE_H)
        self.top = MARGIN
        _footer(self.page, self.doc.page_count)
        return self.page

    def reserve(self, height: float) -> None:
        """Start the columns below a full-width band (title, figure, table) drawn by the caller."""
        self.top = MARGIN + height

    def paragraph(self, text: str, font: str = BODY_FONT, size: float = BODY_SIZE, gap: float = 6) -> None:
        lines = _wrap(text, self.col_w, font, size)
        for i, line in enumerate(lines):
            self.pending.append((line, font, size, gap if i == len(lines) - 1 else 0.0))

    def flush(self) -> None:
        """Draw the pending lines: fill column one to half their height (or the page bottom), then column two."""
        bottom = PAGE_H - MARGIN - 20
        while self.pending:
            assert self.page is not None
            total = sum(s * LINE_GAP + g for _, _, s, g in self.pending)
            limit = min(bottom, self.top + total / 2 + BODY_SIZE) if self.two_columns else bottom
            for col in (0, 1) if self.two_columns else (0,):
                x, y = MARGIN + col * (self.col_w + GUTTER), self.top
                col_limit = limit if col == 0 else bottom
                while self.pending and y + self.pending[0][2] * LINE_GAP <= col_limit:
                    line, font, size, gap = self.pending.pop(0)
                    self.page.insert_text((x, y + size), line, fontname=font, fontsize=size)
                    y += size * LINE_GAP + gap
            if self.pending:
                self.new_page()


def _footer(page: pymupdf.Page, number: int) -> None:
    text = str(number)
    w = pymupdf.get_text_length(text, fontname=BODY_FONT, fontsize=9)
    page.insert_text(((PAGE_W - w) / 2, PAGE_H - 30), text, fontname=BODY_FONT, fontsize=9)


def _centered(page: pymupdf.Page, y: float, text: str, font: str, size: float) -> float:
    for line in _wrap(text, PAGE_W - 2 * MARGIN, font, size):
        w = pymupdf.get_text_length(line, fontname=font, fontsize=size)
        page.insert_text(((PAGE_W - w) / 2, y + size), line, fontname=font, fontsize=size)
        y += size * LINE_GAP
    return y


def _draw_figure(page: pymupdf.Page, y: float) -> float:
    rect = pymupdf.Rect(PAGE_W / 2 - 180, y, PAGE_W / 2 + 180, y + 160)
    page.insert_image(rect, stream=_figure_png())
    return _centered(page, rect.y1 + 6, FIGURE_CAPTION, BODY_FONT, 9) + 10


def _draw_table(page: pymupdf.Page, y: float) -> float:
    y = _centered(page, y, TABLE_CAPTION, BODY_FONT, 9) + 4
    col_w, row_h = 110.0, 16.0
    x0 = (PAGE_W - col_w * len(TABLE_ROWS[0])) / 2
    for r, row in enumerate(TABLE_ROWS):
        for c, cell in enumerate(row):
            font = BOLD_FONT if r == 0 else BODY_FONT
            page.insert_text((x0 + c * col_w + 6, y + r * row_h + 12), cell, fontname=font, fontsize=9)
    x1, y1 = x0 + col_w * len(TABLE_ROWS[0]), y + row_h * len(TABLE_ROWS)
    for r in range(len(TABLE_ROWS) + 1):
        page.draw_line((x0, y + r * row_h), (x1, y + r * row_h), width=0.6)
    for c in range(len(TABLE_ROWS[0]) + 1):
        page.draw_line((x0 + c * col_w, y), (x0 + c * col_w, y1), width=0.6)
    return y1 + 14


def make_paper_pdf(path: Path, *, title: str = DEFAULT_TITLE, sections: Sequence[Section] | None = None,
                   two_columns: bool = True, with_table: bool = True, with_figure: bool = True,
                   pages: int = 2, authors: str = DEFAULT_AUTHORS) -> Path:
    """A small paper: bold title, authors, numbered bold section headings, body text in two columns, a ruled
    table under a "Table 1: ..." caption and a raster figure over a "Figure 1: ..." caption, page numbers.

    Sections are split into `pages` consecutive groups and each group starts a new page, so the PDF has at
    least `pages` pages (more only if a group overflows). The figure is on the first page, the table on the last.
    """
    sections = list(DEFAULT_SECTIONS if sections is None else sections)
    pages = max(1, pages)
    sections += [appendix_section(n) for n in range(1, pages - len(sections) + 1)]
    doc = pymupdf.open()
    flow = _Flow(doc, two_columns)
    groups = [sections[i * len(sections) // pages:(i + 1) * len(sections) // pages] for i in range(pages)]
    for p, group in enumerate(groups):
        page = flow.new_page()
        y = MARGIN
        if p == 0:
            y = _centered(page, y, title, BOLD_FONT, TITLE_SIZE) + 4
            y = _centered(page, y, authors, BODY_FONT, 10) + 12
            if with_figure:
                y = _draw_figure(page, y)
        if p == pages - 1 and with_table:
            y = _draw_table(page, y)
        flow.reserve(y - MARGIN)
        for heading, paragraphs in group:
            flow.paragraph(heading, BOLD_FONT, HEADING_SIZE, gap=3)
            for para in paragraphs:
                flow.paragraph(para)
        flow.flush()
    return _save(doc, path)


def make_text_pdf(path: Path, pages: int = 1, text_per_page: str | Sequence[str] = "Page {page} of plain text.",
                  fontsize: float = 11) -> Path:
    """Plain single-column text. `text_per_page` is one string (may contain "{page}", 1-based) or one per page."""
    doc = pymupdf.open()
    for i in range(pages):
        text = text_per_page[i] if not isinstance(text_per_page, str) else text_per_page.format(page=i + 1)
        page = doc.new_page(width=PAGE_W, height=PAGE_H)
        rect = pymupdf.Rect(MARGIN, MARGIN, PAGE_W - MARGIN, PAGE_H - MARGIN)
        page.insert_textbox(rect, text, fontname=BODY_FONT, fontsize=fontsize)
    return _save(doc, path)


def _text_image(text: str, dpi: int, fontsize: float) -> bytes:
    scratch = pymupdf.open()
    page = scratch.new_page(width=PAGE_W, height=PAGE_H)
    page.insert_textbox(pymupdf.Rect(MARGIN, MARGIN, PAGE_W - MARGIN, PAGE_H - MARGIN), text,
                        fontname="Helvetica", fontsize=fontsize)
    png = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY).tobytes("png")
    scratch.close()
    return png


def make_scanned_pdf(path: Path, text: str | Sequence[str], *, dpi: int = 200, fontsize: float = 14) -> Path:
    """Pages that hold only a picture of the text (no text layer), like a scan. One page per string."""
    texts = [text] if isinstance(text, str) else list(text)
    doc = pymupdf.open()
    for t in texts:
        page = doc.new_page(width=PAGE_W, height=PAGE_H)
        page.insert_image(page.rect, stream=_text_image(t, dpi, fontsize))
    return _save(doc, path)


def make_scanned_copy(src: Path, path: Path, *, dpi: int = 200) -> Path:
    """A "scan" of any PDF: each page replaced by a grey picture of itself, with no text layer."""
    doc = pymupdf.open()
    with pymupdf.open(src) as original:
        for page in original:
            png = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY).tobytes("png")
            doc.new_page(width=page.rect.width, height=page.rect.height).insert_image(page.rect, stream=png)
    return _save(doc, path)


# Every letter shown as its predecessor ("the" -> "sgd"), as in a real paper whose font encoding is broken.
_SHIFTED = str.maketrans("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
                         "zabcdefghijklmnopqrstuvwxyZABCDEFGHIJKLMNOPQRSTUVWXY")


def make_gibberish_pdf(path: Path, text: str, *, dpi: int = 200, fontsize: float = 14) -> Path:
    """A picture of `text` under an invisible text layer of mojibake, as PDFs with a broken font encoding or a
    bad OCR layer have: text extraction returns characters, but not words. Give it a paragraph or more (a
    detector cannot judge a few words)."""
    doc = pymupdf.open()
    page = doc.new_page(width=PAGE_W, height=PAGE_H)
    page.insert_image(page.rect, stream=_text_image(text, dpi, fontsize))
    junk = text.translate(_SHIFTED)
    page.insert_textbox(pymupdf.Rect(MARGIN, MARGIN, PAGE_W - MARGIN, PAGE_H - MARGIN), junk,
                        fontname="Helvetica", fontsize=fontsize, render_mode=3)  # 3 = invisible
    return _save(doc, path)


def make_blank_pdf(path: Path, pages: int = 2) -> Path:
    """Pages with nothing on them: no text, no images."""
    doc = pymupdf.open()
    for _ in range(pages):
        doc.new_page(width=PAGE_W, height=PAGE_H)
    return _save(doc, path)


ENCRYPTED_PASSWORD = "papergraph-secret"


def make_encrypted_pdf(path: Path, *, password: str = ENCRYPTED_PASSWORD) -> Path:
    """A paper that cannot be opened without a user password (AES-256)."""
    scratch = make_text_pdf(Path(path).with_suffix(".plain.pdf"), 1, "Confidential numbers inside.")
    doc = pymupdf.open(scratch)
    doc.save(str(path), encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw=password, owner_pw=password + "-owner")
    doc.close()
    scratch.unlink()
    return Path(path)


def make_empty_file(path: Path) -> Path:
    """A zero-byte file (a failed upload)."""
    Path(path).write_bytes(b"")
    return Path(path)


def make_fake_pdf(path: Path, kind: str = "zip") -> Path:
    """A non-PDF file with a .pdf name: kind is "zip" (e.g. a renamed .docx), "html", "png" or "text"."""
    if kind == "zip":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("word/document.xml", "<w:document/>")
        data = buf.getvalue()
    elif kind == "html":
        data = b"<!DOCTYPE html><html><body>Not found</body></html>"
    elif kind == "png":
        data = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 4, 4), False).tobytes("png")
    elif kind == "text":
        data = b"Just some notes, saved with the wrong extension.\n"
    else:
        raise ValueError(f"unknown fake kind {kind!r}")
    Path(path).write_bytes(data)
    return Path(path)


def make_corrupt_pdf(path: Path) -> Path:
    """Starts like a PDF but is cut off after its header: MuPDF cannot open it."""
    Path(path).write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Cat")
    return Path(path)


def _save(doc: pymupdf.Document, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(str(path), garbage=3, deflate=True)
    doc.close()
    return path


DENSE_TEXT = ("The scatter plot below draws every one of its measurements as its own small filled square, the way "
              "plotting libraries export dense figures to PDF. ")


def make_dense_vector_pdf(path: Path, marks: int = 90000, *, pages_before: int = 0) -> Path:
    """A page of body text around a scatter plot drawn as `marks` tiny filled squares, one vector path each (like
    page 6 of ../shared/corpus/stress, 92,680 paths), after `pages_before` ordinary text pages. MinerU's flash tier
    grows without bound laying such a page out (core.pipeline.parsing.dense_pages)."""
    import random

    rng = random.Random(30)
    doc = pymupdf.open()
    for i in range(pages_before + 1):
        page = doc.new_page(width=PAGE_W, height=PAGE_H)
        top = pymupdf.Rect(MARGIN, MARGIN, PAGE_W - MARGIN, 250)
        page.insert_textbox(top, f"Page {i + 1}. " + DENSE_TEXT * 6, fontname=BODY_FONT, fontsize=BODY_SIZE)
        bottom = pymupdf.Rect(MARGIN, 560, PAGE_W - MARGIN, PAGE_H - MARGIN)
        page.insert_textbox(bottom, DENSE_TEXT * 8, fontname=BODY_FONT, fontsize=BODY_SIZE)
        if i < pages_before:
            continue
        # Raw content-stream operators (origin bottom left): one "re f" per mark, as a plotting library writes them.
        squares = "".join(f"{rng.uniform(MARGIN, PAGE_W - MARGIN - 2):.2f} {rng.uniform(240, 540):.2f} 1.5 1.5 re f\n"
                          for _ in range(marks))
        xref = doc.get_new_xref()
        doc.update_object(xref, "<<>>")
        doc.update_stream(xref, (page.read_contents() + b"\nq 0 0 0.6 rg\n" + squares.encode() + b"Q\n"))
        page.set_contents(xref)
    return _save(doc, path)
