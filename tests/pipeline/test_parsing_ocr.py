"""Pages without a usable text layer are OCR'd with RapidOCR (for real), or flagged when OCR is off."""
import pymupdf
import pytest

from core.pipeline.parsing import ParseError, parse_pdf
from core.settings.config import ParsingConfig
from tests import pdfs

SCAN_TEXT = ("The purple walrus sings at dawn.\n\nSeventeen heliotrope iterations suffice for the okapi "
             "benchmark.")
PARAGRAPH = ("Migration graphs of zebrafish larvae are notoriously hard to sample because each larva wanders "
             "through a tangle of currents. Earlier work relied on marigold sampling, which stalls on dense "
             "graphs. The purple walrus hypothesis predicts exactly this behaviour.")


def _text(output) -> str:
    return " ".join(i.text for i in output.items)


def _mixed_pdf(path):
    """Page 1 has a text layer, page 2 is a scan."""
    text = pdfs.make_text_pdf(path.with_name("text.pdf"), 1, "A born-digital page about the okapi benchmark.")
    scan = pdfs.make_scanned_pdf(path.with_name("scan.pdf"), SCAN_TEXT)
    doc = pymupdf.open(text)
    doc.insert_pdf(pymupdf.open(scan))
    doc.save(path)
    return path


@pytest.mark.slow
def test_scanned_page_words_come_back(tmp_path):
    pdf = pdfs.make_scanned_pdf(tmp_path / "scan.pdf", SCAN_TEXT)
    output = parse_pdf(pdf, tmp_path / "out", ParsingConfig(backend="builtin"), mineru_home=tmp_path / "home")
    assert output.backend == "builtin+ocr"
    assert output.warnings == ["page 1: no text layer, OCR'd"]
    text = _text(output)
    for phrase in ("purple walrus sings at dawn", "Seventeen heliotrope iterations", "okapi benchmark"):
        assert phrase in text
    assert all(i.source == "ocr" and i.type == "text" for i in output.items)
    assert not any(i.type == "image" for i in output.items)  # the scan itself is not a figure
    assert all(i.bbox and 0 <= i.bbox[0] < i.bbox[2] <= 1000 for i in output.items)
    # two paragraphs on the scan, two items, top to bottom
    assert len(output.items) == 2 and output.items[0].bbox[1] < output.items[1].bbox[1]


@pytest.mark.slow
def test_gibberish_text_layer_is_replaced_by_ocr_under_mineru(tmp_path):
    pdf = pdfs.make_gibberish_pdf(tmp_path / "mojibake.pdf", PARAGRAPH)
    output = parse_pdf(pdf, tmp_path / "out", ParsingConfig(), mineru_home=tmp_path / "home")
    assert output.backend == "mineru-flash+ocr"
    assert output.warnings == ["page 1: unreadable text layer (broken font encoding), OCR'd"]
    assert "zebrafish larvae" in _text(output) and "purple walrus hypothesis" in _text(output)
    assert "sgd" not in _text(output).split()  # the shifted "the" of the broken layer is gone


def test_ocr_off_warns_about_the_pages_it_could_not_read(tmp_path):
    pdf = _mixed_pdf(tmp_path / "mixed.pdf")
    output = parse_pdf(pdf, tmp_path / "out", ParsingConfig(backend="builtin", ocr=False),
                       mineru_home=tmp_path / "home")
    assert output.backend == "builtin"
    assert output.warnings == ["page 2: no text layer; OCR is off, so its text is missing"]
    assert "okapi benchmark" in _text(output) and "walrus" not in _text(output)


def test_only_scanned_pages_and_ocr_off_is_an_error_not_an_empty_document(tmp_path):
    pdf = pdfs.make_scanned_pdf(tmp_path / "scan.pdf", [SCAN_TEXT, SCAN_TEXT])
    with pytest.raises(ParseError, match="^no text found on any of the 2 pages: no usable text layer \\(a scan\\?\\) "
                                         "and OCR is off in the parsing settings$"):
        parse_pdf(pdf, tmp_path / "out", ParsingConfig(backend="builtin", ocr=False), mineru_home=tmp_path / "home")


def test_scan_of_nothing_readable_is_an_error(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page()
    page.draw_rect(pymupdf.Rect(100, 100, 400, 400), color=(0, 0, 0), fill=(0.6, 0.6, 0.6))
    doc.save(tmp_path / "shape.pdf")
    with pytest.raises(ParseError, match="^no text found on the only page: there is no usable text layer and OCR "
                                         "found no text either$"):
        parse_pdf(tmp_path / "shape.pdf", tmp_path / "out", ParsingConfig(backend="builtin", ocr_dpi=72),
                  mineru_home=tmp_path / "home")


@pytest.mark.slow
def test_scanned_two_column_paper_reads_column_by_column_with_headings(tmp_path):
    paper = pdfs.make_paper_pdf(tmp_path / "paper.pdf", pages=1, with_table=False)
    scan = pdfs.make_scanned_copy(paper, tmp_path / "scan.pdf")
    output = parse_pdf(scan, tmp_path / "out", ParsingConfig(backend="builtin"), mineru_home=tmp_path / "home")
    assert output.backend == "builtin+ocr"
    assert [i.text for i in output.items if i.text_level == 1] == [pdfs.DEFAULT_TITLE]
    headings = [i.text for i in output.items if i.text_level == 2]
    assert "Abstract" in headings and "1 Introduction" in headings
    text = _text(output)
    order = ["We present the heliotrope", "zebrafish larvae", "lattice relaxation step", "saffron prior",
             "forty migration graphs", "axolotl regeneration"]
    positions = [text.index(s) for s in order]
    assert positions == sorted(positions)


def test_ocr_off_drops_an_unreadable_text_layer_instead_of_indexing_it(tmp_path):
    pdf = pdfs.make_gibberish_pdf(tmp_path / "mojibake.pdf", PARAGRAPH)
    with pytest.raises(ParseError, match="^no text found on the only page: no usable text layer"):
        parse_pdf(pdf, tmp_path / "out", ParsingConfig(backend="builtin", ocr=False), mineru_home=tmp_path / "home")


@pytest.mark.slow
def test_scan_with_a_text_stamp_is_still_ocrd(tmp_path):
    doc = pymupdf.open(pdfs.make_scanned_pdf(tmp_path / "scan.pdf", "The okapi archive holds seventeen walruses."))
    doc[0].insert_text((40, 780), "Downloaded from the Okapi Library on 1 May 2024 by a guest", fontsize=7)
    doc.save(tmp_path / "stamped.pdf")
    output = parse_pdf(tmp_path / "stamped.pdf", tmp_path / "out", ParsingConfig(backend="builtin"),
                       mineru_home=tmp_path / "home")
    assert output.warnings == ["page 1: scanned page with only a few words of text layer, OCR'd"]
    assert "okapi archive holds seventeen walruses" in _text(output)
