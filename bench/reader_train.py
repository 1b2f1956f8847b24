"""Fit the LLM-free reader's model (core/query/reading/data/reader_model.json) on the DEV split of a question set, and
report what it does — dev figures by cross-validation; test figures only with --report-test, once, at the end.

    nice .venv/bin/python bench/reader_train.py --workspace WS --questions bench/qa_corpus/questions.jsonl \
        [--modes mix,naive,ppr] [--cache /tmp/reader-cache.pkl] [--write] [--report-test]

1. Every dev question is retrieved once per mode (context only, LLM-free; cached in --cache) and its candidate
   sentences get their features (core.query.reading.extractive.rank with the features only).
2. A sentence is a positive when it contains a reference answer as whole words (core.eval.metrics.
   contains_reference) or, for yes/no and long answers, matches a reference evidence sentence (token F1 ≥ 0.6).
3. The sentence model: a linear score fitted listwise (a softmax over each question's candidates, then calibrated
   to a probability; --objective pointwise: the plain logistic regression it replaced), C chosen by 5-fold
   cross-validation grouped by question (top-1 accuracy); the confidence model: logistic regression on the
   ranking's shape (core.query.reading.scores.confidence_features) from cross-validated sentence probabilities,
   target "the top sentence is right"; unanswerable questions are all negatives for it.
4. The threshold: the lowest confidence at which the stated answers of the dev questions (cross-validated) are
   right at least --precision of the time and at least --abstain of the unanswerable ones abstain; `related`:
   the best-sentence probability below which the passages are not even shown as related (at most 5% of dev's
   right answers fall under it).
With --write the model file is written (with what it was fitted on and its dev figures); it prints the
risk–coverage curve either way.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import pickle
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import numpy as np  # noqa: E402

from core.eval.metrics import contains_reference, token_f1  # noqa: E402
from core.library import open_library  # noqa: E402
from core.query.engine import EXTRACTIVE_TOKENS, Embeddings, ask  # noqa: E402
from core.query.reading import extractive  # noqa: E402
from core.query.reading.features import FEATURES  # noqa: E402
from core.query.reading.scores import (  # noqa: E402
    CONFIDENCE_FEATURES,
    MODEL_PATH,
    Linear,
    ReaderModel,
    confidence_features,
)
from core.query.records import QueryParams  # noqa: E402
from core.settings.workspace import Workspace  # noqa: E402

YES_NO = {"yes", "no"}
HOTPOT = REPO.parent / "shared" / "corpus" / "hotpotqa" / "qa.jsonl"
# Features only: every sentence probability 0.5, so ranking by it keeps the candidates' order and nothing abstains.
NEUTRAL = ReaderModel(sentence=Linear((), (), 0.0), confidence=Linear((), (), 10.0), threshold=0.0, related=0.0)


def load(path: Path, split: str) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if split == "all" or r.get("split") == split]


def retrieve(lib, questions: list[dict], modes: list[str], cache: Path | None, passage_tokens: int | None = None
             ) -> dict:
    """(question id, mode) → (context, retrieval, question vector), cached on disk."""
    held: dict = pickle.loads(cache.read_bytes()) if cache and cache.exists() else {}
    embeddings = Embeddings(lib)
    todo = [(q, m) for q in questions for m in modes if (q["id"], m) not in held]
    for k, (q, mode) in enumerate(todo, 1):
        # The context an extractive answer reads (engine.EXTRACTIVE_TOKENS), without answering.
        params = QueryParams.from_config(lib.settings.query, mode=mode, use_llm=False, context_only=True,
                                         max_passage_tokens=passage_tokens,
                                         max_chunk_tokens=max(lib.settings.query.max_chunk_tokens, EXTRACTIVE_TOKENS))
        result = ask(lib, q["question"], params, embeddings=embeddings, save=False)
        held[(q["id"], mode)] = (result.context, result.retrieval, embeddings(q["question"]))
        if k % 25 == 0:
            print(f"  retrieved {k}/{len(todo)}", file=sys.stderr, flush=True)
            if cache:
                cache.write_bytes(pickle.dumps(held))
    if cache and todo:
        cache.write_bytes(pickle.dumps(held))
    return held


def positive(sentence: str, q: dict) -> bool:
    answers = [a for a in q["answers"] if a.strip().lower() not in YES_NO]
    if answers and contains_reference([sentence], answers):
        return True
    return any(token_f1(sentence, [e]) >= 0.6 for e in q.get("evidence", []) if e)


def candidate_rows(lib, questions: list[dict], held: dict, modes: list[str]):
    """Per (question, mode): its candidates (features filled, in retrieval order) and their labels."""
    out = []
    for q in questions:
        for mode in modes:
            context, retrieval, qvec = held[(q["id"], mode)]
            _, ranked = extractive.rank(q["question"], context, retrieval, lib, qvec, NEUTRAL)
            labels = [positive(c.text, q) if q["answers"] else False for c in ranked]
            out.append((q, mode, ranked, labels))
    return out


def matrix(ranked) -> np.ndarray:
    return np.array([[c.features[f] for f in FEATURES] for c in ranked], dtype=np.float64)


def fit_sentence(groups, C: float, objective: str = "listwise"):
    """The sentence model on these groups: a linear score with sklearn's coef_/intercept_/predict_proba."""
    if objective == "pointwise":
        from sklearn.linear_model import LogisticRegression

        X = np.vstack([matrix(r) for _, _, r, _ in groups if r])
        y = np.concatenate([lab for _, _, r, lab in groups if r])
        return LogisticRegression(C=C, max_iter=2000).fit(X, y)
    return Listwise(C).fit([matrix(r) for _, _, r, _ in groups if r],
                           [np.asarray(lab, dtype=bool) for _, _, r, lab in groups if r])


class Listwise:
    """The sentence model fitted for what the reader does with it, pick one sentence per question: a conditional
    logit (a softmax over each question's candidates, maximising the probability of its right ones; L2 penalty
    1/C on standardised features), then one logistic calibration of that score over all candidates, so the
    stored weights still give P(this sentence holds the answer) and everything downstream (confidence, related,
    further sentences) reads them unchanged. On dev (5-fold, by question) it picks the right sentence more often
    than the pointwise logistic regression fitted before it; the table bench/reader_train.py prints says by how
    much."""

    def __init__(self, C: float):
        self.C = C

    def fit(self, mats: list[np.ndarray], labels: list[np.ndarray]):
        from scipy.optimize import minimize
        from sklearn.linear_model import LogisticRegression

        X = np.vstack(mats)
        mu, sd = X.mean(axis=0), X.std(axis=0)
        sd[sd < 1e-9] = 1.0
        lists = [((m - mu) / sd, y) for m, y in zip(mats, labels) if y.any()]
        l2 = 1.0 / self.C

        def loss(w: np.ndarray):
            total, grad = 0.5 * l2 * w @ w, l2 * w
            for Z, y in lists:
                s = Z @ w
                e = np.exp(s - s.max())
                p = e / e.sum()
                right = p[y].sum()
                total -= math.log(right + 1e-12)
                grad = grad + p @ Z - (p[y] @ Z[y]) / (right + 1e-12)
            return total, grad

        w = minimize(loss, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": 500}).x / sd
        b = -float(mu @ w)
        score = X @ w + b
        cal = LogisticRegression(C=1e4, max_iter=2000).fit(score[:, None], np.concatenate(labels))
        a = float(cal.coef_[0, 0])
        self.coef_ = (a * w)[None, :]
        self.intercept_ = np.array([a * b + float(cal.intercept_[0])])
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        p = 1.0 / (1.0 + np.exp(-np.clip(X @ self.coef_[0] + self.intercept_[0], -40, 40)))
        return np.column_stack([1 - p, p])


def cross_probs(groups, C: float, folds: int = 5, seed: int = 0, objective: str = "listwise") -> list[np.ndarray]:
    """Each group's sentence probabilities from a model that did not see its question."""
    ids = sorted({g[0]["id"] for g in groups})
    rng = np.random.default_rng(seed)
    fold_of = {qid: int(f) for qid, f in zip(ids, rng.permutation(len(ids)) % folds)}
    probs: list[np.ndarray] = [np.zeros(len(g[2])) for g in groups]
    for f in range(folds):
        train = [g for g in groups if fold_of[g[0]["id"]] != f and g[2]]
        if not any(any(lab) for *_, lab in train):
            continue
        model = fit_sentence(train, C, objective)
        for k, g in enumerate(groups):
            if fold_of[g[0]["id"]] == f and g[2]:
                probs[k] = model.predict_proba(matrix(g[2]))[:, 1]
    return probs


def outcomes(groups, probs):
    """Per group: its confidence features and whether its best sentence is right."""
    rows = []
    for (q, mode, ranked, labels), p in zip(groups, probs):
        if not ranked:
            rows.append((q, mode, None, False))
            continue
        for c, pk in zip(ranked, p):
            c.p = float(pk)
        order = sorted(range(len(ranked)), key=lambda i: -ranked[i].p)
        rows.append((q, mode, confidence_features([ranked[i] for i in order]),
                     bool(q["answers"]) and bool(labels[order[0]])))
    return rows


def fit_confidence(rows):
    from sklearn.linear_model import LogisticRegression

    X = np.array([[r[2][f] for f in CONFIDENCE_FEATURES] for r in rows if r[2] is not None])
    y = np.array([r[3] for r in rows if r[2] is not None])
    return LogisticRegression(C=1.0, max_iter=2000).fit(X, y)


def cross_confidence(rows, folds: int = 5, seed: int = 1) -> list[tuple[float, bool, bool]]:
    """(confidence from a model that did not see the question, right, answerable) per row: what the threshold is
    chosen on, so it is not fitted to the confidence model's own training rows."""
    ids = sorted({r[0]["id"] for r in rows})
    rng = np.random.default_rng(seed)
    fold_of = {qid: int(f) for qid, f in zip(ids, rng.permutation(len(ids)) % folds)}
    out: list[tuple[float, bool, bool]] = [(0.0, False, bool(r[0]["answers"])) for r in rows]
    for f in range(folds):
        train = [r for r in rows if fold_of[r[0]["id"]] != f]
        model = fit_confidence(train)
        for k, r in enumerate(rows):
            if fold_of[r[0]["id"]] == f and r[2] is not None:
                x = np.array([[r[2][name] for name in CONFIDENCE_FEATURES]])
                out[k] = (float(model.predict_proba(x)[0, 1]), r[3], bool(r[0]["answers"]))
    return out


def risk_coverage(scored: list[tuple[float, bool, bool]]) -> list[tuple[float, float, float]]:
    """(threshold, share of answerable questions answered, precision of stated answers) over thresholds;
    `scored` holds (confidence, right, answerable)."""
    out = []
    answerable = sum(1 for _, _, a in scored if a) or 1
    for t in sorted({round(s, 3) for s, _, _ in scored}):
        stated = [(r, a) for s, r, a in scored if s >= t]
        if stated:
            out.append((t, sum(1 for _, a in stated if a) / answerable, sum(r for r, _ in stated) / len(stated)))
    return out


def choose_threshold(curve, precision: float) -> float:
    ok = [t for t, _, p in curve if p >= precision]
    return min(ok) if ok else max(t for t, _, _ in curve)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workspace", required=True)
    ap.add_argument("--questions", default=str(REPO / "bench" / "qa_corpus" / "questions.jsonl"))
    ap.add_argument("--modes", default="mix")
    ap.add_argument("--cache")
    ap.add_argument("--passage-tokens", type=int, help="the context's longest passage (default: the workspace's)")
    ap.add_argument("--precision", type=float, default=0.9)
    ap.add_argument("--abstain", type=float, default=0.8,
                    help="share of the unanswerable dev questions that must abstain at the threshold")
    ap.add_argument("--C", default="0.03,0.1,0.3,1,3")
    ap.add_argument("--hotpot", help="a workspace of ../shared/corpus/hotpotqa (bench/answers.py hotpot builds one): "
                    "its first 50 questions join the dev split")
    ap.add_argument("--also", action="append", default=[], metavar="QUESTIONS=WORKSPACE",
                    help="another question set whose dev split joins the fit, over the workspace that holds its papers")
    ap.add_argument("--objective", choices=("listwise", "pointwise"), default="listwise",
                    help="listwise: a softmax over each question's candidates (picks one sentence, as the reader "
                    "does); pointwise: a logistic regression per sentence (the model before it)")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()

    lib = open_library(Workspace(Path(args.workspace)))
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    path = Path(args.questions)
    dev = load(path, "dev")
    print(f"{len(dev)} dev questions ({sum(1 for q in dev if q['answers'])} answerable) × modes {', '.join(modes)}")
    held = retrieve(lib, dev, modes, Path(args.cache) if args.cache else None, args.passage_tokens)
    groups = candidate_rows(lib, dev, held, modes)
    for extra in args.also:  # another set's dev split, over its own workspace (e.g. bench/papers_qa.jsonl)
        file, _, workspace = extra.partition("=")
        more = [dict(q, id=f"{Path(file).stem}-{q['id']}") for q in load(Path(file), "dev")]
        more_lib = open_library(Workspace(Path(workspace)))
        cache = Path(args.cache).with_suffix(f".{Path(file).stem}.pkl") if args.cache else None
        groups += candidate_rows(more_lib, more, retrieve(more_lib, more, modes, cache), modes)
        dev += more
        print(f"+ {len(more)} dev questions of {Path(file).name}")
    if args.hotpot:  # HotpotQA's first half (its dev half; bench/answers.py hotpot reports the second as test)
        rows = [json.loads(line) for line in HOTPOT.read_text(encoding="utf-8").splitlines() if line.strip()]
        hotpot = [{"id": f"hotpot-{n}", "question": r["question"], "answers": r["answers"],
                   "evidence": r.get("evidence", []), "type": r.get("type", "")}
                  for n, r in enumerate(rows[:len(rows) // 2], 1)]
        hot_lib = open_library(Workspace(Path(args.hotpot)))
        cache = Path(args.cache).with_suffix(".hotpot.pkl") if args.cache else None
        groups += candidate_rows(hot_lib, hotpot, retrieve(hot_lib, hotpot, modes, cache), modes)
        dev += hotpot
        print(f"+ {len(hotpot)} HotpotQA dev questions")
    n_pos = sum(sum(lab) for *_, lab in groups)
    print(f"{sum(len(g[2]) for g in groups)} candidates, {n_pos} positives; "
          f"{sum(1 for g in groups if any(g[3]))} of {len(groups)} question-modes have one")

    best = None
    print("\n| C | dev top-1 right (CV, answerable) |\n|---|---|")
    for C in [float(c) for c in args.C.split(",")]:
        probs = cross_probs(groups, C, objective=args.objective)
        rows = outcomes(groups, probs)
        acc = np.mean([r[3] for r in rows if r[0]["answers"]])
        print(f"| {C} | {acc:.3f} |")
        if best is None or acc > best[0]:
            best = (acc, C, probs, rows)
    acc, C, probs, rows = best
    confidence = fit_confidence(rows)
    scored = cross_confidence(rows)
    curve = risk_coverage(scored)
    threshold = choose_threshold(curve, args.precision)
    unanswerable_conf = sorted(conf for conf, _, answerable in scored if not answerable)
    if unanswerable_conf and args.abstain:  # and at least this share of the unanswerable dev questions abstain
        threshold = max(threshold, unanswerable_conf[min(len(unanswerable_conf) - 1,
                                                         math.ceil(args.abstain * len(unanswerable_conf)) - 1)] + 1e-4)
    top_right = sorted(r[2]["top_logit"] for r in rows if r[3])
    related = 1 / (1 + math.exp(-top_right[int(0.05 * len(top_right))])) if top_right else 0.0
    unanswerable = [conf for conf, _, answerable in scored if not answerable]
    abstains = sum(conf < threshold for conf in unanswerable)
    print(f"\nchosen C={C}: dev top-1 right {acc:.3f}; threshold {threshold:.3f} for precision ≥ {args.precision}; "
          f"related ≥ {related:.3f}; unanswerable questions abstaining at it: {abstains} of {len(unanswerable)}")
    print("\n| confidence ≥ | answered (share of answerable) | precision |\n|---|---|---|")
    for t, cov, prec in curve[::max(1, len(curve) // 15)]:
        print(f"| {t:.3f} | {cov:.2f} | {prec:.2f} |")

    final = fit_sentence(groups, C, args.objective)
    coef = dict(zip(FEATURES, final.coef_[0]))
    print("\nsentence model weights (largest first):")
    for name, w in sorted(coef.items(), key=lambda kv: -abs(kv[1]))[:15]:
        print(f"  {name:>20} {w:+.3f}")
    if args.write:
        at = [c for c in curve if c[0] >= threshold]
        payload = {
            "about": "Written by bench/reader_train.py; do not edit by hand. Fitted on the dev split only.",
            "fitted_on": {"questions": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                          "dev_questions": len(dev), "hotpot_dev": bool(args.hotpot),
                          "also": [Path(a.partition("=")[0]).name for a in args.also], "modes": modes, "C": C,
                          "objective": args.objective, "precision_target": args.precision,
                          "abstain_target": args.abstain},
            "dev_cv": {"top1_right": round(float(acc), 4), "coverage_at_threshold": round(at[0][1], 4) if at else 0,
                       "precision_at_threshold": round(at[0][2], 4) if at else 0},
            "sentence": {"features": list(FEATURES), "coef": [round(float(w), 5) for w in final.coef_[0]],
                         "intercept": round(float(final.intercept_[0]), 5)},
            "confidence": {"features": list(CONFIDENCE_FEATURES),
                           "coef": [round(float(w), 5) for w in confidence.coef_[0]],
                           "intercept": round(float(confidence.intercept_[0]), 5)},
            "threshold": round(threshold, 4), "related": round(related, 4),
        }
        # The abstention's calibration is bench/abstention_calibrate.py's: refit it on a run of the new weights.
        print("note: the abstention confidence was dropped; refit it with bench/abstention_calibrate.py")
        MODEL_PATH.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
        print(f"\nwrote {MODEL_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
