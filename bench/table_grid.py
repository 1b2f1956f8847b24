"""The table-grid repair (core/pipeline/parsing/table_grid_repair.py) applied to a COPY of a workspace whose papers
were parsed before it existed: every paper's stored content list is repaired against its stored PDF and written
back, so `python -m core results rebuild` and bench/results_accuracy.py can then measure what it changes. Prints
how many tables were rebuilt (with why), and the time the repair adds per page against the parse's own CPU time.

    cp -r /work/ws_qa /tmp/copy && .venv/bin/python bench/table_grid.py /tmp/copy
    .venv/bin/python -m core --workspace /tmp/copy results rebuild   # then bench/results_accuracy.py on the copy
    .venv/bin/python bench/table_grid.py WORKSPACE --dry-run           # count only, write nothing

Never point it at a workspace in use: it rewrites content_list.json in place (a real workspace gets the repair on
re-parse, `python -m core retry ID`).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.content.content_list import load_content_list, save_content_list  # noqa: E402
from core.pipeline.parsing.table_grid_repair import GridCounts, repair_table_grid  # noqa: E402


def repair_paper(doc_dir: Path, write: bool) -> tuple[int, int, int, float, float]:
    """(tables, rebuilt, pages, repair seconds, parse CPU seconds) of one stored paper."""
    parsed, pdf = doc_dir / "parsed", doc_dir / "source.pdf"
    if not (parsed / "content_list.json").exists() or not pdf.exists():
        return 0, 0, 0, 0.0, 0.0
    meta = json.loads((parsed / "parse.json").read_text()) if (parsed / "parse.json").exists() else {}
    if not str(meta.get("backend", "")).startswith("mineru"):
        return 0, 0, 0, 0.0, 0.0
    items = load_content_list(parsed / "content_list.json")
    tables = [i for i in items if i.type == "table" and i.table_body and i.bbox]
    counts = GridCounts()
    start = time.perf_counter()
    with pymupdf.open(pdf) as doc:
        for item in tables:
            if item.page_idx < doc.page_count and item.source in ("", "mineru"):
                repair_table_grid(item, doc[item.page_idx], counts)
    took = time.perf_counter() - start
    for line in counts.examples:
        print(f"  {doc_dir.name[:10]} {line}")
    if write and counts.tables:
        save_content_list(items, parsed / "content_list.json")
    return len(tables), counts.tables, int(meta.get("pages") or 0), took, float(meta.get("cpu_seconds") or 0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args()
    total = [0, 0, 0, 0.0, 0.0]
    for doc_dir in sorted((args.workspace / "docs").iterdir()):
        for i, v in enumerate(repair_paper(doc_dir, not args.dry_run)):
            total[i] += v
    tables, rebuilt, pages, took, parse_cpu = total
    print(f"tables {tables}  rebuilt {rebuilt}  pages {pages}")
    if pages:
        print(f"repair {took / pages * 1000:.1f} ms/page  parse {parse_cpu / pages * 1000:.0f} CPU-ms/page  "
              f"({took / max(parse_cpu, 1e-9):.1%} of the parse)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
