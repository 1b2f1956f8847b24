"""Every PDF of ../shared/corpus/layouts gives items or a specific ParseError: never a crash, never empty.

The corpus is real material that is not part of the repository; without it these tests skip. To keep the suite
fast, files with more than MAX_OCR_PAGES pages to OCR are parsed with OCR off (their expected outcome is then a
specific error or a warning); `python bench/parsing.py` runs the whole corpus with OCR on.
"""

import pytest

from core.content.content_list import load_content_list
from core.pipeline.parsing import ParseError, parse_pdf
from core.pipeline.parsing.ocr_pass import diagnose
from core.pipeline.parsing.result import has_text
from core.settings.config import ParsingConfig
from tests.paths import CORPUS

LAYOUTS = CORPUS / "layouts"
PDFS = sorted(LAYOUTS.glob("*.pdf")) if LAYOUTS.is_dir() else []
MAX_OCR_PAGES = 2
pytestmark = [pytest.mark.corpus, pytest.mark.slow]


@pytest.mark.parametrize("pdf", PDFS or [None], ids=[p.stem for p in PDFS] or ["corpus-absent"])
def test_layout_pdf_gives_items_or_a_specific_error(pdf, tmp_path):
    if pdf is None:
        pytest.skip(f"{LAYOUTS} is absent")
    ocr_pages = sum(d.needs_ocr for d in diagnose(pdf))
    config = ParsingConfig(ocr=ocr_pages <= MAX_OCR_PAGES)
    out = tmp_path / "out"
    try:
        output = parse_pdf(pdf, out, config, mineru_home=tmp_path / "home")
    except ParseError as exc:
        message = str(exc)
        assert message and "Traceback" not in message and "\n" not in message
        assert message.startswith(("no text found on", "mineru failed"))
        if not config.ocr:
            assert "OCR is off" in message
        return
    assert output.backend.startswith("mineru-flash")  # mineru handles every file of this corpus
    assert any(has_text(i) for i in output.items)
    assert output.markdown.strip()
    for item in output.items:
        assert 0 <= item.page_idx < output.pages
        assert item.bbox is None or all(0 <= v <= 1000 for v in item.bbox)
        if item.img_path:
            assert (out / item.img_path).is_file()
    assert len(load_content_list(out / "content_list.json")) == len(output.items)
    if ocr_pages:
        assert output.backend.endswith("+ocr") and any("OCR'd" in w for w in output.warnings)
