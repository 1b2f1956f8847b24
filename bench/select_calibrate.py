"""Fit the select reader's confidence on DEV runs and write core/query/reading/data/select_calibration.json.

    .venv/bin/python bench/answers.py --set qa --split dev --reader select --modes mix --json dev_select.json
    .venv/bin/python bench/select_calibrate.py dev_select.json [more dev runs…] [--write]

Each stated answer (not abstained) is a row: the model's odds at its decision (answering against "none") and the
extractive probability of the sentence it chose; right = its first sentence or bold short answer holds a reference
(an unanswerable question's stated answer is wrong). A logistic regression on logit(odds) and that probability gives
P(right) (a, b, c); rows without odds (an endpoint that gives none) fit on the probability alone (b2, c2). The
threshold below which select abstains maximises, on dev, right statements + abstentions on unanswerable questions −
wrong statements: a wrong answer shown costs more than silence. Never run it on a test split.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.common import question_rows  # noqa: E402
from bench.reader_report import stated_right  # noqa: E402

OUT = REPO / "core" / "query" / "reading" / "data" / "select_calibration.json"


def logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def main() -> int:
    from sklearn.linear_model import LogisticRegression

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--questions", default="bench/qa_corpus/questions.jsonl,bench/papers_qa.jsonl")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    refs = {i: ((q.get("answers") or [""])[0], q.get("split", "")) for i, q in question_rows(args.questions).items()}
    rows = []
    for path in args.runs:
        for q in json.loads(Path(path).read_text())["questions"]:
            if q.get("reader") != "select":
                continue
            if refs.get(q["id"], ("", ""))[1] == "test":
                raise SystemExit(f"{q['id']} is a test question: calibrate on dev only")
            q["reference"] = refs.get(q["id"], ("", ""))[0]
            rows.append(q)
    stated = [q for q in rows if not q["abstained"]]
    with_odds = [q for q in stated if q.get("model_odds") is not None]
    y = [int(q["answerable"] and stated_right(q)) for q in with_odds]
    params: dict[str, float] = {}
    if len(set(y)) == 2:
        fit = LogisticRegression(C=1.0).fit([[logit(q["model_odds"]), q["score"]] for q in with_odds], y)
        params.update(a=float(fit.coef_[0][0]), b=float(fit.coef_[0][1]), c=float(fit.intercept_[0]))
    y2 = [int(q["answerable"] and stated_right(q)) for q in stated]
    if len(set(y2)) == 2:
        fit2 = LogisticRegression(C=1.0).fit([[q["score"]] for q in stated], y2)
        params.update(b2=float(fit2.coef_[0][0]), c2=float(fit2.intercept_[0]))

    def probability(q: dict) -> float:
        if q.get("model_odds") is not None and "a" in params:
            z = params["a"] * logit(q["model_odds"]) + params["b"] * q["score"] + params["c"]
        else:
            z = params.get("b2", 4.0) * q["score"] + params.get("c2", -2.0)
        return 1 / (1 + math.exp(-z))

    best = (-1e9, 0.0)
    for t in [i / 100 for i in range(0, 91)]:
        gain = 0
        for q in rows:
            states = not q["abstained"] and probability(q) >= t
            if states:
                gain += 1 if q["answerable"] and stated_right(q) else -1
            elif not q["answerable"]:
                gain += 1
        best = max(best, (gain, -t))
    params["threshold"] = -best[1]
    print(f"{len(rows)} dev answers, {len(stated)} stated ({len(with_odds)} with odds), "
          f"{sum(y2)} of them right; fitted {json.dumps({k: round(v, 3) for k, v in params.items()})}")
    if args.write:
        OUT.write_text(json.dumps({k: round(v, 4) for k, v in params.items()}, indent=1) + "\n")
        print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
