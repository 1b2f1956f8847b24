"""Saved evaluation runs, as the Evaluate page shows them: the list, each with every mode's mean of every metric
(core.eval.runner.summarise over the stored results, as the page computes it), and one run's per-question rows.

Read-only. A run is started from the Evaluate page or `python -m core eval`; the API does not start one (a run
asks every question in every mode and can take hours with an LLM: a job for the page's background runner)."""
from __future__ import annotations

import datetime as dt
import re

from core.eval.report import run_name
from core.eval.runner import metric_order, summarise
from core.library import Library
from core.schema.eval import QuestionResult, RunRecord
from core.service.errors import invalid, not_found
from core.service.inputs import bounded, clean_text
from core.service.records import EvalRow, EvalRunDetail, EvalRunInfo, MetricMean
from core.store.base import EvalStore

MAX_RUNS = 200
_RUN_ID = re.compile(r"^[0-9a-f]{6,32}$")


def _info(run: RunRecord, results: list[QuestionResult]) -> EvalRunInfo:
    summary = summarise(results)
    order = metric_order(summary)
    means = {mode: {name: MetricMean(None if s.mean is None else round(s.mean, 6), s.n, s.missing)
                    for name in order if (s := per.get(name)) is not None}
             for mode, per in summary.items()}
    created = dt.datetime.fromtimestamp(run.created_at, tz=dt.UTC).isoformat(timespec="seconds")
    return EvalRunInfo(id=run.id, name=run_name(run), label=run.label, question_set=run.set_name,
                       question_set_id=run.set_id, created=created, created_at=run.created_at,
                       status=run.shown_status, modes=list(run.modes), done=run.done, total=run.total,
                       message=run.message, options=dict(run.options), summary=means)


def list_runs(lib: Library, limit: int = 20, question_set: str | None = None) -> list[EvalRunInfo]:
    """The newest `limit` runs first; only those of one question set when `question_set` names it (its name or
    id)."""
    bounded(limit, "limit", 1, MAX_RUNS)
    store = lib.eval_store
    runs = store.runs()
    if question_set is not None:
        wanted = clean_text(question_set, "question set", max_chars=300)
        runs = [r for r in runs if wanted in (r.set_name, r.set_id)]
    return [_info(run, store.results(run.id)) for run in runs[:limit]]


def find_run(store: EvalStore, run_id: object) -> RunRecord:
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id.strip().lower()):
        raise invalid("a run id is the hexadecimal id a run listing gives (GET /api/eval/runs)")
    run = store.get_run(run_id.strip().lower())
    if run is None:
        raise not_found(f"no evaluation run {run_id.strip()[:32]!r} in this workspace")
    return run


def get_run(lib: Library, run_id: str, contexts: bool = False) -> EvalRunDetail:
    """The run and a row per question × mode, in the order they were answered; `contexts` adds the passages each
    answer was given."""
    store = lib.eval_store
    run = find_run(store, run_id)
    results = store.results(run.id)
    qset = store.get_set(run.set_id)
    questions = {q.id: q for q in qset.questions} if qset else {}
    rows = []
    for r in results:
        question = questions.get(r.question_id)
        rows.append(EvalRow(
            question_id=r.question_id, question=question.question if question else "",
            references=list(question.answers) if question else [], mode=r.mode, answer=r.answer,
            short_answer=r.short_answer, scores={name: s.value for name, s in r.scores.items()},
            missing={name: s.error for name, s in r.scores.items() if s.value is None},
            seconds=round(r.seconds, 4), llm_calls=r.llm_calls, error=r.error,
            retrieved_chunk_ids=list(r.retrieved_chunk_ids), evidence_matches=list(r.evidence_matches),
            contexts=list(r.contexts) if contexts else None))
    return EvalRunDetail(run=_info(run, results), rows=rows)
