"""Risk–coverage of the LLM-free reader from a bench/answers.py --json file: for each confidence threshold, the
share of answerable questions that would get a stated answer and the precision of the stated answers (an
unanswerable question answered counts as wrong). Prints a table per split, asserts nothing.

    .venv/bin/python bench/risk_coverage.py results.json [--mode mix]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def curve(rows: list[dict], steps: int = 12) -> list[tuple[float, float, float, int]]:
    scored = [(r["confidence"], bool(r["answerable"]) and r["best_contains"] > 0, r["answerable"]) for r in rows
              if r.get("confidence") is not None]
    answerable = sum(1 for _, _, a in scored if a) or 1
    thresholds = sorted({round(c, 2) for c, _, _ in scored})
    out = []
    for t in thresholds[::max(1, len(thresholds) // steps)]:
        stated = [(right, a) for c, right, a in scored if c >= t]
        if stated:
            out.append((t, sum(1 for _, a in stated if a) / answerable, sum(r for r, _ in stated) / len(stated),
                        sum(1 for _, a in stated if not a)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("--mode", default="mix")
    args = ap.parse_args()
    rows = [r for r in json.loads(Path(args.results).read_text())["questions"] if r["mode"] == args.mode]
    for split in sorted({r.get("split", "") for r in rows}):
        print(f"\n## {split or 'all'} ({args.mode})\n")
        print("| confidence ≥ | answerable answered | stated answers right | unanswerable answered |")
        print("|---|---|---|---|")
        for t, coverage, precision, wrong in curve([r for r in rows if r.get("split", "") == split]):
            print(f"| {t:.2f} | {coverage:.2f} | {precision:.2f} | {wrong} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
