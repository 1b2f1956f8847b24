"""RAGAS scores for the evaluation runner: five metrics without a model, always available, and four judged by
the workspace's LLM. Synchronous on the outside (the runner works in a thread, Streamlit has its own loop);
ragas itself is imported only when something is really scored (core/eval/ragas_metrics.py, ~3 s).

Every score is a records.Score: value None with a reason when it cannot be computed (no evidence, no judge, a
judge reply that could not be read, cancelled), never 0 for a failure. Judged scores are cached in the
workspace (core/store/sqlite_ragas_cache.py), so a question scored once is not sent to the judge again.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import importlib.util
import json
import os
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING, Any, TypeVar

from core.models.llm.secrets import SecretsError, api_key_for, endpoint_id
from core.schema.eval import CANCELLED, Score

if TYPE_CHECKING:
    from core.library import Library

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # before anything imports ragas, here or elsewhere

METRIC_NAMES_NON_LLM = ("non_llm_context_precision", "non_llm_context_recall", "string_similarity", "bleu", "rouge")
METRIC_NAMES_LLM = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")

Progress = Callable[[int, int], None]
T = TypeVar("T")


@dataclass
class RagasSample:
    question: str
    answer: str
    contexts: list[str]  # retrieved contexts, in order
    references: list[str]  # reference answers: the best one counts for the string metrics, the first is judged
    reference_contexts: list[str] = field(default_factory=list)  # reference passages (may be empty)


# ---------------------------------------------------------------------------------------------- without a model

def _ragas_version() -> str:
    # Part of every key: another ragas release may prompt or compute differently. Read from the installed
    # package's metadata, which costs nothing next to importing ragas (~3 s).
    try:
        return metadata.version("ragas")
    except metadata.PackageNotFoundError:
        return "absent"


def score_key(metric: str, scorer: str, question: str, answer: str, contexts: list[str], references: list[str],
              reference_contexts: list[str]) -> str:
    """`scorer` names what else decides the value: the judge (model @ endpoint) and, for answer relevancy, the
    embedding model; empty for the metrics computed without a model."""
    payload = json.dumps([metric, scorer, _ragas_version(), question, answer, list(contexts), list(references),
                          list(reference_contexts)], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def score_non_llm(samples: list[RagasSample], on_progress: Progress | None = None) -> list[dict[str, Score]]:
    """string_similarity (Levenshtein), bleu and rouge (rougeL F) of the answer against its closest reference
    answer (BLEU missing, not 0, when a text is shorter than its 4-grams); non_llm_context_precision / _recall of
    the retrieved passages against the passages that hold the reference evidence (ragas_metrics.reference_passages:
    sentence evidence against whole chunks would be 0 by construction)."""
    if not samples:
        return []
    try:
        from core.eval import ragas_metrics
    except ImportError as exc:  # a broken install (langchain-community 0.4.2 breaks ragas 0.4.3's import)
        reason = _not_loaded(exc)
        return [{name: Score(None, reason) for name in METRIC_NAMES_NON_LLM} for _ in samples]

    rows = run_sync(lambda: ragas_metrics.score_non_llm_rows(samples, on_progress))
    return [{name: row[name] for name in METRIC_NAMES_NON_LLM} for row in rows]


def _not_loaded(exc: ImportError) -> str:
    return f"ragas could not be loaded ({exc}): pip install -r requirements.txt"


# ---------------------------------------------------------------------------------------------- judged

def ragas_judge_available(lib: Library) -> str:
    """"" when the configured LLM can judge; otherwise why not, in words for the UI."""
    llm = lib.settings.llm
    if llm.provider == "none":
        return ("no LLM is configured (Settings → LLM): faithfulness, answer relevancy, context precision and "
                "context recall need one as judge")
    if llm.provider == "embedded":
        return ("the embedded model has no OpenAI-compatible endpoint for RAGAS to call: configure an "
                "OpenAI-compatible server (Ollama, vLLM, LM Studio, OpenAI) to judge")
    if llm.provider != "openai":
        return f"unknown LLM provider {llm.provider!r}"
    if not (llm.base_url.strip() and llm.model.strip()):
        return "the LLM needs a base URL and a model to act as judge (Settings → LLM)"
    if importlib.util.find_spec("ragas") is None:
        return "ragas is not installed: pip install -r requirements.txt"
    return ""


def judge_id(lib: Library) -> str:
    return f"{lib.settings.llm.model}@{endpoint_id(lib.settings.llm.base_url)}"


def _scorer(lib: Library, metric: str) -> str:
    # Answer relevancy compares embeddings: another embedding model is another score.
    judge = judge_id(lib)
    return f"{judge}|{lib.settings.embedding.model}" if metric == "answer_relevancy" else judge


def _precondition(metric: str, s: RagasSample) -> str:
    """Why `metric` cannot be judged for `s` at all (ragas would raise), or ""."""
    has_answer = bool(s.answer.strip())
    has_contexts = any(c.strip() for c in s.contexts)
    has_reference = any(r.strip() for r in s.references)
    needs = {
        "faithfulness": [(has_answer, "no answer to score"), (has_contexts, "nothing was retrieved")],
        "answer_relevancy": [(has_answer, "no answer to score")],
        "context_precision": [(has_reference, "no reference answer"), (has_contexts, "nothing was retrieved")],
        "context_recall": [(has_reference, "no reference answer"), (has_contexts, "nothing was retrieved")],
    }[metric]
    if not s.question.strip():
        return "no question"
    return next((reason for ok, reason in needs if not ok), "")


def score_llm(lib: Library, samples: list[RagasSample], on_progress: Progress | None = None,
              cancel: threading.Event | None = None) -> list[dict[str, Score]]:
    """faithfulness, answer_relevancy, context_precision (against the first reference answer) and
    context_recall, judged by the workspace's LLM. Cached scores are reused; only successes are cached."""
    total = len(samples)
    reason = ragas_judge_available(lib)
    if reason:
        if on_progress and total:
            on_progress(total, total)
        return [{name: Score(None, reason) for name in METRIC_NAMES_LLM} for _ in samples]

    cache = lib.score_cache
    keys = {(i, name): score_key(name, _scorer(lib, name), s.question, s.answer, s.contexts, s.references,
                                 s.reference_contexts)
            for i, s in enumerate(samples) for name in METRIC_NAMES_LLM}
    cached = cache.get_many(list(keys.values()))
    results: list[dict[str, Score]] = [{} for _ in samples]
    pending: dict[int, list[str]] = {}
    for (i, name), key in keys.items():
        missing = _precondition(name, samples[i])
        if missing:
            results[i][name] = Score(None, missing)
        elif key in cached:
            results[i][name] = Score(cached[key])
        else:
            pending.setdefault(i, []).append(name)

    done = total - len(pending)
    if on_progress and done:
        on_progress(done, total)
    if not pending:
        return _ordered(results)
    if cancel is not None and cancel.is_set():
        for i, names in pending.items():
            results[i].update({name: Score(None, CANCELLED) for name in names})
        return _ordered(results)

    try:
        from core.eval import ragas_metrics  # imports ragas (~3 s): only when something is scored
    except ImportError as exc:
        for i, names in pending.items():
            results[i].update({name: Score(None, _not_loaded(exc)) for name in names})
        return _ordered(results)
    llm = lib.settings.llm
    try:
        api_key = api_key_for(llm.base_url)
    except SecretsError as exc:  # an unreadable credentials file: say so rather than send no key
        for i, names in pending.items():
            results[i].update({name: Score(None, str(exc)) for name in names})
        return _ordered(results)
    setup = ragas_metrics.JudgeSetup(llm=llm, api_key=api_key, get_embedder=lib.embedder)
    finished = [done]

    def on_score(row: int, name: str, score: Score) -> None:
        results[row][name] = score
        if score.ok:
            cache.put(keys[(row, name)], name, float(score.value))

    def on_row_done(row: int) -> None:
        finished[0] += 1
        if on_progress:
            on_progress(finished[0], total)

    try:
        run_sync(lambda: ragas_metrics.judge_rows(setup, samples, pending, on_score, on_row_done, cancel))
    except Exception as exc:  # the judge could not even be set up (ragas refused the client or the model)
        message = ragas_metrics.describe_failure(exc, llm, setup.api_key)
        for i, names in pending.items():
            for name in names:
                results[i].setdefault(name, Score(None, message))
    return _ordered(results)


def _ordered(results: list[dict[str, Score]]) -> list[dict[str, Score]]:
    return [{name: row[name] for name in METRIC_NAMES_LLM} for row in results]


# ---------------------------------------------------------------------------------------------- sync bridge

def run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to its end from sync code, in a loop of its own. From a thread where a loop already runs
    (a notebook, an async caller), asyncio.run would refuse: the coroutine then runs in a helper thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragas") as pool:
        return pool.submit(lambda: asyncio.run(make())).result()
