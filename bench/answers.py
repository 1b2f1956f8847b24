"""Answer-quality benchmark on our own question set over the shared papers: prints tables, asserts nothing.

    .venv/bin/python bench/answers.py [--workspace DIR] [--split dev|test|all] [--modes naive,mix] [--json OUT]
    .venv/bin/python bench/answers.py hotpot [--workspace DIR] [--questions N] [--modes …] [--json OUT]

papers (the default): builds (or, with --workspace, reuses) a workspace holding the ten PDFs of
../shared/corpus/papers through the product path (documents.add_pdf, ingest.process_queue, then the graph stage's
process_graph_queue: LLM-free unless the workspace says otherwise), then asks bench/papers_qa.jsonl in every mode
the workspace offers (routes.available_modes), LLM-free, one mode after another after a warm-up, and reports:
  - evidence recall@1 / @5 and MRR: ranks of the reference passages in the retrieved chunks (metrics.passage_hits)
  - answer contains reference: a reference answer, normalised, inside the answer text as whole words; and inside
    its first sentence alone (what a reader sees first)
  - short-answer EM / F1 on `answer.short_answer` when the reader gives one, else on the whole answer (the table
    says how many came from each)
  - abstention precision / recall on the unanswerable questions (`answer.abstained`; "n/a" without that flag)
  - answer latency p50 / p95: the wall time of core.query.engine.ask without an LLM
With --split all the tables come per split first (dev: what the reader's weights and abstention threshold were
calibrated on, test: held out), then for all questions.
hotpot: the same answer metrics on ../shared/corpus/hotpotqa (indexed as bench/query.py does: one document per
paragraph, LLM-free graph), with complete-evidence recall@5 instead of the single-passage ranks.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from bench.common import bench_workspace, choose_modes  # noqa: E402
from bench.common import percentile as pct  # noqa: E402
from bench.question_sets import SETS, build_papers, load_questions, sample_questions  # noqa: E402
from core.eval.metrics import (  # noqa: E402
    complete_at_k,
    contains_reference,
    exact_match,
    passage_hits,
    recall_at_k,
    reciprocal_rank,
    token_f1,
)
from core.library import Library, open_library  # noqa: E402
from core.query.answer import strip_markers  # noqa: E402
from core.query.engine import ask  # noqa: E402
from core.query.records import QueryParams, QueryResult  # noqa: E402
from core.schema.records import DocStatus  # noqa: E402

HOTPOT = REPO.parent / "shared" / "corpus" / "hotpotqa"
WARM_UP = "Which datasets are used for evaluation?"


def row(*cells) -> None:
    print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)


def mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def fmt(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


# ---------------------------------------------------------------------------------------------- one answer
@dataclass
class Scored:
    """One question asked in one mode."""

    id: str
    mode: str
    type: str
    answerable: bool
    split: str
    seconds: float
    hits: list[int | None] = field(default_factory=list)
    contains: float = 0.0
    contains_first: float = 0.0
    short_source: str = ""  # "reader": answer.short_answer; "whole answer": the fallback
    short: str = ""
    em: float = 0.0
    f1: float = 0.0
    abstained: bool | None = None  # None: the answer record has no such flag
    confidence: float | None = None  # the answer's: that what it gives (a statement or an abstention) is right
    best_confidence: float | None = None  # an extractive abstention's P(best sentence right) (bench/risk_coverage)
    best_contains: float = 0.0  # its most probable sentence (stated, or the first related one) holds a reference
    answer: str = ""
    error: str = ""
    reader: str = ""  # which reader answered (Answer.reader)
    short_contains: float = 0.0  # the bold short answer holds a reference
    model_odds: float | None = None  # select: the model's odds at its decision (bench/select_calibrate.py)
    score: float = 0.0  # the extractive probability of the answer's sentence
    # A stated answer: every sentence carries a citation (write's grounding adds one it can find); None: abstained.
    every_sentence_cited: bool | None = None


def score(result: QueryResult, q: dict, seconds: float, evidence: bool = True) -> Scored:
    answer = result.answer
    text = strip_markers(answer.text) if answer else ""
    first = strip_markers(answer.sentences[0].text) if answer and answer.sentences else text
    short = getattr(answer, "short_answer", "") or ""
    out = Scored(id=q["id"], mode=str(result.mode.value), type=q.get("type", ""), answerable=bool(q["answers"]),
                 split=q.get("split", ""), seconds=seconds, answer=text[:300], error=result.error,
                 abstained=getattr(answer, "abstained", None) if answer else None,
                 confidence=getattr(answer, "confidence", None) if answer else None,
                 best_confidence=getattr(answer, "best_confidence", None) if answer else None,
                 reader=getattr(answer, "reader", "") if answer else "",
                 model_odds=getattr(answer, "model_odds", None) if answer else None,
                 score=getattr(answer, "score", 0.0) if answer else 0.0)
    if out.abstained is not None:
        out.abstained = bool(out.abstained)
    if answer and not out.abstained and answer.sentences:
        out.every_sentence_cited = all(s.cited for s in answer.sentences)
    if not q["answers"]:
        return out
    if evidence:
        out.hits = passage_hits(q["evidence"], [c.hit.chunk.text for c in result.retrieval.chunks])
    out.contains = contains_reference([text], q["answers"])
    out.contains_first = contains_reference([first], q["answers"])
    best = answer.sentences[1] if answer and answer.abstained and len(answer.sentences) > 1 else None
    out.best_contains = contains_reference([strip_markers(best.text)], q["answers"]) if best else out.contains_first
    out.short_contains = contains_reference([short], q["answers"]) if short else 0.0
    out.short_source = "reader" if short else "whole answer"
    out.short = short or text
    out.em = exact_match(out.short, q["answers"])
    out.f1 = token_f1(out.short, q["answers"])
    return out


def run_mode(lib: Library, mode: str, questions: list[dict], evidence: bool = True,
             reader: str = "extractive", results_first: int | None = None) -> list[Scored]:
    """`reader`: extractive (LLM-free) | select | write | auto (the reading model decides). `results_first`:
    QueryParams.results_first (None: its default)."""
    scored = []
    for q in questions:
        params = QueryParams.from_config(lib.settings.query, mode=mode, use_llm=reader != "extractive",
                                         reader=reader, results_first=results_first)
        t = time.perf_counter()
        result = ask(lib, q["question"], params, save=False)
        scored.append(score(result, q, time.perf_counter() - t, evidence))
    return scored


# ---------------------------------------------------------------------------------------------- summaries
def summarise(mode: str, scored: list[Scored]) -> dict:
    answerable = [s for s in scored if s.answerable]
    unanswerable = [s for s in scored if not s.answerable]
    hits = [s.hits for s in answerable if s.hits]
    flags = [s.abstained for s in scored]
    has_flag = bool(scored) and all(f is not None for f in flags)
    abstained = [s for s in scored if s.abstained]
    right = [s for s in abstained if not s.answerable]
    seconds = [s.seconds * 1000 for s in scored]
    return {
        "mode": mode,
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "recall@1": mean([recall_at_k(h, 1) for h in hits]),
        "recall@5": mean([recall_at_k(h, 5) for h in hits]),
        "complete@5": mean([complete_at_k(h, 5) for h in hits]),
        "mrr": mean([reciprocal_rank(h) for h in hits]),
        "contains": mean([s.contains for s in answerable]),
        "contains_first_sentence": mean([s.contains_first for s in answerable]),
        "short_em": mean([s.em for s in answerable]),
        "short_f1": mean([s.f1 for s in answerable]),
        "short_from_reader": sum(1 for s in answerable if s.short_source == "reader"),
        "abstention_flag": has_flag,
        "abstained": len(abstained),
        "abstention_precision": (len(right) / len(abstained) if abstained else None) if has_flag else None,
        "abstention_recall": (len(right) / len(unanswerable) if unanswerable else None) if has_flag else None,
        "false_abstentions": sum(1 for s in abstained if s.answerable) if has_flag else None,
        # What a researcher is told as an answer: stated (not abstained) answers whose first sentence holds a
        # reference, over all stated ones (an unanswerable question answered is wrong); and the share of the
        # answerable questions that got a stated answer.
        "stated_precision": mean([float(s.answerable and s.contains_first > 0) for s in scored if not s.abstained]),
        "coverage": mean([float(not s.abstained) for s in answerable]),
        "by_type": {t: mean([s.contains for s in answerable if s.type == t])
                    for t in sorted({s.type for s in answerable})},
        "p50_ms": pct(seconds, .5),
        "p95_ms": pct(seconds, .95),
        "errors": sum(1 for s in scored if s.error),
    }


def short_source(summary: dict) -> str:
    n, k = summary["answerable"], summary["short_from_reader"]
    if k == n:
        return "reader (all)"
    if k == 0:
        return "whole answer (no short answer given)"
    return f"reader {k}, whole answer {n - k}"


def print_tables(summaries: list[dict], with_evidence: bool = True) -> None:
    print()
    head = ["mode", "answerable"]
    if with_evidence:
        head += ["evidence R@1", "R@5", "MRR"]
    head += ["answer ⊇ ref", "1st sentence ⊇ ref", "short EM", "short F1", "short answer from", "p50 ms", "p95 ms"]
    row(*head)
    row(*["---"] * len(head))
    for s in summaries:
        cells = [s["mode"], s["answerable"]]
        if with_evidence:
            cells += [fmt(s["recall@1"]), fmt(s["recall@5"]), fmt(s["mrr"])]
        cells += [fmt(s["contains"]), fmt(s["contains_first_sentence"]), fmt(s["short_em"]), fmt(s["short_f1"]),
                  short_source(s), f"{s['p50_ms']:.0f}", f"{s['p95_ms']:.0f}"]
        row(*cells)
    if any(s["unanswerable"] for s in summaries):
        print()
        row("mode", "unanswerable", "abstained (all questions)", "abstention precision", "abstention recall",
            "false abstentions (answerable)", "stated answers right", "answerable answered")
        row(*["---"] * 8)
        for s in summaries:
            if not s["abstention_flag"]:
                row(s["mode"], s["unanswerable"], "n/a", "n/a", "n/a", "n/a (no `abstained` flag on the answer)",
                    "n/a", "n/a")
                continue
            precision = fmt(s["abstention_precision"]) if s["abstained"] else "n/a (none abstained)"
            row(s["mode"], s["unanswerable"], s["abstained"], precision, fmt(s["abstention_recall"]),
                s["false_abstentions"], fmt(s["stated_precision"]), fmt(s["coverage"]))
    types = sorted({t for s in summaries for t in s["by_type"]})
    if len(types) > 1:
        print("\nanswer contains reference, by question type:\n")
        row("mode", *types)
        row(*["---"] * (len(types) + 1))
        for s in summaries:
            row(s["mode"], *[fmt(s["by_type"].get(t)) for t in types])


def write_json(path: str | None, payload: dict) -> None:
    if path:
        Path(path).write_text(json.dumps(payload, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
        print(f"\nwrote {path}")


def warm_up(lib: Library, modes: list[str]) -> None:
    """Embedding model, spaCy, FTS5 and Chroma segments loaded before any clock starts."""
    lib.embedder()
    for mode in modes:
        ask(lib, WARM_UP, QueryParams.from_config(lib.settings.query, mode=mode, use_llm=False), save=False)


# ---------------------------------------------------------------------------------------------- papers
def papers(args) -> int:
    folder, manifest, path = SETS[args.set]
    if not folder.exists():
        hint = " (python bench/qa_corpus/build.py [--manifest bench/fresh_corpus/manifest.json] rebuilds it)" \
            if args.set in ("qa", "fresh") else ""
        print(f"{folder} is missing{hint}", file=sys.stderr)
        return 2
    lib = open_library(bench_workspace(args.workspace, "bench-answers-"))
    build_papers(lib, folder, manifest)
    questions = load_questions(args.split, path)
    questions = sample_questions(questions, args.questions, args.every_unanswerable, types=args.types)
    known = {d.id for d in lib.documents.list() if d.status == DocStatus.READY}
    ids = lambda q: q["doc_id"] if isinstance(q["doc_id"], list) else [q["doc_id"]]  # noqa: E731
    absent = sorted({str(q["paper"]) for q in questions if q["doc_id"] and not set(ids(q)) <= known})
    if absent:
        print(f"warning: papers of the set not ready in this workspace: {', '.join(absent)}")
    modes = choose_modes(lib, args.modes)
    n_ans = sum(1 for q in questions if q["answers"])
    print(f"{len(questions)} questions ({n_ans} answerable, {len(questions) - n_ans} unanswerable; split "
          f"{args.split}) × modes {', '.join(modes)}; reader {args.reader}")
    warm_up(lib, modes)
    if args.trace:
        from bench.select_trace import record

        write_trace = record(args.trace)
    if args.state_all:
        from bench.select_trace import state_all

        state_all()
    summaries, per_question, by_split = [], [], {}
    t = time.perf_counter()
    for mode in modes:
        scored = run_mode(lib, mode, questions, reader=args.reader, results_first=args.results_first)
        summaries.append(summarise(mode, scored))
        per_question += [s.__dict__ for s in scored]
        for split in sorted({s.split for s in scored} - {""}) if args.split == "all" else []:
            by_split.setdefault(split, []).append(summarise(mode, [s for s in scored if s.split == split]))
        print(f"  {mode}: {len(scored)} answers", file=sys.stderr, flush=True)
    print(f"asked in {time.perf_counter() - t:.0f} s")
    for split, split_summaries in by_split.items():  # dev (calibrated on) and test (reported), then all
        print(f"\n## split {split}")
        print_tables(split_summaries)
    print(f"\n## split {args.split}")
    print_tables(summaries)
    if args.trace:
        write_trace()
    write_json(args.json, {"set": str(path.name), "split": args.split, "workspace": str(lib.workspace.root),
                           "summaries": summaries, "by_split": by_split, "questions": per_question})
    return 0


# ---------------------------------------------------------------------------------------------- hotpot
def hotpot(args) -> int:
    if not HOTPOT.exists():
        print(f"{HOTPOT} is missing", file=sys.stderr)
        return 2
    from bench.query import index_text_documents

    ws = bench_workspace(args.workspace, "bench-answers-hotpot-")
    settings = ws.settings(apply_environment=False)
    if settings.graph.extractor != "spacy" or settings.llm.provider != "none":
        settings.graph.extractor, settings.llm.provider = "spacy", "none"  # the LLM-free graph bench/query.py builds
        ws.save_settings(settings)
    lib = open_library(ws)
    corpus = [json.loads(line) for line in (HOTPOT / "corpus.jsonl").read_text().splitlines() if line.strip()]
    rows = [json.loads(line) for line in (HOTPOT / "qa.jsonl").read_text().splitlines() if line.strip()]
    # The first half is dev (what the reader's comparison and bridge answers were looked at on), the rest test.
    questions = [{"id": str(r.get("id", n)), "question": r["question"], "answers": r["answers"],
                  "evidence": r.get("evidence", []),
                  "type": "yes/no" if {a.lower() for a in r["answers"]} <= {"yes", "no"} else r.get("type", ""),
                  "split": "dev" if n <= len(rows) // 2 else "test"}
                 for n, r in enumerate(rows[:args.questions], 1)]
    t = time.perf_counter()
    index_text_documents(lib, [(d["title"], d["text"]) for d in corpus])
    print(f"workspace {ws.root}: {len(corpus)} paragraphs, graph {lib.graph.counts()}, "
          f"ready in {time.perf_counter() - t:.0f} s (0 when reused)")
    modes = choose_modes(lib, args.modes)
    print(f"{len(questions)} HotpotQA questions × modes {', '.join(modes)}; answers LLM-free")
    warm_up(lib, modes)
    summaries, per_question = [], []
    for mode in modes:
        scored = run_mode(lib, mode, questions)
        per_question += [s.__dict__ for s in scored]
        for split in ("dev", "test", "all"):
            part = [s for s in scored if split == "all" or s.split == split]
            compared = [s for s in part if s.type in ("comparison", "yes/no")]
            summaries.append({**summarise(mode, part), "split": split, "compared": len(compared),
                              "compared_right": mean([float(s.f1 >= 0.5) for s in compared])})
    print()
    row("mode", "split", "questions", "complete@5", "answer ⊇ ref", "1st sentence ⊇ ref", "short EM", "short F1",
        "yes/no + comparison: short answer F1 ≥ .5", "p50 ms", "p95 ms")
    row(*["---"] * 11)
    for s in summaries:
        row(s["mode"], s["split"], s["answerable"], fmt(s["complete@5"]), fmt(s["contains"]),
            fmt(s["contains_first_sentence"]), fmt(s["short_em"]), fmt(s["short_f1"]),
            f"{fmt(s['compared_right'])} of {s['compared']}", f"{s['p50_ms']:.0f}", f"{s['p95_ms']:.0f}")
    write_json(args.json, {"set": "hotpotqa", "workspace": str(ws.root), "summaries": summaries,
                           "questions": per_question})
    return 0


def main() -> int:
    def common(default):  # on the command and on the sub-command, whichever side of `hotpot` they are given
        options = argparse.ArgumentParser(add_help=False)
        options.add_argument("--workspace", default=default,
                             help="workspace folder to build or reuse (default: a new temporary one)")
        options.add_argument("--modes", default=default,
                             help="comma-separated (default: every mode the workspace offers)")
        options.add_argument("--json", default=default, help="write summaries and per-question scores to this file")
        return options

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                     parents=[common(None)])
    parser.add_argument("--split", choices=["dev", "test", "all"], default="all")
    parser.add_argument("--reader", choices=["extractive", "select", "write", "auto"], default="extractive",
                        help="extractive: LLM-free; select / write / auto: with the reading model (the configured "
                             "LLM, else the embedded one)")
    parser.add_argument("--questions", type=int, default=0, help="a fixed random sample of N questions (0: all)")
    parser.add_argument("--results-first", type=int, default=None,
                        help="QueryParams.results_first: places a results/conclusions passage moves up for a yes/no "
                             "or numeric question (default: its default; 0: retrieval's order)")
    parser.add_argument("--every-unanswerable", action="store_true",
                        help="with --questions: N answerable questions sampled, and every unanswerable one")
    parser.add_argument("--types", default="",
                        help="comma-separated question types to ask (e.g. yesno,unanswerable); all by default")
    parser.add_argument("--trace", default="",
                        help="select: write each model call (shown sentences, reply, first-token odds, prompt "
                             "tokens, seconds) to this JSON file, for refitting the decision offline")
    parser.add_argument("--state-all", action="store_true",
                        help="select: state every answer the model chooses (calibration thresholds at 0), for "
                             "bench/select_calibrate.py to see the right and wrong ones the threshold would refuse")
    parser.add_argument("--set", choices=["papers", "qa", "fresh"], default="papers",
                        help="papers: bench/papers_qa.jsonl on the ten shared papers (the regression set); qa: the "
                             "independent set of bench/qa_corpus on its 43 papers")
    parser.set_defaults(func=papers)
    sub = parser.add_subparsers(dest="what")
    p = sub.add_parser("hotpot", parents=[common(argparse.SUPPRESS)],
                       help="answer metrics on ../shared/corpus/hotpotqa")
    p.add_argument("--questions", type=int, default=100)
    p.set_defaults(func=hotpot)
    args = parser.parse_args()
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
