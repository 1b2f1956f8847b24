"""Risk–coverage of the LLM-free reader from a bench/answers.py --json file: for each confidence threshold, the
share of answerable questions that would get a stated answer and the precision of the stated answers (an
unanswerable question answered counts as wrong). Prints a table per split, asserts nothing.

    .venv/bin/python bench/risk_coverage.py results.json [--mode mix]
    .venv/bin/python bench/risk_coverage.py dev.json --precision 0.85 [--write]

--precision P: the lowest confidence at which the DEV run's stated answers are right at least P of the time (on a
fine grid); --write puts it in core/query/reading/data/reader_model.json as the extractive reader's threshold (the
model's weights unchanged; bench/reader_train.py refits those). Refuses a run with test questions.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def best_confidence(r: dict) -> float | None:
    """The reader's P(best sentence right), stated or not: an abstention's own confidence is another quantity
    (that abstaining is right), so runs that record both sweep this one."""
    return r["best_confidence"] if r.get("best_confidence") is not None else r.get("confidence")


def curve(rows: list[dict], steps: int = 12) -> list[tuple[float, float, float, int]]:
    scored = [(best_confidence(r), bool(r["answerable"]) and r["best_contains"] > 0, r["answerable"]) for r in rows
              if best_confidence(r) is not None]
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
    ap.add_argument("--precision", type=float)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    rows = [r for r in json.loads(Path(args.results).read_text())["questions"] if r["mode"] == args.mode]
    if args.precision is not None:
        return choose(rows, args.precision, args.write)
    for split in sorted({r.get("split", "") for r in rows}):
        print(f"\n## {split or 'all'} ({args.mode})\n")
        print("| confidence ≥ | answerable answered | stated answers right | unanswerable answered |")
        print("|---|---|---|---|")
        for t, coverage, precision, wrong in curve([r for r in rows if r.get("split", "") == split]):
            print(f"| {t:.2f} | {coverage:.2f} | {precision:.2f} | {wrong} |")
    return 0


def choose(rows: list[dict], precision: float, write: bool) -> int:
    if any(r.get("split") == "test" for r in rows):
        print("a threshold is chosen on dev only: this run has test questions", file=sys.stderr)
        return 2
    answerable = sum(1 for r in rows if r["answerable"]) or 1
    for step in range(0, 100):
        t = step / 100
        stated = [r for r in rows if best_confidence(r) is not None and best_confidence(r) >= t]
        right = sum(1 for r in stated if r["answerable"] and r["best_contains"] > 0)
        if stated and right / len(stated) >= precision:
            coverage = sum(1 for r in stated if r["answerable"]) / answerable
            print(f"threshold {t:.2f}: stated answers right {right / len(stated):.2f}, answerable answered "
                  f"{coverage:.2f}, unanswerable answered {sum(1 for r in stated if not r['answerable'])}")
            if write:
                path = Path(__file__).resolve().parents[1] / "core/query/reading/data/reader_model.json"
                model = json.loads(path.read_text())
                model["threshold"] = t
                model["threshold_refit"] = {"by": "bench/risk_coverage.py --precision", "precision": precision,
                                            "dev_precision": round(right / len(stated), 4),
                                            "dev_coverage": round(coverage, 4), "dev_questions": len(rows)}
                path.write_text(json.dumps(model, indent=1) + "\n")
                print(f"wrote {path}")
            return 0
    print(f"no threshold reaches precision {precision} on this run")
    return 1


if __name__ == "__main__":
    sys.exit(main())
