"""Page pictures for display (the caller caches them)."""
from __future__ import annotations

from pathlib import Path

import pymupdf


class RenderError(ValueError):
    """A page that cannot be drawn: the PDF does not open, or it has no such page."""


def render_page_image(pdf_path: Path, page_idx: int, out_path: Path, dpi: int = 110) -> Path:
    try:
        doc = pymupdf.open(pdf_path)
    except Exception as exc:
        raise RenderError(f"cannot open {Path(pdf_path).name} to draw page {page_idx + 1}: {exc}") from None
    with doc:
        if not 0 <= page_idx < doc.page_count:
            raise RenderError(f"page {page_idx + 1} does not exist: the PDF has {doc.page_count} pages")
        out_path = Path(out_path)
        out_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = out_path.with_name(out_path.name + ".tmp")
        doc[page_idx].get_pixmap(dpi=dpi, alpha=False).save(str(tmp), output="png")
        tmp.replace(out_path)  # a reader never sees half a PNG
    return out_path
