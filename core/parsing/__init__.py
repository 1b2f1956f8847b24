"""PDF → MinerU content list. See `parse_pdf` and `import_mineru_output`.

Backends: mineru (in a child process, `mineru_worker`), the builtin PyMuPDF parser, RapidOCR for pages without a
usable text layer, and import of a MinerU output made elsewhere. Every one yields MinerU's content-list schema.
"""
from core.parsing.checks import check_pdf
from core.parsing.importer import import_mineru_output
from core.parsing.pipeline import parse_pdf
from core.parsing.render import render_page_image
from core.parsing.result import ParseError, ParseOutput

__all__ = ["ParseError", "ParseOutput", "check_pdf", "import_mineru_output", "parse_pdf", "render_page_image"]
