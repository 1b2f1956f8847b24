"""Fit the extractive reader's abstention confidence on a DEV run and write it into
core/query/reading/data/reader_model.json (key "abstention"; the rest of the model is bench/reader_train.py's).

An abstention is right when the papers do not answer the question. Among the DEV questions the reader abstained
on, a logistic regression of "unanswerable" on the logit of the confidence it abstained at (its P(best sentence
right)) gives P(the abstention is right): what the Ask page shows beside an abstention, so that every answer's
confidence means the same thing, the chance that what it gives is right (bench/reader_report.py's ECE).

    .venv/bin/python bench/answers.py --set qa --split dev --modes mix --reader extractive --json dev.json
    .venv/bin/python bench/abstention_calibrate.py dev.json [--write]

Refuses a run with test questions. Prints the fit and the in-sample ECE before and after.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.reader_report import question_rows, reliability  # noqa: E402
from bench.risk_coverage import best_confidence  # noqa: E402
from core.query.reading.scores import MODEL_PATH, Linear, load_model  # noqa: E402


def logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def main() -> int:
    from sklearn.linear_model import LogisticRegression

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run")
    ap.add_argument("--questions", default="bench/qa_corpus/questions.jsonl")
    ap.add_argument("--mode", default="mix")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    data = json.loads(Path(args.run).read_text())
    rows = [q for q in data["questions"] if q["mode"] == args.mode and best_confidence(q) is not None]
    if any(q.get("split") == "test" for q in rows):
        print("refused: the run holds test questions; fit on dev only", file=sys.stderr)
        return 2
    refs = {i: (q.get("answers") or [""])[0] for i, q in question_rows(args.questions).items()}
    for q in rows:
        q["reference"] = refs.get(q["id"], "")
    abstained = [q for q in rows if q["abstained"]]
    x = [[logit(best_confidence(q))] for q in abstained]
    y = [int(not q["answerable"]) for q in abstained]
    fit = LogisticRegression(C=1.0).fit(x, y)
    coef, intercept = float(fit.coef_[0][0]), float(fit.intercept_[0])

    # What the reader will give with this fit: its own code path, so the ECE below is of what ships.
    fitted = replace(load_model(), abstention=Linear(("confidence_logit",), (coef,), intercept))
    after = [{**q, "confidence": fitted.abstention_confidence(best_confidence(q))} if q["abstained"] else q
             for q in rows]
    print(f"{len(abstained)} abstentions ({sum(y)} on unanswerable questions) of {len(rows)} dev questions: "
          f"P(abstention right) = σ({coef:.3f}·logit(confidence) {intercept:+.3f})")
    print(f"in-sample ECE: {reliability(rows, 5)[1]:.3f} as the run gave it, {reliability(after, 5)[1]:.3f} with "
          f"the fit")
    if args.write:
        model = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
        model["abstention"] = {"features": ["confidence_logit"], "coef": [round(coef, 4)],
                               "intercept": round(intercept, 4),
                               "fitted_on": {"by": "bench/abstention_calibrate.py", "run": Path(args.run).name,
                                             "abstentions": len(abstained), "unanswerable": sum(y)}}
        MODEL_PATH.write_text(json.dumps(model, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {MODEL_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
