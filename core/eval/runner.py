"""A run: every question of a set through every chosen mode, scored, saved question by question.

Each question goes through the modes together (`compare`: keywords once, modes concurrently), then its answers
are scored: answer and retrieval metrics always, RAGAS's non-LLM metrics always, RAGAS's LLM metrics when a
judge is configured. Progress, the estimate of time left and cancelling work the same from the page (a
background thread) and the CLI; a cancel request is a flag in SQLite, so the page can stop a CLI run too.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from core.eval import metrics as m
from core.library import Library
from core.query.answer import ANSWER_STYLES, strip_markers
from core.query.engine import QueryError, compare
from core.query.records import QueryParams, QueryResult
from core.query.routes import check_available
from core.schema.eval import CANCELLED, DONE, FAILED, EvalQuestion, QuestionResult, QuestionSet, RunRecord, Score
from core.schema.modes import Mode
from core.store.base import EvalStore

log = logging.getLogger(__name__)

ANSWER_METRICS = ("em", "f1", "contains_reference")
NO_REFERENCE = "no reference answer"  # the same words as RAGAS's answer metrics give
PARAGRAPH_WORDS = 20  # an answer longer than this, with no short answer, is a paragraph to EM and F1


def retrieval_metric_names(k: int) -> tuple[str, ...]:
    ks = sorted({5, k})
    return (*(f"recall@{x}" for x in ks), f"complete@{k}", "mrr", f"ndcg@{k}", "evidence_in_context")


@dataclass
class EvalOptions:
    modes: list[str]  # Mode names, as stored with the run
    k: int = 10  # Recall@5 is always reported too
    use_llm: bool = True  # answer with the configured LLM; False (or no LLM): the extractive answer
    ragas: bool = True  # RAGAS's non-LLM metrics
    ragas_judge: bool = True  # RAGAS's LLM metrics, when the configured LLM can judge
    rerank: bool | None = None  # None: the workspace's query settings
    bm25: bool | None = None
    top_k: int | None = None
    chunk_top_k: int | None = None  # None: at least k, so Recall@k sees k passages
    limit: int = 0  # only the first N questions (0: all)
    # "short" asks the LLM for the answer alone (a few words), what EM/F1 against short references can score;
    # "paragraphs" is the Ask page's answer. The extractive (LLM-free) answer is the same either way.
    answer_style: str = "paragraphs"
    # Modes of one question run concurrently (an LLM's latency overlaps); False times each mode alone, for
    # seconds-per-question figures a benchmark can compare.
    parallel_modes: bool = True

    def check(self) -> None:
        """Raises ValueError for options no run can use, before anything is saved."""
        if not self.modes:
            raise ValueError("choose at least one mode")
        for mode in self.modes:
            Mode(mode)  # an unknown name raises ValueError, with the modes to choose from
        if self.k < 1:
            raise ValueError(f"k (of Recall@k, complete@k, NDCG@k) must be at least 1 (got {self.k})")
        if self.answer_style not in ANSWER_STYLES:
            raise ValueError(f"answer style must be one of {', '.join(ANSWER_STYLES)}, not {self.answer_style!r}")
        if self.limit < 0:
            raise ValueError(f"the question limit cannot be negative (got {self.limit}); 0 asks every question")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> EvalOptions:
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class Progress:
    done: int
    total: int
    elapsed_s: float
    message: str = ""

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0

    @property
    def eta_s(self) -> float | None:
        """Time left at the pace so far; None before the first question has finished."""
        return self.elapsed_s / self.done * (self.total - self.done) if self.done else None


ProgressFn = Callable[[Progress], None]


@dataclass
class RunOutcome:
    run: RunRecord
    results: list[QuestionResult] = field(default_factory=list)
    judge_note: str = ""  # why the RAGAS LLM metrics did not run, when they did not


def query_params(lib: Library, options: EvalOptions) -> QueryParams:
    chunk_top_k = options.chunk_top_k or max(lib.settings.query.chunk_top_k, options.k)
    return QueryParams.from_config(lib.settings.query, top_k=options.top_k, chunk_top_k=chunk_top_k,
                                   rerank=options.rerank, bm25=options.bm25, use_llm=options.use_llm,
                                   answer_style=options.answer_style)


def short_answer_of(result: QueryResult) -> str:
    # Answer.short_answer is being added to core/query/records.py; until it lands there is none.
    return (getattr(result.answer, "short_answer", "") or "").strip() if result.answer else ""


def scored_text(answer: str, short_answer: str) -> str:
    """What EM and F1 compare with the references: the short answer when there is one, else the answer."""
    return short_answer or answer


def is_paragraph(answer: str, short_answer: str) -> bool:
    """True when EM and F1 were computed on a paragraph: near 0 however right it is (read contains_reference)."""
    return not short_answer and len(strip_markers(answer).split()) > PARAGRAPH_WORDS


def score_answer(question: EvalQuestion, result: QueryResult, k: int) -> tuple[dict[str, Score], list[dict]]:
    """Answer and retrieval metrics of one mode's result (a metric with nothing to measure against is None),
    and how each reference passage was found (evidence_matches)."""
    scores: dict[str, Score] = {}
    answer = strip_markers(result.answer.text) if result.answer else ""
    short = short_answer_of(result)
    text = scored_text(answer, short)
    for name, fn in (("em", m.exact_match), ("f1", m.token_f1)):
        scores[name] = Score(fn(text, question.answers)) if question.answers else Score(None, NO_REFERENCE)
    scores["contains_reference"] = (Score(m.contains_reference([answer, short], question.answers))
                                    if question.answers else Score(None, NO_REFERENCE))
    if not question.evidence:
        for name in retrieval_metric_names(k):
            scores[name] = Score(None, "no reference passages")
        return scores, []
    found = m.passage_matches(question.evidence, [c.hit.chunk.text for c in result.retrieval.chunks])
    hits = [rank for rank, _ in found]
    for x in sorted({5, k}):
        scores[f"recall@{x}"] = Score(m.recall_at_k(hits, x))
    scores[f"complete@{k}"] = Score(m.complete_at_k(hits, k))
    scores["mrr"] = Score(m.reciprocal_rank(hits))
    scores[f"ndcg@{k}"] = Score(m.ndcg_at_k(hits, k))
    in_context = m.evidence_rules(question.evidence, [s.text for s in result.context.sources])
    scores["evidence_in_context"] = Score(sum(1 for r in in_context if r) / len(in_context))
    matches = [{"retrieved": rank, "retrieved_rule": rule, "context_rule": ctx}
               for (rank, rule), ctx in zip(found, in_context)]
    return scores, matches


def run_eval(lib: Library, qset: QuestionSet, options: EvalOptions, *, resume: RunRecord | None = None,
             on_progress: ProgressFn | None = None, label: str = "", store: EvalStore | None = None,
             on_start: Callable[[RunRecord], None] | None = None) -> RunOutcome:
    """Runs (or resumes) an evaluation; returns when it is done, cancelled or failed — never half-saved."""
    store = store or lib.eval_store
    options.check()
    if resume is None:  # a resumed run keeps its modes; one that cannot run now retrieves nothing, noted
        check_available(lib, options.modes)
    questions = qset.questions[:options.limit] if options.limit else list(qset.questions)
    total = len(questions) * len(options.modes)
    if resume is not None:
        run = resume
        store.set_status(run.id, "running", "resumed")
        done_pairs = store.done_pairs(run.id)
    else:
        run = store.create_run(qset, options.modes, options.to_dict(), total, label=label)
        done_pairs = set()
    if on_start:
        on_start(run)
    params = query_params(lib, options)
    judge_note = _judge_note(lib, options)
    if judge_note:
        store.touch(run.id, judge_note)
    cancel = threading.Event()
    done = len(done_pairs)
    started = time.perf_counter()
    fresh = 0  # units finished in this process: the pace an estimate can trust
    try:
        for question in questions:
            modes = [mode for mode in options.modes if (question.id, mode) not in done_pairs]
            if not modes:
                continue
            if store.cancel_requested(run.id):
                cancel.set()
                store.set_status(run.id, CANCELLED, f"cancelled after {done} of {total}")
                return RunOutcome(store.get_run(run.id), store.results(run.id), judge_note)
            for result in _evaluate_question(lib, question, modes, params, options, judge_note, cancel):
                done += 1
                fresh += 1
                store.save_result(run.id, result, done)
            if on_progress:
                elapsed = time.perf_counter() - started
                on_progress(Progress(fresh, fresh + (total - done), elapsed, f"{done} of {total}: {question.id}"))
    except Exception as exc:  # a bug or a dead store: keep what was saved and say why the run stopped
        log.exception("evaluation run %s failed", run.id)
        store.set_status(run.id, FAILED, f"{type(exc).__name__}: {exc}")
        raise
    store.set_status(run.id, DONE, judge_note)
    return RunOutcome(store.get_run(run.id), store.results(run.id), judge_note)


def _judge_note(lib: Library, options: EvalOptions) -> str:
    if not options.ragas_judge:
        return ""
    from core.eval.ragas_scores import ragas_judge_available

    reason = ragas_judge_available(lib)
    return f"RAGAS LLM metrics skipped: {reason}" if reason else ""


def _evaluate_question(lib: Library, question: EvalQuestion, modes: list[str], params: QueryParams,
                       options: EvalOptions, judge_note: str, cancel: threading.Event) -> list[QuestionResult]:
    t = time.perf_counter()
    try:
        if options.parallel_modes:
            results = compare(lib, question.question, modes, params, save_history=False)
        else:
            results = {}
            for mode in modes:
                results.update(compare(lib, question.question, [mode], params, save_history=False))
    except (QueryError, ValueError) as exc:
        return [QuestionResult(question.id, mode, "", [], [], {}, time.perf_counter() - t, error=str(exc))
                for mode in modes]
    out: list[QuestionResult] = []
    for mode, result in results.items():
        scores, matches = score_answer(question, result, options.k)
        out.append(QuestionResult(
            question_id=question.id, mode=mode,
            answer=result.answer.text if result.answer else "",
            # In ranking order ([1] first), not the context's strongest-at-both-ends placement: RAGAS's context
            # precision rates the ranking, and the drill-down numbers them as the answer cites them.
            contexts=[s.text for s in sorted(result.context.sources, key=lambda s: s.n)],
            retrieved_chunk_ids=[c.id for c in result.retrieval.chunks],
            scores=scores, seconds=result.timings.get("total_s", 0.0), llm_calls=result.llm_calls,
            llm_free=list(result.llm_free), error=result.error, short_answer=short_answer_of(result),
            evidence_matches=matches))
    if options.ragas or (options.ragas_judge and not judge_note):
        _add_ragas(lib, question, out, options, judge_note, cancel)
    return out


def _add_ragas(lib: Library, question: EvalQuestion, results: list[QuestionResult], options: EvalOptions,
               judge_note: str, cancel: threading.Event) -> None:
    from core.eval.ragas_scores import RagasSample, score_llm, score_non_llm

    samples = [RagasSample(question=question.question, answer=strip_markers(r.answer), contexts=r.contexts,
                           references=question.answers, reference_contexts=question.evidence) for r in results]
    if options.ragas:
        for result, scores in zip(results, score_non_llm(samples)):
            result.scores.update(scores)
    if options.ragas_judge and not judge_note:
        for result, scores in zip(results, score_llm(lib, samples, cancel=cancel)):
            result.scores.update(scores)


# ---------------------------------------------------------------------------------------------- summaries
@dataclass
class MetricSummary:
    mean: float | None  # over the questions where the metric could be computed
    n: int  # how many it was computed for
    missing: int  # how many it could not be (no reference, unreadable judge reply...)


def summarise(results: list[QuestionResult]) -> dict[str, dict[str, MetricSummary]]:
    """Per mode, per metric: the mean over the questions that have a value, and how many do not."""
    by_mode: dict[str, dict[str, list[Score]]] = {}
    seconds: dict[str, list[float]] = {}
    for result in results:
        scores = by_mode.setdefault(result.mode, {})
        for name, score in result.scores.items():
            scores.setdefault(name, []).append(score)
        seconds.setdefault(result.mode, []).append(result.seconds)
    summary: dict[str, dict[str, MetricSummary]] = {}
    for mode, scores in by_mode.items():
        summary[mode] = {}
        for name, values in scores.items():
            ok = [s.value for s in values if s.value is not None]
            summary[mode][name] = MetricSummary(sum(ok) / len(ok) if ok else None, len(ok), len(values) - len(ok))
        secs = seconds[mode]
        summary[mode]["seconds"] = MetricSummary(sum(secs) / len(secs), len(secs), 0)
    return summary


def metric_order(summary: dict[str, dict[str, MetricSummary]]) -> list[str]:
    """Metric names in reading order: answer, retrieval (by family, then K), RAGAS, then time."""
    names = {name for per_mode in summary.values() for name in per_mode}
    families = ("em", "f1", "contains_reference", "recall", "complete", "mrr", "ndcg", "evidence_in_context")

    def key(name: str):
        family, _, k = name.partition("@")
        if family in families:
            return (0, families.index(family), int(k) if k.isdigit() else 0, name)
        return (2, 0, 0, name) if name == "seconds" else (1, 0, 0, name)

    return sorted(names, key=key)
