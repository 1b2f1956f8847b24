"""Reference parsing (core/pipeline/references/) against hand judgments: title and year precision, recall and F1
per paper and overall, and the share of in-text citation markers linked to an entry.

bench/references_judged.jsonl holds one line per reference of each judged paper, as a reader of its reference list
counts them: `key` (how the entry starts as printed), the true `title` and `year`, and how it was judged (parsed
fields confirmed, corrected by hand, or an entry the parser missed). The papers are parsed again from a workspace
that holds them (their content lists), so the numbers follow the parser as it is now:

    PAPERGRAPH_WORKSPACE=/tmp/refs_ws .venv/bin/python bench/references_accuracy.py [bench/references_judged.jsonl]

A parsed entry counts for a judged one when its text starts with the judged key; a title is right when both are
equal lower-cased with letters and digits only (how resolution compares titles), a year when equal. Precision is
over the parsed entries of the judged papers, recall over the judged entries. The marker rate counts every marker
the linker recognises ("[12]", "<sup>3</sup>", "(Ammar et al., 2018)", "Ammar et al. (2018)") and how many of them
found their entry; whether each link is the right entry is not judged here.

Caveat: the parser's rules were written while reading these same papers (no held-out half yet).
"""
from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.content.pages import load_items  # noqa: E402
from core.library import open_library  # noqa: E402
from core.pipeline.metadata.extract import norm_text  # noqa: E402
from core.pipeline.references.entries import parse_references  # noqa: E402
from core.pipeline.references.markers import link_markers  # noqa: E402


def _f1(correct: int, parsed: int, judged: int) -> tuple[float, float, float]:
    p = correct / parsed if parsed else 0.0
    r = correct / judged if judged else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def main(path: str = "bench/references_judged.jsonl") -> int:
    judged: dict[str, list[dict]] = defaultdict(list)
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            judged[row["paper"]].append(row)
    lib = open_library()
    docs = {d.filename: d for d in lib.documents.list()}
    totals = defaultdict(int)
    print(f"{'paper':<26} {'judged':>6} {'parsed':>6} {'title F1':>8} {'year F1':>8} {'markers':>8} {'linked':>7}")
    for name, rows in judged.items():
        doc = docs.get(name)
        if doc is None:
            print(f"{name:<26} not in this workspace", file=sys.stderr)
            continue
        items = load_items(lib, doc.id)
        refs = parse_references(doc.id, items)
        _, seen, linked = link_markers(items, refs)
        title_ok = year_ok = 0
        for row in rows:
            key = " ".join(row["key"].split())
            ref = next((r for r in refs if r.text.startswith(key)), None)
            if ref is None:
                continue
            title_ok += norm_text(ref.title) == norm_text(row["title"]) and bool(row["title"])
            year_ok += ref.year == row["year"]
        counts = {"judged": len(rows), "parsed": len(refs), "title": title_ok, "year": year_ok, "seen": seen,
                  "linked": linked}
        for k, v in counts.items():
            totals[k] += v
        print(f"{name:<26} {len(rows):>6} {len(refs):>6} {_f1(title_ok, len(refs), len(rows))[2]:>8.3f} "
              f"{_f1(year_ok, len(refs), len(rows))[2]:>8.3f} {seen:>8} {linked / seen if seen else 0:>7.1%}")
    for field in ("title", "year"):
        p, r, f = _f1(totals[field], totals["parsed"], totals["judged"])
        print(f"{field:<5}: precision {p:.3f}  recall {r:.3f}  F1 {f:.3f}  "
              f"({totals[field]} right of {totals['judged']} judged, {totals['parsed']} parsed)")
    print(f"markers linked to an entry: {totals['linked']} of {totals['seen']} "
          f"({totals['linked'] / totals['seen'] if totals['seen'] else 0:.1%}) over {len(judged)} papers")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
