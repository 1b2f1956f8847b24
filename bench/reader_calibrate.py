"""Calibrate and time the LLM-free reader (core.query.reader) on bench/papers_qa.jsonl: prints a table, asserts
nothing.

    nice -n 10 .venv/bin/python bench/reader_calibrate.py --workspace /tmp/papers-ws [--split dev,test] [--mode mix]
        [--cache /tmp/reader-cache.pkl]

Calibrate on dev only: the misses are printed for the dev split, never for test (reported, not tuned on).

Each question is retrieved once (context_only), then only the reader runs, so thresholds can be swept in
seconds: answer contains a reference, first sentence contains it, short-answer EM/F1, abstention on the
unanswerable questions (the file's `answerable: false` rows, plus UNANSWERABLE below while it has none), and the
reader's own latency p50/p95.
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from core.eval.metrics import contains_reference, exact_match, token_f1  # noqa: E402
from core.library import open_library  # noqa: E402
from core.query import reader  # noqa: E402
from core.query.answer import extractive_answer  # noqa: E402
from core.query.engine import Embeddings, ask  # noqa: E402
from core.query.records import QueryParams  # noqa: E402
from core.settings.workspace import Workspace  # noqa: E402

# Questions these papers do not answer, in their vocabulary so retrieval finds near misses (dev only).
UNANSWERABLE = [
    "How many GPUs were used to train the Semantic Scholar entity linker?",
    "What is the license fee for commercial use of S2ORC?",
    "Which Nobel laureate reviewed the SPECTER paper?",
    "How many hours did each LongEval annotator sleep?",
    "What year was the first citation graph printed on paper?",
    "What is the boiling point of the molecules in the literature graph?",
    "Which football club sponsors the Allen Institute?",
    "How much did it cost to print the S2ORC corpus?",
    "Who is the mayor of the city where SPECTER was trained?",
    "What percentage of LongEval summaries were written in French?",
]


def pctl(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p * (len(values) - 1))))] if values else 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workspace", required=True)
    ap.add_argument("--split", default="dev")
    ap.add_argument("--mode", default="mix")
    ap.add_argument("--thresholds", default="")
    ap.add_argument("--cache", default="", help="pickle of the retrieved contexts, made on the first run")
    args = ap.parse_args()
    lib = open_library(Workspace(Path(args.workspace)))
    splits = args.split.split(",")
    cache = Path(args.cache) if args.cache else None
    if cache and cache.exists():  # retrieval is what takes the time; the reader's knobs do not change it
        prepared = pickle.loads(cache.read_bytes())
    else:
        prepared = prepare(lib, args.mode)
        if cache:
            cache.write_bytes(pickle.dumps(prepared))
    emb = Embeddings(lib)
    sweep = [float(t) for t in args.thresholds.split(",")] if args.thresholds else [reader.ABSTAIN_BELOW]
    for split in splits:
        rows = [p for p in prepared if split == "all" or p[0].get("split") == split]
        for threshold in sweep:
            reader.ABSTAIN_BELOW = threshold
            evaluate(lib, emb, rows, f"{split} threshold {threshold:.2f}", show=len(sweep) == 1 and split != "test")


def prepare(lib, mode: str) -> list[tuple]:
    """Every question of the file retrieved once: (row, context, retrieval, question vector)."""
    ready = {d.id for d in lib.documents.ready_papers()}
    rows = [json.loads(line) for line in (REPO / "bench" / "papers_qa.jsonl").open()]
    for r in rows:
        r["answerable"] = bool(r.get("answers")) and r.get("type") != "unanswerable" and r.get("answerable", True)
    rows = [r for r in rows if not r["answerable"] or r.get("doc_id") in ready]
    if not any(not r["answerable"] for r in rows):
        rows += [{"id": f"u{k}", "question": q, "answers": [], "answerable": False, "split": "dev"}
                 for k, q in enumerate(UNANSWERABLE)]
    emb = Embeddings(lib)
    prepared = []
    for r in rows:
        res = ask(lib, r["question"], QueryParams.from_config(lib.settings.query, mode=mode, use_llm=False,
                                                               context_only=True), save=False)
        prepared.append((r, res.context, res.retrieval, emb(r["question"])))
    return prepared


def evaluate(lib, emb, prepared: list[tuple], label: str, show: bool) -> None:
    stats = {"contains": 0, "first": 0, "em": 0.0, "f1": 0.0, "answerable": 0, "abstain_u": 0, "u": 0,
             "abstain_a": 0}
    times, misses = [], []
    for r, context, retrieval, qvec in prepared:
        t = time.perf_counter()
        a = extractive_answer(r["question"], context, emb.many, qvec, lib=lib, retrieval=retrieval)
        times.append(time.perf_counter() - t)
        if not r.get("answerable", True):
            stats["u"] += 1
            stats["abstain_u"] += a.abstained
            if not a.abstained:
                misses.append((r["id"], "unanswerable", r["question"], [], a.short_answer, a.score, False,
                               a.sentences[0].text[:140]))
            continue
        stats["answerable"] += 1
        refs = r["answers"]
        hit = contains_reference([a.text, a.short_answer], refs) if not a.abstained else 0.0
        first = contains_reference([a.sentences[0].text], refs) if a.sentences and not a.abstained else 0.0
        stats["contains"] += hit
        stats["first"] += first
        stats["abstain_a"] += a.abstained
        stats["em"] += exact_match(a.short_answer, refs)
        stats["f1"] += token_f1(a.short_answer, refs)
        if not first:
            misses.append((r["id"], r.get("type"), r["question"], refs, a.short_answer, a.score, a.abstained,
                           a.sentences[0].text[:140] if a.sentences else ""))
    n, u = max(stats["answerable"], 1), max(stats["u"], 1)
    print(f"{label}: answerable {stats['answerable']} · contains {stats['contains'] / n:.0%} · "
          f"first sentence {stats['first'] / n:.0%} · short EM {stats['em'] / n:.0%} F1 {stats['f1'] / n:.0%} · "
          f"abstained on answerable {stats['abstain_a']} · unanswerable abstained {stats['abstain_u']}/{stats['u']}"
          f" ({stats['abstain_u'] / u:.0%}) · reader p50 {pctl(times, .5) * 1000:.0f} ms "
          f"p95 {pctl(times, .95) * 1000:.0f} ms")
    if show:
        for m in misses:
            print("  miss", *m, sep=" | ")


if __name__ == "__main__":
    main()
