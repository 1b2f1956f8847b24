"""A run as tables and files: the per-mode summary, the leaderboard across runs, CSV and JSON exports."""
from __future__ import annotations

import csv
import datetime as dt
import io
import json
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from core.eval.runner import MetricSummary, is_paragraph, metric_order, summarise
from core.schema.eval import QuestionResult, RunRecord, run_to_dict
from core.store.base import EvalStore
from core.text.csv_safe import csv_row


def run_name(run: RunRecord) -> str:
    """What a person calls a run: its label and when it started ("baseline · 2025-03-02 14:05"); a run without a
    label is "run of <time>". The id is a hex string nobody can tell apart."""
    when = dt.datetime.fromtimestamp(run.created_at).strftime("%Y-%m-%d %H:%M")
    return f"{run.label} · {when}" if run.label.strip() else f"run of {when}"


def paragraph_answers(results: list[QuestionResult]) -> dict[str, int]:
    """Per mode, how many EM/F1 scores were computed on a paragraph (no short answer, a long answer): those are
    near 0 even when right, and contains_reference is the measure to read."""
    counts: dict[str, int] = {}
    for r in results:
        if "em" in r.scores and r.scores["em"].ok and is_paragraph(r.answer, r.short_answer):
            counts[r.mode] = counts.get(r.mode, 0) + 1
    return counts


def fmt(value: float | None, name: str = "") -> str:
    if value is None:
        return "—"
    return f"{value:.2f} s" if name == "seconds" else f"{value:.3f}"


def summary_markdown(summary: dict[str, dict[str, MetricSummary]]) -> str:
    order = metric_order(summary)
    lines = ["| mode | " + " | ".join(order) + " |", "|---" * (len(order) + 1) + "|"]
    for mode, per in summary.items():
        cells = [fmt(per[n].mean, n) + (f" ({per[n].missing} n/a)" if n in per and per[n].missing and per[n].n else "")
                 if n in per else "—" for n in order]
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


SummaryOf = Callable[[RunRecord], dict[str, dict[str, MetricSummary]]]


def leaderboard_rows(store: EvalStore, set_id: str | None = None,
                     summary_of: SummaryOf | None = None) -> list[dict[str, Any]]:
    """Every finished or partial run × mode with its headline metrics: runs on the same set compare directly.
    `summary_of` lets the page reuse summaries it has cached instead of reading every run's results again."""
    summary_of = summary_of or (lambda run: summarise(store.results(run.id)))
    rows = []
    for run in store.runs(set_id):
        summary = summary_of(run)
        for mode, per in summary.items():
            row = {"run": run_name(run), "run_id": run.id, "set": run.set_name, "status": run.shown_status,
                   "mode": mode, "questions": per["seconds"].n}
            row.update({name: per[name].mean for name in metric_order(summary) if name in per})
            rows.append(row)
    return rows


def results_csv(results: list[QuestionResult]) -> str:
    """One line per question × mode with every score; unreadable or missing scores are empty cells, with why."""
    names = sorted({name for r in results for name in r.scores})
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(csv_row(["question_id", "mode", "answer", "seconds", "llm_calls", "error", *names,
                             *(f"{n} (why missing)" for n in names)]))
    for r in results:
        scores = [r.scores[n].value if n in r.scores and r.scores[n].value is not None else "" for n in names]
        why = [r.scores[n].error if n in r.scores else "" for n in names]
        # every cell: answers, errors and "why missing" notes quote papers and LLM replies
        writer.writerow(csv_row([r.question_id, r.mode, r.answer, f"{r.seconds:.3f}", r.llm_calls, r.error,
                                 *scores, *why]))
    return out.getvalue()


def run_json(store: EvalStore, run: RunRecord, results: list[QuestionResult] | None = None) -> dict[str, Any]:
    """The whole run; pass `results` when they are already loaded."""
    results = store.results(run.id) if results is None else results
    summary = summarise(results)
    return {"run": run_to_dict(run),
            "summary": {mode: {name: asdict(s) for name, s in per.items()} for mode, per in summary.items()},
            "results": [r.to_dict() for r in results],
            "pairwise": store.pairwise(run.id)}


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2)
