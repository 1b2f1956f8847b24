"""Readers side by side, from bench/answers.py --json files: what a researcher reads, per question type.

    .venv/bin/python bench/reader_report.py extractive.json select.json write.json [--bins 5]

Per file (one reader, one mode): over the answerable questions, how often the stated answer (the first sentence,
or the bold short answer) holds a reference, how often the whole answer does, how many are answered (not
abstained) and the precision of those; over the unanswerable ones, how many abstain; yes/no right (the verdict
against the reference); latency p50 / p95. Then the same per question type, and a reliability table of the stated
confidence (the probability the answer is right: for a stated answer, right = holds a reference; for an
abstention, right = the question is unanswerable) with its expected calibration error (ECE).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import percentile, question_rows  # noqa: E402


def stated_right(q: dict) -> bool:
    if q["type"] == "yesno":
        return not q["abstained"] and q["short"].strip().lower() == q.get("reference", "").lower()
    return not q["abstained"] and (q["contains_first"] > 0 or (q["short_source"] == "reader" and q["em"] > 0)
                                   or q.get("short_contains", 0) > 0)


def correct(q: dict) -> bool:
    """Whether the answer as given is right: a stated answer holding a reference, or an abstention on a question
    the papers do not answer."""
    if not q["answerable"]:
        return bool(q["abstained"])
    return stated_right(q)


def summary(rows: list[dict]) -> dict:
    ans = [q for q in rows if q["answerable"]]
    un = [q for q in rows if not q["answerable"]]
    stated = [q for q in ans if not q["abstained"]]
    yn = [q for q in ans if q["type"] == "yesno"]
    secs = [q["seconds"] for q in rows]
    return {"n": len(rows), "answerable": len(ans),
            "stated_holds": sum(stated_right(q) for q in ans) / len(ans) if ans else None,
            "whole_holds": sum(q["contains"] > 0 for q in ans) / len(ans) if ans else None,
            "answered": len(stated) / len(ans) if ans else None,
            "precision": sum(stated_right(q) for q in stated) / len(stated) if stated else None,
            "abstain_un": f"{sum(bool(q['abstained']) for q in un)}/{len(un)}",
            "yes_no": sum(stated_right(q) for q in yn) / len(yn) if yn else None,
            "all_cited": _share([q.get("every_sentence_cited") for q in rows]),
            "p50": percentile(secs, 0.5) if secs else None, "p95": percentile(secs, 0.95) if secs else None}


def _share(flags: list) -> str:
    """"k/n" of the stated answers whose every sentence is cited (None: not recorded or abstained)."""
    known = [f for f in flags if f is not None]
    return f"{sum(known)}/{len(known)}" if known else "–"


def fmt(v, digits=2) -> str:
    return "–" if v is None else (f"{v:.{digits}f}" if isinstance(v, float) else str(v))


def reliability(rows: list[dict], bins: int) -> tuple[list[tuple], float | None]:
    scored = [(q["confidence"], correct(q)) for q in rows if q.get("confidence") is not None]
    if not scored:
        return [], None
    table, ece = [], 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        inside = [(c, r) for c, r in scored if lo <= c < hi or (b == bins - 1 and c == 1.0)]
        if not inside:
            continue
        conf = sum(c for c, _ in inside) / len(inside)
        acc = sum(r for _, r in inside) / len(inside)
        ece += len(inside) / len(scored) * abs(conf - acc)
        table.append((f"{lo:.1f}–{hi:.1f}", len(inside), conf, acc))
    return table, ece


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--bins", type=int, default=5)
    ap.add_argument("--questions", default="bench/fresh_corpus/questions.jsonl",
                    help="the set the files answered (for the yes/no references)")
    args = ap.parse_args()
    refs = {i: (q.get("answers") or [""])[0] for i, q in question_rows(args.questions).items()}
    print(f"load average {os.getloadavg()[0]:.2f} (when this report ran; the runs' own are in their logs)")
    print("\n| reader | mode | n | stated answer holds ref | whole answer holds ref | answered | precision of "
          "stated | unanswerable abstaining | yes/no right | every sentence cited | p50 s | p95 s | ECE |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    loaded = []
    for path in args.files:
        data = json.loads(Path(path).read_text())
        for mode_rows in _by_mode(data["questions"]).items():
            mode, rows = mode_rows
            for q in rows:
                q["reference"] = refs.get(q["id"], "")
            reader = next((q["reader"] for q in rows if q.get("reader")), Path(path).stem)
            s = summary(rows)
            _, ece = reliability(rows, args.bins)
            print(f"| {Path(path).stem} ({reader}) | {mode} | {s['n']} | {fmt(s['stated_holds'])} | "
                  f"{fmt(s['whole_holds'])} | {fmt(s['answered'])} | {fmt(s['precision'])} | {s['abstain_un']} | "
                  f"{fmt(s['yes_no'])} | {s['all_cited']} | {fmt(s['p50'], 1)} | {fmt(s['p95'], 1)} | {fmt(ece)} |")
            loaded.append((Path(path).stem, mode, rows))
    types = sorted({q["type"] for _, _, rows in loaded for q in rows})
    print("\nStated answer holds a reference, per question type (unanswerable: abstained)\n")
    print("| type | " + " | ".join(f"{name} {mode}" for name, mode, _ in loaded) + " |")
    print("|---|" + "---|" * len(loaded))
    for t in types:
        cells = []
        for _, _, rows in loaded:
            of = [q for q in rows if q["type"] == t]
            right = sum(correct(q) for q in of)
            cells.append(f"{right}/{len(of)}" if of else "–")
        print(f"| {t} | " + " | ".join(cells) + " |")
    for name, mode, rows in loaded:
        table, ece = reliability(rows, args.bins)
        if not table:
            continue
        print(f"\nReliability of {name} ({mode}): ECE {fmt(ece, 3)}\n")
        print("| confidence | n | mean confidence | right |")
        print("|---|---|---|---|")
        for label, n, conf, acc in table:
            print(f"| {label} | {n} | {conf:.2f} | {acc:.2f} |")
    return 0


def _by_mode(questions: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for q in questions:
        out.setdefault(q["mode"], []).append(q)
    return out


if __name__ == "__main__":
    sys.exit(main())
