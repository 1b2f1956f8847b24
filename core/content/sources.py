"""Where a document's stored source is and what format it is read as: the write side stores it there
(core/pipeline/documents.py), the read side finds it again (page images, the Markdown tab)."""
from __future__ import annotations

from pathlib import Path

# File suffix → the format it is read as; the stored source keeps the suffix (source.md, source.txt, source.html).
TEXT_SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".text": "text", ".html": "html",
                 ".htm": "html"}
_STORED_SUFFIX = {"markdown": ".md", "text": ".txt", "html": ".html"}
SOURCE_STEM = "source"


def text_format(filename: str) -> str | None:
    """'markdown', 'text', 'html', or None when the name is not a text document's."""
    return TEXT_SUFFIXES.get(Path(filename).suffix.lower())


def stored_source_name(fmt: str) -> str:
    return SOURCE_STEM + _STORED_SUFFIX[fmt]


def text_source(doc_dir: Path) -> Path | None:
    """The stored source of a text document, or None (a PDF, an import, or nothing stored)."""
    for suffix in dict.fromkeys(_STORED_SUFFIX.values()):
        path = Path(doc_dir) / (SOURCE_STEM + suffix)
        if path.is_file():
            return path
    return None
