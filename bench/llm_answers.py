"""The LLM path measured for real: questions of the independent set's test split (--split dev to choose anything
about the LLM path) answered by a model (the embedded Qwen2.5-Coder-1.5B by default, or the workspace's
OpenAI-compatible endpoint), beside the LLM-free reader on the same questions. Prints a table, asserts nothing.

    nice .venv/bin/python bench/llm_answers.py --workspace WS [--questions 30] [--split test|dev] [--provider embedded]
        [--mode mix]

Per path: answer contains a reference (the whole answer), its first sentence does, answers with at least one [n]
the model wrote itself, answers whose every sentence carries a citation that resolves (the model's or one
PaperGraph matched, core.query.reading.grounding), sentences flagged unsupported, seconds per answer (p50 / p95).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from bench.answers import fmt, pct, row  # noqa: E402
from core.eval.metrics import contains_reference  # noqa: E402
from core.library import open_library  # noqa: E402
from core.query.answer import citations_in, strip_markers  # noqa: E402
from core.query.engine import ask  # noqa: E402
from core.query.records import UNSUPPORTED, QueryParams  # noqa: E402
from core.settings.workspace import Workspace  # noqa: E402

QUESTIONS = REPO / "bench" / "qa_corpus" / "questions.jsonl"


def measure(lib, questions: list[dict], mode: str, use_llm: bool) -> dict:
    rows = []
    for k, q in enumerate(questions, 1):
        t = time.perf_counter()
        result = ask(lib, q["question"], QueryParams.from_config(lib.settings.query, mode=mode, use_llm=use_llm),
                     save=False)
        seconds = time.perf_counter() - t
        answer = result.answer
        known = {s.n for s in result.context.sources}
        text = strip_markers(answer.text)
        first = strip_markers(answer.sentences[0].text) if answer.sentences else ""
        written = citations_in(answer.text)
        rows.append({
            "id": q["id"], "seconds": seconds, "answerable": bool(q["answers"]), "abstained": answer.abstained,
            "contains": contains_reference([text], q["answers"]) if q["answers"] else 0.0,
            "first": contains_reference([first], q["answers"]) if q["answers"] else 0.0,
            "model_markers": bool(written) and all(n in known for n in written),
            "all_cited": bool(answer.sentences) and all(s.citations and all(n in known for n in s.citations)
                                                        for s in answer.sentences if strip_markers(s.text)),
            "unsupported": sum(getattr(s, "support", "") == UNSUPPORTED for s in answer.sentences),
            "sentences": len(answer.sentences), "answer": answer.text[:400], "error": result.error})
        print(f"  {k}/{len(questions)} {seconds:.1f} s {'llm' if use_llm else 'reader'}: {answer.text[:100]!r}",
              file=sys.stderr, flush=True)
    answerable = [r for r in rows if r["answerable"]]
    mean = lambda xs: sum(xs) / len(xs) if xs else None  # noqa: E731
    return {"contains": mean([r["contains"] for r in answerable]), "first": mean([r["first"] for r in answerable]),
            "model_markers": mean([float(r["model_markers"]) for r in rows]),
            "all_cited": mean([float(r["all_cited"]) for r in rows]),
            "unsupported": sum(r["unsupported"] for r in rows), "sentences": sum(r["sentences"] for r in rows),
            "p50": pct([r["seconds"] for r in rows], .5), "p95": pct([r["seconds"] for r in rows], .95),
            "rows": rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workspace", required=True)
    ap.add_argument("--questions", type=int, default=30)
    ap.add_argument("--provider", default="embedded", help="embedded, or openai (the workspace's endpoint)")
    ap.add_argument("--mode", default="mix")
    ap.add_argument("--split", default="test", choices=("dev", "test"),
                    help="dev: for choosing anything about the LLM path (grounding, context size); test: to report")
    ap.add_argument("--threads", type=int, default=0, help="the embedded model's threads (0: one per free core; "
                    "NOTES.md: on a loaded machine 1 is faster)")
    ap.add_argument("--json")
    args = ap.parse_args()
    lib = open_library(Workspace(Path(args.workspace)))
    lib.settings.llm.provider = args.provider  # this run only: the workspace's settings file is not touched
    lib.settings.llm.embedded_threads = args.threads
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    split = [r for r in rows if r["split"] == args.split]
    questions = [r for r in split if r["answers"]][:args.questions - args.questions // 10] + \
        [r for r in split if not r["answers"]][:args.questions // 10]
    print(f"{len(questions)} {args.split} questions, mode {args.mode}; load average {os.getloadavg()[0]:.1f}")
    reader = measure(lib, questions, args.mode, use_llm=False)
    llm = measure(lib, questions, args.mode, use_llm=True)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}\n")
    row("path", "answer ⊇ ref", "1st sentence ⊇ ref", "answers with the model's own resolving [n]",
        "answers every sentence cited (resolving)", "sentences flagged unsupported", "p50 s", "p95 s")
    row(*["---"] * 8)
    for name, m in (("LLM-free reader", reader), (f"LLM ({lib.chat_model().name})", llm)):
        row(name, fmt(m["contains"]), fmt(m["first"]), fmt(m["model_markers"]), fmt(m["all_cited"]),
            f"{m['unsupported']} of {m['sentences']}", f"{m['p50']:.1f}", f"{m['p95']:.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"reader": reader, "llm": llm}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
