"""PDF → MinerU content list. See `parse_pdf` and `import_mineru_output`.

Backends: mineru (in a child process, `mineru_worker`), the builtin PyMuPDF parser, RapidOCR for pages without a
usable text layer, and import of a MinerU output made elsewhere. Every one yields MinerU's content-list schema.

Names are loaded on first use: `python -m core.pipeline.parsing.mineru_worker` imports this package first, and the child
should not pay for PyMuPDF and the parser modules it never uses (nor import the worker twice).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.pipeline.parsing.checks import check_pdf  # noqa: F401
    from core.pipeline.parsing.importer import import_mineru_output  # noqa: F401
    from core.pipeline.parsing.pipeline import parse_pdf  # noqa: F401
    from core.pipeline.parsing.result import ParseError, ParseOutput  # noqa: F401

_EXPORTS = {
    "ParseError": "core.pipeline.parsing.result",
    "ParseOutput": "core.pipeline.parsing.result",
    "check_pdf": "core.pipeline.parsing.checks",
    "import_mineru_output": "core.pipeline.parsing.importer",
    "parse_pdf": "core.pipeline.parsing.pipeline",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'core.pipeline.parsing' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value
