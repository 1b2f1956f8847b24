"""Parsing benchmark: run parse_pdf on every PDF of a folder and print one line per file plus totals.

Shows the backend, item counts by type, warnings or the ParseError message, CPU seconds (child processes
included) and pages per CPU-second. Usage:
    python bench/parsing.py [PDF_DIR] [--backend mineru|builtin] [--tier flash] [--no-ocr] [--ocr-dpi 150]
PDF_DIR defaults to ../shared/corpus/layouts.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core.pipeline.parsing import ParseError, parse_pdf  # noqa: E402
from core.pipeline.parsing.checks import check_pdf  # noqa: E402
from core.settings.config import ParsingConfig  # noqa: E402

DEFAULT_DIR = REPO.parent / "shared" / "corpus" / "layouts"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", type=Path, default=DEFAULT_DIR)
    ap.add_argument("--backend", default="mineru", choices=["mineru", "builtin"])
    ap.add_argument("--tier", default="flash")
    ap.add_argument("--no-ocr", action="store_true")
    ap.add_argument("--ocr-dpi", type=int, default=150)
    args = ap.parse_args()
    config = ParsingConfig(backend=args.backend, mineru_tier=args.tier, ocr=not args.no_ocr, ocr_dpi=args.ocr_dpi)
    pdfs = sorted(args.folder.glob("*.pdf"))
    if not pdfs:
        print(f"no PDFs in {args.folder}")
        return 1
    pages = cpu = 0.0
    with tempfile.TemporaryDirectory(prefix="papergraph-bench-") as tmp:
        for n, pdf in enumerate(pdfs):
            start = time.monotonic()
            try:
                out = parse_pdf(pdf, Path(tmp) / f"{n}", config, mineru_home=Path(tmp) / "mineru")
            except ParseError as exc:
                try:
                    count = check_pdf(pdf, config)
                except ParseError:
                    count = 0
                print(f"{pdf.name}\t{count} p\tParseError: {exc}\t{time.monotonic() - start:.1f} s wall")
                continue
            kinds = ", ".join(f"{k} {v}" for k, v in Counter(i.type for i in out.items).most_common())
            warn = "; ".join(out.warnings) or "-"
            pages, cpu = pages + out.pages, cpu + out.cpu_seconds
            print(f"{pdf.name}\t{out.pages} p\t{out.backend}\t{len(out.items)} items ({kinds})\twarnings: {warn}\t"
                  f"{out.cpu_seconds:.1f} CPU-s\t{time.monotonic() - start:.1f} s wall", flush=True)
    if cpu:
        print(f"total\t{pages:.0f} pages parsed\t{cpu:.1f} CPU-s\t{pages / cpu:.2f} pages per CPU-second")
    return 0


if __name__ == "__main__":
    sys.exit(main())
