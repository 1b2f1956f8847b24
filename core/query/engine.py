"""One question through one mode (`ask`), or through several at once (`compare`): keywords → retrieval →
rerank → context → answer, with what each step cost and which steps ran without an LLM."""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np

from core.library import Library
from core.models.embedding import cheapest_batches, get_tokenizer
from core.query.answer import answer_messages
from core.query.context import build_context, count_tokens
from core.query.keywords import question_keywords
from core.query.reading.readers import Outcome, ReadingJob, choose_reader, read_answer
from core.query.records import Keywords, QueryParams, QueryResult
from core.query.rerank import make_reranker
from core.query.result_answers import answer_results
from core.query.routes import route_of
from core.schema.modes import Mode, Reader
from core.text.questions import question_too_long

log = logging.getLogger(__name__)

TokenFn = Callable[[str], None]  # receives the answer's text as it streams
EXTRACTIVE_TOKENS = 12_000  # ten whole 1,200-token passages


class QueryError(ValueError):
    """A question that cannot be run as asked (empty, unknown mode): the message says why."""


class Embeddings:
    """Query embeddings memoised for one question, so modes run side by side embed each text once."""

    def __init__(self, lib: Library):
        self.lib = lib
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def __call__(self, text: str) -> np.ndarray:
        with self._lock:
            if text in self._cache:
                return self._cache[text]
        vector = self.lib.embedder().embed_query(text)
        with self._lock:
            self._cache[text] = vector
        return vector

    def prefetch(self, texts: list[str]) -> None:
        """Embed several query texts (a mode's question and keywords) in as few encoder calls as pay: texts of
        similar length together (embedding.cheapest_batches), as one batch pads every text to its longest."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t and t not in self._cache]
        if not missing:
            return
        lengths = [len(e.ids) for e in get_tokenizer(self.lib.settings.embedding.model).encode_batch(missing)]
        for group in cheapest_batches(missing, lengths):
            vectors = self.lib.embedder().embed_queries(group)
            with self._lock:
                self._cache.update(zip(group, vectors))


def ask(lib: Library, question: str, params: QueryParams | None = None, *, on_token: TokenFn | None = None,
        keywords: Keywords | None = None, embeddings: Embeddings | None = None, save: bool = True,
        owner: str | None = None) -> QueryResult:
    """`owner`: whose history the question goes to (core.query.history; None: no owner known)."""
    question = " ".join((question or "").split())
    if not question:
        raise QueryError("the question is empty")
    if reason := question_too_long(question):  # before any LLM call: the whole question goes into every prompt
        raise QueryError(reason)
    params = params or QueryParams.from_config(lib.settings.query)
    route = route_of(params.mode)
    started = time.perf_counter()
    llm = lib.chat_model() if params.use_llm else None
    embeddings = embeddings or Embeddings(lib)
    llm_free: list[str] = []
    calls = 0
    timings: dict[str, float] = {}

    t = time.perf_counter()
    if not route.keywords:  # compare hands every mode the shared keywords; this one searches without them
        keywords = None
    elif keywords is None:
        # The embedded model's time goes to the answer: a keyword call would cost it ~15 s more per question.
        keywords = question_keywords(question, None if lib.settings.llm.provider == "embedded" else llm)
        calls += keywords.llm_calls
    if keywords is not None and not keywords.source.startswith("llm:"):
        llm_free.append("keywords")
    timings["keywords_s"] = time.perf_counter() - t

    reranker = make_reranker(lib, use_llm=params.use_llm) if params.rerank else None
    routed = route.run(lib, question, params, keywords=keywords, llm=llm, embed=embeddings, reranker=reranker)
    retrieval = routed.retrieval
    calls += routed.llm_calls + getattr(reranker, "calls", 0)
    llm_free.extend(routed.llm_free)
    if reranker is not None:
        retrieval.notes.append(f"reranked by {reranker.name}")
    timings["retrieve_s"] = time.perf_counter() - t

    tokenizer = lib.tokenizer()
    model = lib.reader_model() if params.use_llm and not params.context_only else None
    reader = Reader.EXTRACTIVE if params.context_only else choose_reader(
        params.reader or lib.settings.query.reader, model, question, prose_fast=_writes_fast(model))
    vlm = lib.vision_model() if params.vlm_images and params.use_llm and not params.context_only else None
    if vlm is not None:
        reader, model = Reader.WRITE, model or vlm  # the VLM writes from the tables' images
    # The token budget is a model's: the extractive ranking (extractive, select) reads every passage kept, whole.
    whole = not params.context_only and (reader is not Reader.WRITE or _small(model))
    budget = replace(params, max_chunk_tokens=max(params.max_chunk_tokens, EXTRACTIVE_TOKENS)) if whole else params
    context = build_context(retrieval, budget, tokenizer, routed.sections, question)
    result = QueryResult(question=question, params=params, retrieval=retrieval, context=context, answer=None,
                         llm_free=llm_free)
    if not params.context_only:
        t = time.perf_counter()
        job = ReadingJob(lib, question, context, retrieval, embeddings(question), params, on_token,
                         notes=retrieval.notes, gate=vlm is None)
        computed = _computed(lib, question, context, params)
        if computed is not None and on_token is not None:
            on_token(computed.text)
        outcome = Outcome(computed) if computed is not None else read_answer(job, reader, model)
        result.answer = outcome.answer
        result.error = "; ".join(job.errors)
        calls += outcome.calls
        result.llm_cached += outcome.cached
        timings["generate_s"] = time.perf_counter() - t
        if result.answer.reader in (Reader.EXTRACTIVE, Reader.RESULTS):
            llm_free.append("answer")
        if result.answer.reader == Reader.WRITE and result.answer.text:
            prompt = "\n".join(m["content"] for m in answer_messages(question, context, lib.settings.graph.language,
                                                                    params.answer_style))
            prompt_n, completion_n = count_tokens(tokenizer, [prompt, result.answer.text])
            result.tokens = {"prompt": prompt_n, "completion": completion_n}
    result.llm_calls = calls
    timings["total_s"] = time.perf_counter() - started
    result.timings = {**retrieval.timings, **timings}
    if save:
        from core.query.history import save_result

        try:
            save_result(lib, result, owner)
        except Exception:  # history is a convenience: never fail an answer because it could not be kept
            log.exception("could not save the query to the history")
    return result


def _computed(lib: Library, question: str, context, params: QueryParams):
    """A results question's answer computed from the tables' records (core.query.result_answers), before any
    reader; None for any other question, or one the records do not cover. Never fails the question."""
    try:
        return answer_results(lib, question, context, params.doc_ids or None)
    except Exception:
        log.exception("answering from the stored results failed; the readers answer")
        return None


def _small(model) -> bool:
    """The embedded model reads the reader's best sentences, never the whole context (reading.small_context)."""
    return model is not None and model.name.startswith("embedded:")


def _writes_fast(model) -> bool:
    """Prose pays for explain / compare / summarise questions only when the model writes it in seconds: an
    endpoint, not the embedded model (10 tokens/s on 2 cores)."""
    return model is not None and not _small(model)


def compare(lib: Library, question: str, modes: Sequence[str], params: QueryParams | None = None,
            on_done: Callable[[Mode, QueryResult], None] | None = None,
            save_history: bool = True, owner: str | None = None) -> dict[Mode, QueryResult]:
    """The same question through several modes at once; keywords are extracted once and shared."""
    question = " ".join((question or "").split())
    if not question:
        raise QueryError("the question is empty")
    if reason := question_too_long(question):  # before any LLM call: the whole question goes into every prompt
        raise QueryError(reason)
    if not modes:
        raise QueryError("choose at least one mode")
    modes = [Mode(m) for m in modes]
    with_keywords = {m for m in modes if route_of(m).keywords}
    base = params or QueryParams.from_config(lib.settings.query)
    embeddings = Embeddings(lib)
    keywords = None
    shared_calls = 0
    if with_keywords:
        keywords = question_keywords(question, lib.chat_model() if base.use_llm else None)
        shared_calls = keywords.llm_calls

    def run(mode: Mode) -> QueryResult:
        result = ask(lib, question, replace(base, mode=mode), keywords=keywords, embeddings=embeddings,
                     save=save_history, owner=owner)
        if on_done:
            on_done(mode, result)
        return result

    with ThreadPoolExecutor(max_workers=max(1, min(len(modes), 6))) as pool:
        results = dict(zip(modes, pool.map(run, modes)))
    # The one keyword call serves every mode: charge it to each, as each alone would have made it.
    for mode, result in results.items():
        if mode in with_keywords:
            result.llm_calls += shared_calls
    return results


def unique_to_each(results: dict[str, QueryResult]) -> dict[str, dict[str, set]]:
    """Per mode: the entity keys, relation pairs and chunk ids no other compared mode retrieved."""
    kinds = {"entities": lambda r: {e.key for e in r.retrieval.entities},
             "relations": lambda r: {rel.pair for rel in r.retrieval.relations},
             "chunks": lambda r: {c.id for c in r.retrieval.chunks}}
    out: dict[str, dict[str, set]] = {}
    for mode, result in results.items():
        out[mode] = {}
        for kind, of in kinds.items():
            others = set().union(*(of(r) for m, r in results.items() if m != mode)) if len(results) > 1 else set()
            out[mode][kind] = of(result) - others
    return out
