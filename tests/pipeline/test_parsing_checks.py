"""Bad inputs are refused before any backend runs, each with a message that says what is wrong."""
import re

import pytest

from core.content.render import RenderError, render_page_image
from core.pipeline.parsing import ParseError, check_pdf, parse_pdf
from core.settings.config import ParsingConfig
from tests import pdfs

BUILTIN = ParsingConfig(backend="builtin")


def _refused(path, config, tmp_path) -> str:
    """The message, which check_pdf and parse_pdf must agree on; parse_pdf must leave no output behind."""
    with pytest.raises(ParseError) as checked:
        check_pdf(path, config)
    out = tmp_path / "out"
    with pytest.raises(ParseError) as parsed:
        parse_pdf(path, out, config, mineru_home=tmp_path / "mineru")
    assert str(parsed.value) == str(checked.value)
    assert not (out / "content_list.json").exists()
    return str(checked.value)


def test_empty_file(tmp_path):
    assert _refused(pdfs.make_empty_file(tmp_path / "empty.pdf"), BUILTIN, tmp_path) == "the file is empty (0 bytes)"


@pytest.mark.parametrize("kind, message", [
    ("zip", r"not a PDF: the file starts with 'PK\x03\x04' (looks like a Word document (.docx))"),
    ("png", r"not a PDF: the file starts with '\x89PNG' (looks like a PNG image)"),
    ("html", "not a PDF: the file starts with '<!DO' (looks like an HTML page, e.g. a download error page)"),
    ("text", "not a PDF: the file starts with 'Just' (looks like a plain text file)"),
])
def test_renamed_non_pdf(tmp_path, kind, message):
    assert _refused(pdfs.make_fake_pdf(tmp_path / f"{kind}.pdf", kind), BUILTIN, tmp_path) == message


def test_encrypted(tmp_path):
    message = _refused(pdfs.make_encrypted_pdf(tmp_path / "locked.pdf"), BUILTIN, tmp_path)
    assert message == "the PDF is password-protected; remove the password and upload it again"


def test_truncated(tmp_path):
    message = _refused(pdfs.make_corrupt_pdf(tmp_path / "cut.pdf"), BUILTIN, tmp_path)
    assert message.startswith("the PDF is damaged and cannot be opened: ")
    assert str(tmp_path) not in message  # server paths mean nothing to the user


def test_too_many_pages(tmp_path):
    pdf = pdfs.make_paper_pdf(tmp_path / "paper.pdf", pages=3)
    message = _refused(pdf, ParsingConfig(backend="builtin", max_pages=2), tmp_path)
    assert message == "the PDF has 3 pages, more than the limit of 2 pages (max pages in the parsing settings)"
    assert check_pdf(pdf, ParsingConfig(max_pages=3)) == 3


def test_too_big(tmp_path):
    pdf = pdfs.make_text_pdf(tmp_path / "big.pdf", 1)
    with pdf.open("ab") as fh:  # MuPDF ignores bytes after %%EOF, so this is still a valid PDF
        fh.write(b"%" + b"0" * (1024 * 1024 + 10) + b"\n")
    message = _refused(pdf, ParsingConfig(backend="builtin", max_file_mb=1), tmp_path)
    assert re.fullmatch(r"the file is 1\.\d MB, more than the 1 MB limit \(max file size in the parsing settings\)",
                        message)


def test_missing_file(tmp_path):
    with pytest.raises(ParseError, match="the file gone.pdf does not exist"):
        check_pdf(tmp_path / "gone.pdf", BUILTIN)


def test_blank_pdf_is_never_a_silently_empty_document(tmp_path):
    pdf = pdfs.make_blank_pdf(tmp_path / "blank.pdf", pages=2)
    assert check_pdf(pdf, BUILTIN) == 2
    with pytest.raises(ParseError, match="^no text found on any of the 2 pages: they are blank$"):
        parse_pdf(pdf, tmp_path / "out", BUILTIN, mineru_home=tmp_path / "mineru")


def test_render_page_image(tmp_path):
    pdf = pdfs.make_paper_pdf(tmp_path / "paper.pdf")
    png = render_page_image(pdf, 1, tmp_path / "cache" / "p1.png", dpi=50)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(RenderError, match="page 3 does not exist: the PDF has 2 pages"):
        render_page_image(pdf, 2, tmp_path / "p3.png")
