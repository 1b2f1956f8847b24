"""Reading: the one step from retrieved passages to an Answer, with three implementations chosen by
`QueryConfig.reader` (core.schema.modes.Reader) and named on every answer (`Answer.reader`):

  extractive  the learned LLM-free reader (core.query.reading.extractive)
  select      the model chooses among the extractive reader's best sentences (core.query.reading.select)
  write       the model writes prose, checked sentence by sentence (core.query.reading.write), after select's
              "none" check so a question the papers do not answer gets no invented prose

Data flows one way: candidates (core.query.reading.candidates) → features (features.py) → scores (scores.py: the
ranking every reader starts from) → the answer (one of the three). The engine (core.query.engine) calls `read_answer`
only; the Ask and Compare pages, the CLI, REST, MCP and chat all reach it through the engine.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from core.models.llm.base import ChatModel, LLMError
from core.query.reading import select as S
from core.query.reading.extractive import _abstain, _related, rank, read
from core.query.reading.scores import load_model
from core.query.records import Answer, AnswerSentence, Context, QueryParams, Retrieval
from core.schema.modes import Reader

log = logging.getLogger(__name__)

NO_CONTEXT = "Nothing in the papers matched the question, so there is nothing to answer from."
# Questions that ask for an explanation, a comparison or a summary: prose serves them, when a model writes it fast.
_PROSE = re.compile(r"^\s*(why|explain|summari[sz]e|describe|compare|contrast|discuss|what are the (main )?"
                    r"(differences|advantages|limitations|contributions)|how (does|do|did|can|could|would) .+ "
                    r"(work|differ|compare|relate))\b", re.I)


@dataclass
class ReadingJob:
    """What a reader reads: the question, the context and what retrieval found, and where to report."""

    lib: object
    question: str
    context: Context
    retrieval: Retrieval | None
    qvec: np.ndarray
    params: QueryParams
    on_token: Callable[[str], None] | None = None
    notes: list[str] = field(default_factory=list)  # said under the answer (the retrieval's notes)
    errors: list[str] = field(default_factory=list)  # a model that failed: the answer fell back
    gate: bool = True  # write runs select's "none" check first (not when a VLM writes from images it cannot see)
    calls: int = 0  # select's model calls made (cache hits excluded), whether its reply could be read or not
    cached: int = 0


@dataclass
class Outcome:
    answer: Answer
    calls: int = 0  # model calls made (cache hits excluded)
    cached: int = 0


def choose_reader(setting: str, model: ChatModel | None, question: str, prose_fast: bool) -> Reader:
    """The reader that will answer: the setting, unless it needs a model and none is available."""
    reader = Reader(setting)
    if model is None:
        return Reader.EXTRACTIVE
    if reader is Reader.AUTO:
        return Reader.WRITE if prose_fast and _PROSE.match(question) else Reader.SELECT
    return reader


def read_answer(job: ReadingJob, reader: Reader, model: ChatModel | None) -> Outcome:
    if not job.context.sources:
        return Outcome(Answer(text=NO_CONTEXT, sentences=[AnswerSentence(NO_CONTEXT, [])], extractive=True,
                              abstained=True, reader=reader.value))
    if reader is Reader.EXTRACTIVE or model is None:
        return Outcome(_extractive(job))
    if reader is Reader.WRITE:
        from core.query.reading.write import write_answer

        gate = _select(job, model, gate_only=True) if job.gate else None
        if gate is not None and gate.answer.abstained:
            return gate
        written = write_answer(job, model)
        if written.answer is None:  # the model failed (job.errors says so)
            return Outcome(_extractive(job), job.calls, job.cached)
        if gate is not None:  # how sure: that some sentence answers
            written.answer.confidence = gate.answer.confidence
        return Outcome(written.answer, job.calls + written.calls, job.cached + written.cached)
    outcome = _select(job, model)
    return outcome if outcome is not None else Outcome(_extractive(job), job.calls, job.cached)


def _extractive(job: ReadingJob, ranking=None, *, final: bool = True) -> Answer:
    q = job.lib.settings.query if job.lib is not None else None
    answer = read(job.question, job.context, job.retrieval, job.lib, job.qvec,
                  sentences=q.extractive_sentences if q else 4, ranking=ranking)
    answer.reader = Reader.EXTRACTIVE.value
    if job.on_token and (final or job.params.preview):
        job.on_token(answer.text)
    return answer


def _select(job: ReadingJob, model: ChatModel, gate_only: bool = False) -> Outcome | None:
    """select's answer; with `gate_only`, only whether to abstain (write then writes). None: the model failed or
    replied unreadably, and the caller answers without it (said in job.errors)."""
    scorer = load_model()
    q, ranked = rank(job.question, job.context, job.retrieval, job.lib, job.qvec, scorer)
    if not ranked:
        return Outcome(_extractive(job, (q, ranked)))
    if job.on_token and job.params.preview and not gate_only:  # the extractive answer at once, replaced later
        _extractive(job, (q, ranked), final=False)
    k = job.lib.settings.query.select_candidates if job.lib is not None else 4
    shown = S.shown_candidates(ranked, k)
    form = S.reply_form(q.yes_no)
    try:
        choice, cached = S.choose(model, job.question, shown, form)
        job.calls, job.cached = job.calls + (0 if cached else 1), job.cached + int(cached)
    except LLMError as exc:
        if not gate_only:  # write tries the model itself next, and says so if it fails
            job.errors.append(f"the model could not read the passages ({exc}); showing the extractive answer")
        return None
    if choice is None:
        if not gate_only:
            job.errors.append("the model's reply could not be read; showing the extractive answer")
        return None
    clause = q.kind in S.CLAUSE_KINDS and not q.yes_no
    at = S.locate(choice, shown, clause=clause)
    if not choice.none and at is None:  # copy, never invent: words no shown sentence says are no answer
        job.notes.append(f"{model.name} answered {choice.short[:60]!r}, which no passage says: nothing is stated")
        choice.numbers = []
    elif at is not None:
        choice.numbers = [at]
    calibration = S.load_calibration()
    base = Outcome(Answer("", [], extractive=True), calls=job.calls, cached=job.cached)
    threshold = 0.0
    if choice.none:  # how sure the abstention is: the model's odds of "none", else how unlikely the best sentence is
        confidence = choice.odds if choice.odds is not None else 1.0 - ranked[0].p
    else:  # a verdict is read from the model's odds here, not taken from its argmax
        confidence, threshold = S.confidence(choice, shown, job.question, form, calibration)
    if choice.none or confidence < threshold:
        # An abstention's confidence is that stating nothing is right: the odds of "none", or 1 − P(the chosen
        # sentence is right) when the calibrated threshold turned the model's answer down.
        sure = confidence if choice.none else 1.0 - confidence
        answer = _abstain(job.context, ranked, q.kind, sure, related=_related(q, ranked, scorer))
        answer.extractive, answer.model, answer.reader = True, model.name, Reader.SELECT.value
        answer.model_odds = choice.odds
        if not choice.none:
            job.notes.append(f"{model.name} chose a sentence, at {confidence:.0%} below the threshold to state it")
        base.answer = answer
        return base
    if gate_only:
        base.answer = Answer("", [], extractive=False, confidence=round(confidence, 4))
        return base
    base.answer = S.chosen_answer(choice, shown, ranked, q.kind, job.question, model.name, confidence)
    base.answer.model_odds = choice.odds
    return base
