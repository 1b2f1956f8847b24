"""Evaluation benchmark on HotpotQA: prints the per-mode table, asserts nothing.

    .venv/bin/python bench/eval.py [--workspace DIR] [--questions N] [--modes naive,local,global,hybrid,mix]
                                   [--llm-url URL --llm-model NAME] [--judge]

Indexes ../shared/corpus/hotpotqa/corpus.jsonl (994 paragraphs, one document each, LLM-free graph; a workspace
given with --workspace is reused), keeps qa.jsonl as a question set, and runs it through `core.eval.run_eval`
exactly as the Evaluate page and `python -m core eval` do: per mode EM, F1, Recall@5/10, complete@10, MRR,
NDCG@10, evidence-in-context, RAGAS's non-LLM metrics and seconds per question. Modes run one after another
(not side by side) after a warm-up, so seconds per question compare fairly. Without --llm-url the answers are
the LLM-free extractive ones; with it, answers (and, with --judge, RAGAS's judged metrics) come from that
OpenAI-compatible endpoint.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from bench.common import bench_workspace  # noqa: E402
from bench.query import HOTPOT, MODES, index_text_documents  # noqa: E402
from core.eval.questions import parse_question_set  # noqa: E402
from core.eval.report import summary_markdown  # noqa: E402
from core.eval.runner import EvalOptions, run_eval, summarise  # noqa: E402
from core.library import open_library  # noqa: E402
from core.query.engine import ask  # noqa: E402
from core.query.records import QueryParams  # noqa: E402

HEADLINE = ("em", "f1", "recall@5", "recall@10", "complete@10", "mrr", "ndcg@10", "evidence_in_context")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspace")
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--llm-url", help="an OpenAI-compatible endpoint for answers (default: LLM-free)")
    parser.add_argument("--llm-model", default="")
    parser.add_argument("--embedded", action="store_true", help="answers by the opt-in embedded LLM (slow)")
    parser.add_argument("--answer-style", default="short", choices=["short", "paragraphs"],
                        help="with an LLM: short answers are what EM/F1 against HotpotQA's references can score")
    parser.add_argument("--judge", action="store_true", help="RAGAS judged metrics with that LLM")
    parser.add_argument("--no-ragas", action="store_true")
    args = parser.parse_args()
    if not HOTPOT.exists():
        print(f"{HOTPOT} is missing", file=sys.stderr)
        return 2
    ws = bench_workspace(args.workspace, "bench-eval-")
    root = ws.root
    settings = ws.settings(apply_environment=False)
    if args.llm_url:
        settings.llm.provider, settings.llm.base_url, settings.llm.model = "openai", args.llm_url, args.llm_model
    elif args.embedded:
        settings.llm.provider = "embedded"
    else:
        settings.llm.provider = "none"
    settings.graph.extractor = "spacy"  # the graph stays the LLM-free one whatever answers the questions
    ws.save_settings(settings)
    use_llm = settings.llm.provider != "none"
    lib = open_library(ws)
    import json

    corpus = [json.loads(line) for line in (HOTPOT / "corpus.jsonl").read_text().splitlines() if line.strip()]
    t = time.perf_counter()
    index_text_documents(lib, [(d["title"], d["text"]) for d in corpus])
    print(f"workspace {root}: {len(corpus)} paragraphs, graph {lib.graph.counts()}, "
          f"ready in {time.perf_counter() - t:.0f} s (0 when reused)")
    questions = parse_question_set((HOTPOT / "qa.jsonl").read_bytes(), "qa.jsonl")[:args.questions]
    store = lib.eval_store
    qset = store.save_set("hotpotqa-bench", questions, source="qa.jsonl")
    modes = args.modes.split(",")
    # Load the embedding model and indexes before the clock starts (an LLM, if any, loads with the first answer).
    ask(lib, "warm-up: which models are compared?", QueryParams.from_config(lib.settings.query, use_llm=False),
        save=False)
    options = EvalOptions(modes=modes, k=10, use_llm=use_llm, ragas=not args.no_ragas, ragas_judge=args.judge,
                          parallel_modes=False, answer_style=args.answer_style)
    t = time.perf_counter()
    def progress(p) -> None:
        eta = f", about {p.eta_s:.0f} s left" if p.eta_s is not None else ""
        print(f"\r[{p.fraction:4.0%}] {p.message}{eta}   ", end="", file=sys.stderr, flush=True)

    outcome = run_eval(lib, qset, options, label="bench/eval.py", on_progress=progress)
    print(file=sys.stderr)
    wall = time.perf_counter() - t
    summary = summarise(outcome.results)
    print(f"\n{outcome.run.done} of {outcome.run.total} answers ({len(questions)} questions × {len(modes)} modes, "
          f"{outcome.run.status}) in {wall:.0f} s; run {outcome.run.id} "
          f"(answers: {lib.chat_model().name + ', ' + args.answer_style if use_llm else 'extractive, LLM-free'})"
          + (f"; {outcome.judge_note}" if outcome.judge_note else ""))
    print()
    cols = [c for c in HEADLINE]
    print("| mode | " + " | ".join(cols) + " | s/question |")
    print("|---" * (len(cols) + 2) + "|")
    for mode, per in summary.items():
        cells = [f"{per[c].mean:.3f}" if c in per and per[c].mean is not None else "—" for c in cols]
        print(f"| {mode} | " + " | ".join(cells) + f" | {per['seconds'].mean:.2f} |")
    print("\nEvery metric:\n")
    print(summary_markdown(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
