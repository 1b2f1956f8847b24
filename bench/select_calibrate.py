"""Fit the select reader's confidence on DEV runs and write core/query/reading/data/select_calibration.json.

    .venv/bin/python bench/answers.py --set qa --split dev --reader select --modes mix --state-all \
        --json dev_select.json --trace dev_trace.json
    .venv/bin/python bench/select_calibrate.py dev_select.json [more dev runs…] --trace dev_trace.json [--write]

Runs made with --state-all: select states every sentence the model chose, so the fit sees the wrong answers a
threshold would turn down. Each stated answer is a row, by the form of reply its question was asked for
(core.query.reading.select.reply_form):
  - words: the model's odds at its decision (answering against "none") and the extractive probability of the
    sentence it chose; right = its first sentence or bold short answer holds a reference (an unanswerable question's
    stated answer is wrong). A logistic regression on logit(odds) and that probability gives P(right) (a, b, c);
    rows without odds (an endpoint that gives none) fit on the probability alone (b2, c2). The threshold below which
    select abstains maximises, on dev, right statements + abstentions on unanswerable questions − wrong statements:
    a wrong answer shown costs more than silence.
  - verdict (yes/no), from the traces: P(no) by a logistic regression on the margin log P(no) − log P(yes) at the
    verdict token and whether the chosen sentence negates what the question asks (verdict_a, b, c); its
    leave-one-out accuracy is printed beside the in-sample one. verdict_threshold: the confidence from which a
    verdict is stated, chosen like the threshold.
Never run it on a test split.
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
from core.query.reading import select as S  # noqa: E402
from core.query.reading.answer_types import yes_no_question  # noqa: E402
from core.query.reading.yes_no import NO, polarity  # noqa: E402

OUT = REPO / "core" / "query" / "reading" / "data" / "select_calibration.json"


def logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))


def best_threshold(rows: list[dict], probability) -> float:
    """Maximises right statements + abstentions on unanswerable questions − wrong statements."""
    best = (-1e9, 0.0)
    for t in [i / 100 for i in range(0, 91)]:
        gain = 0
        for q in rows:
            if not q["abstained"] and probability(q) >= t:
                gain += 1 if q["answerable"] and stated_right(q) else -1
            elif not q["answerable"]:
                gain += 1
        best = max(best, (gain, -t))
    return -best[1]


def verdict_rows(traces: list[str], by_question: dict[str, dict]) -> list[tuple[float, bool, bool]]:
    """(margin, the chosen sentence negates, the reference is no) per yes/no dev question the model answered."""
    out, seen = [], set()
    for path in traces:
        for t in json.loads(Path(path).read_text()):
            q = by_question.get(t["question"])
            if q is None or not yes_no_question(t["question"]) or not t["calls"] or t["question"] in seen:
                continue
            seen.add(t["question"])
            if q.get("split") == "test":
                raise SystemExit(f"{q['id']} is a test question: calibrate on dev only")
            call = t["calls"][0]
            choice = S.read_choice(call["reply"], call["top_logprobs"], len(t["shown"]), S.VERDICT)
            if choice is None or choice.none or choice.margin is None or not q.get("answers"):
                continue
            negated = polarity(t["question"], t["shown"][choice.numbers[0] - 1]["text"]) == NO
            out.append((choice.margin, negated, q["answers"][0].strip().lower() == "no"))
    return out


def fit_verdict(rows: list[tuple[float, bool, bool]]) -> dict[str, float]:
    from sklearn.linear_model import LogisticRegression

    y = [int(no) for _, _, no in rows]
    if len(set(y)) < 2:
        return {}
    argmax = sum(int((m > 0) == no) for m, _, no in rows)
    polar = sum(int(n == no) for _, n, no in rows)
    print(f"verdicts: {len(rows)} yes/no dev answers ({sum(y)} no); right: the sign of the model's odds of no "
          f"against yes {argmax}, the chosen sentence's polarity {polar}")
    kept = None
    for with_polarity in (False, True):  # the polarity kept only when it reads more verdicts right left out
        x = [[m, float(n)] if with_polarity else [m] for m, n, _ in rows]
        fit = LogisticRegression(C=1.0).fit(x, y)
        loo = sum(int(LogisticRegression(C=1.0).fit(x[:i] + x[i + 1:], y[:i] + y[i + 1:]).predict([x[i]])[0] == y[i])
                  for i in range(len(x)))
        inside = sum(int(p == t) for p, t in zip(fit.predict(x), y))
        print(f"  margin{' + polarity' if with_polarity else ''}: {inside} right in-sample, {loo} leave-one-out")
        if kept is None or loo > kept[0]:
            kept = (loo, {"verdict_a": float(fit.coef_[0][0]),
                          "verdict_b": float(fit.coef_[0][1]) if with_polarity else 0.0,
                          "verdict_c": float(fit.intercept_[0])})
    return kept[1]


def main() -> int:
    from sklearn.linear_model import LogisticRegression

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--trace", action="append", default=[], help="bench/answers.py --trace files (verdicts)")
    ap.add_argument("--questions", default="bench/qa_corpus/questions.jsonl,bench/papers_qa.jsonl")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    questions = question_rows(args.questions)
    refs = {i: ((q.get("answers") or [""])[0], q.get("split", "")) for i, q in questions.items()}
    rows, seen = [], set()
    for path in args.runs:  # runs may overlap (a few types, then a sample): each question once
        for q in json.loads(Path(path).read_text())["questions"]:
            if q.get("reader") != "select" or (q["id"], q["mode"]) in seen:
                continue
            seen.add((q["id"], q["mode"]))
            if refs.get(q["id"], ("", ""))[1] == "test":
                raise SystemExit(f"{q['id']} is a test question: calibrate on dev only")
            q["reference"] = refs.get(q["id"], ("", ""))[0]
            text = questions.get(q["id"], {}).get("question", "")
            q["form"] = S.reply_form(yes_no_question(text))
            rows.append(q)
    params: dict[str, float] = {}
    chosen = [q for q in rows if q["form"] != S.VERDICT]  # a verdict's confidence is fitted from the traces
    stated = [q for q in chosen if not q["abstained"]]
    with_odds = [q for q in stated if q.get("model_odds") is not None]
    y = [int(q["answerable"] and stated_right(q)) for q in with_odds]
    if len(set(y)) == 2:
        fit = LogisticRegression(C=1.0).fit([[logit(q["model_odds"]), q["score"]] for q in with_odds], y)
        params.update(a=float(fit.coef_[0][0]), b=float(fit.coef_[0][1]), c=float(fit.intercept_[0]))
    print(f"words: {len(with_odds)} stated with odds, {sum(y)} right")
    y2 = [int(q["answerable"] and stated_right(q)) for q in stated]
    if len(set(y2)) == 2:
        fit2 = LogisticRegression(C=1.0).fit([[q["score"]] for q in stated], y2)
        params.update(b2=float(fit2.coef_[0][0]), c2=float(fit2.intercept_[0]))
    calibration = S.Calibration(**params)
    params["threshold"] = best_threshold(
        chosen, lambda q: calibration.probability(q.get("model_odds"), q["score"]))
    by_question = {q["question"]: q for q in questions.values()}
    verdicts = verdict_rows(args.trace, by_question)
    params.update(fit_verdict(verdicts))
    if "verdict_a" in params:
        right = [(max(p, 1 - p), (p >= .5) == no)
                 for m, n, no in verdicts
                 for p in [sigmoid(params["verdict_a"] * m + params["verdict_b"] * n + params["verdict_c"])]]
        best = max((sum(1 if r else -1 for c, r in right if c >= t), -t) for t in [i / 100 for i in range(50, 91)])
        params["verdict_threshold"] = -best[1]
    print(f"{len(rows)} dev answers, {len(stated)} stated words/sentence answers; fitted "
          f"{json.dumps({k: round(v, 3) for k, v in params.items()})}")
    if args.write:
        OUT.write_text(json.dumps({k: round(v, 4) for k, v in params.items()}, indent=1) + "\n")
        print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
