"""The builtin PyMuPDF parser gives the same schema as mineru on the same generated papers."""
import pymupdf
import pytest

from core.pipeline.parsing import parse_pdf
from core.settings.config import ParsingConfig
from tests import pdfs

BUILTIN = ParsingConfig(backend="builtin")


@pytest.fixture(scope="module")
def parsed(tmp_path_factory):
    root = tmp_path_factory.mktemp("builtin")
    pdf = pdfs.make_paper_pdf(root / "paper.pdf")
    return parse_pdf(pdf, root / "out", BUILTIN, mineru_home=root / "home"), root / "out"


def _text(output) -> str:
    return "\n".join(i.text for i in output.items)


def test_backend_and_schema(parsed):
    output, out = parsed
    assert output.backend == "builtin" and output.pages == 2 and output.warnings == []
    for item in output.items:
        assert item.source == "builtin" and 0 <= item.page_idx < 2
        assert item.bbox and all(0 <= v <= 1000 for v in item.bbox)
    assert (out / "content_list.json").exists() and (out / "parse.json").exists()


def test_headings(parsed):
    items = parsed[0].items
    assert [i.text for i in items if i.text_level == 1] == [pdfs.DEFAULT_TITLE]
    assert [i.text for i in items if i.text_level == 2] == [
        "Abstract", "1 Introduction", "2 Method", "3 Experiments", "4 Conclusion"]


def test_table_and_figure_with_captions(parsed):
    output, out = parsed
    (table,) = [i for i in output.items if i.type == "table"]
    assert table.caption == pdfs.TABLE_CAPTION
    assert "<td>Heliotrope</td><td>91.4</td><td>12.7</td>" in table.table_body
    assert "| Solver | Accuracy | Runtime (s) |" in output.markdown
    (figure,) = [i for i in output.items if i.type == "image"]
    assert figure.caption == pdfs.FIGURE_CAPTION
    assert (out / figure.img_path).read_bytes()[:2] == b"\xff\xd8"  # a JPEG crop
    captions = [i for i in output.items if i.type == "text" and i.text.startswith(("Figure 1:", "Table 1:"))]
    assert captions == []  # captions belong to their figure/table, not the text flow


def test_two_column_reading_order_and_page_numbers(parsed):
    output = parsed[0]
    text = _text(output)
    order = ["Ada Lovelace", "We present the heliotrope", "zebrafish larvae", "purple walrus hypothesis",
             "lattice relaxation step", "saffron prior", "forty migration graphs", "marigold baseline",
             "axolotl regeneration"]
    positions = [text.index(s) for s in order]
    assert positions == sorted(positions)
    numbers = [(i.page_idx, i.text) for i in output.items if i.type == "page_number"]
    assert numbers == [(0, "1"), (1, "2")]


def test_single_column_paper_without_media(tmp_path):
    pdf = pdfs.make_paper_pdf(tmp_path / "plain.pdf", two_columns=False, with_table=False, with_figure=False,
                              pages=1, title="A Single Column Note")
    output = parse_pdf(pdf, tmp_path / "out", BUILTIN, mineru_home=tmp_path / "home")
    assert [i.text for i in output.items if i.text_level == 1] == ["A Single Column Note"]
    assert not any(i.type in ("image", "table") for i in output.items)
    assert not (tmp_path / "out" / "images").exists() or not any((tmp_path / "out" / "images").iterdir())
    text = _text(output)
    assert text.index("zebrafish larvae") < text.index("saffron prior") < text.index("axolotl")


def test_hyphenated_line_ends_are_joined(tmp_path):
    pdf = pdfs.make_text_pdf(tmp_path / "hyphen.pdf", 1, "The heliotrope solver handles migra-\ntion graphs well.")
    output = parse_pdf(pdf, tmp_path / "out", BUILTIN, mineru_home=tmp_path / "home")
    assert "handles migration graphs well." in _text(output)


def test_rotated_page_boxes_are_in_display_space(tmp_path):
    doc = pymupdf.open(pdfs.make_paper_pdf(tmp_path / "paper.pdf", pages=1, with_table=False))
    doc[0].set_rotation(90)
    doc.save(tmp_path / "rotated.pdf")
    output = parse_pdf(tmp_path / "rotated.pdf", tmp_path / "out", BUILTIN, mineru_home=tmp_path / "home")
    (title,) = [i for i in output.items if i.text_level == 1]
    x0, y0, x1, y1 = title.bbox
    assert title.text == pdfs.DEFAULT_TITLE and (y1 - y0) > 5 * (x1 - x0)  # the title now runs down the page
    text = _text(output)
    assert text.index("zebrafish larvae") < text.index("purple walrus hypothesis") < text.index("axolotl")


def test_ieee_headings_and_run_in_paragraph_headings(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page()
    body = "Times-Roman"
    page.insert_text((72, 80), "Okapi Stereo Matching", fontname="Times-Bold", fontsize=20)
    page.insert_text((72, 130), "II. BACKGROUND", fontname=body, fontsize=10)
    page.insert_text((72, 150), "Stereo matching finds corresponding pixels in two views of one okapi.",
                     fontname=body, fontsize=10)
    page.insert_text((72, 175), "Model.", fontname="Times-Bold", fontsize=10)
    width = pymupdf.get_text_length("Model. ", fontname="Times-Bold", fontsize=10)
    page.insert_text((72 + width, 175), "We train the heliotrope solver on forty graphs.", fontname=body, fontsize=10)
    page.insert_text((72, 195), "A. Two-Pass Spatial Cost Aggregation", fontname="Times-Italic", fontsize=10)
    page.insert_text((72, 215), "Each pass aggregates costs along the rows of the image.", fontname=body,
                     fontsize=10)
    doc.save(tmp_path / "ieee.pdf")
    output = parse_pdf(tmp_path / "ieee.pdf", tmp_path / "out", BUILTIN, mineru_home=tmp_path / "home")
    levels = {i.text: i.text_level for i in output.items}
    assert levels["Okapi Stereo Matching"] == 1
    assert levels["II. BACKGROUND"] == 2 and levels["A. Two-Pass Spatial Cost Aggregation"] == 2
    assert levels["Model. We train the heliotrope solver on forty graphs."] == 0


def test_ocrd_sandwich_pdf_keeps_its_text_layer(tmp_path):
    """A page picture under an invisible OCR text layer (how scanners save searchable PDFs) is not a figure."""
    text = " ".join(p for _, paras in pdfs.DEFAULT_SECTIONS[:3] for p in paras)
    doc = pymupdf.open(pdfs.make_scanned_pdf(tmp_path / "scan.pdf", text, fontsize=11))
    doc[0].insert_textbox(pymupdf.Rect(54, 54, 558, 738), text, fontname="Helvetica", fontsize=11, render_mode=3)
    doc.save(tmp_path / "sandwich.pdf")
    output = parse_pdf(tmp_path / "sandwich.pdf", tmp_path / "out", BUILTIN, mineru_home=tmp_path / "home")
    assert output.backend == "builtin" and output.warnings == []
    assert not any(i.type == "image" for i in output.items)
    assert "purple walrus hypothesis" in _text(output)


def test_a_frame_drawn_around_the_page_is_not_a_figure(tmp_path):
    doc = pymupdf.open(pdfs.make_text_pdf(tmp_path / "text.pdf", 1, "The okapi archive holds seventeen walruses "
                                          "and a purple heliotrope in a frame."))
    doc[0].draw_rect(pymupdf.Rect(28, 28, 584, 764), color=(0, 0, 0), width=1)
    doc.save(tmp_path / "framed.pdf")
    output = parse_pdf(tmp_path / "framed.pdf", tmp_path / "out", BUILTIN, mineru_home=tmp_path / "home")
    assert [i.type for i in output.items] == ["text"] and "seventeen walruses" in _text(output)
