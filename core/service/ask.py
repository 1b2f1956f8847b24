"""A question through one mode, answered with citations: core.query.engine.ask behind the service's checks.

Without an LLM (or with `use_llm=False`) the answer is extractive: sentences of the passages, each cited. The
citations are the passages the answer cites, in marker order, each with the quote that best matches the sentences
citing it; an answer that cites nothing (it abstained) carries its closest passages instead."""
from __future__ import annotations

from collections.abc import Callable

from core.library import Library
from core.query.engine import QueryError
from core.query.engine import ask as engine_ask
from core.query.records import QueryParams, QueryResult
from core.query.routes import available_modes, unavailable_reason
from core.schema.modes import Mode, Reader
from core.service import citations
from core.service.errors import CONFLICT, MODE_UNAVAILABLE, ServiceError, invalid
from core.service.inputs import bounded, clean_question, find_paper
from core.service.records import AskResult, Citation

MAX_TOP_K = 200
UNCITED_FALLBACK = 3  # passages shown with an answer that cites none


def modes(lib: Library) -> list[str]:
    """The modes this workspace can run now (those whose graph or reports exist), in Mode's order."""
    return [str(m) for m in available_modes(lib)]


def check_mode(lib: Library, mode: str | None) -> Mode:
    """The mode asked for (the workspace's default when None), refused when unknown or unavailable here."""
    try:
        chosen = Mode(mode or lib.settings.query.mode)
    except ValueError as exc:
        raise invalid(str(exc)) from None
    if reason := unavailable_reason(lib, chosen):
        raise ServiceError(MODE_UNAVAILABLE, reason)
    return chosen


def ask(lib: Library, question: str, mode: str | None = None, *, use_llm: bool = True, top_k: int | None = None,
        chunk_top_k: int | None = None, papers: list[str] | None = None,
        on_token: Callable[[str], None] | None = None, save: bool = True, reader: str | None = None,
        owner: str | None = None) -> AskResult:
    """`on_token` receives the answer's text so far as it is written (an extractive answer arrives whole);
    `reader`: extractive / select / write / auto for this question (default: the workspace's); `owner`: whose
    history the question goes to (core.query.history; None: no owner known, shown to editors)."""
    question = clean_question(question)
    chosen = check_mode(lib, mode)
    if reader is not None and reader not in {r.value for r in Reader.choosable()}:
        raise invalid(f"unknown reader {reader!r}: choose one of {', '.join(Reader.choosable())}")
    for value, what in ((top_k, "top_k"), (chunk_top_k, "chunk_top_k")):
        if value is not None:
            bounded(value, what, 1, MAX_TOP_K)
    doc_ids = [find_paper(lib, p).id for p in papers or []]
    params = QueryParams.from_config(lib.settings.query, mode=chosen, top_k=top_k, chunk_top_k=chunk_top_k,
                                     use_llm=None if use_llm else False, doc_ids=doc_ids or None,
                                     reader=reader)
    try:
        result = engine_ask(lib, question, params, on_token=on_token, save=save, owner=owner)
    except QueryError as exc:
        raise invalid(str(exc)) from None
    except ValueError as exc:  # the stored vectors and the configured embedder disagree (VectorSpaceMismatch)
        raise ServiceError(CONFLICT, str(exc)) from None
    return outcome(result)


def history_owner(name: str, signed_in: bool) -> str:
    """Whose recent questions an API caller's question joins: its account's (a token names it), or the local user's
    (loopback without a token), as the app keeps them (core.query.history)."""
    from core.query.history import LOCAL_OWNER, account_owner

    return account_owner(name) if signed_in else LOCAL_OWNER


def outcome(result: QueryResult) -> AskResult:
    answer = result.answer
    cues: dict[int, list[str]] = {}
    for sentence in answer.sentences if answer else []:
        for n in sentence.citations:
            cues.setdefault(n, []).append(sentence.text)
    cited = [s for n in cues if (s := result.context.source(n)) is not None]
    if not cited:
        cited = result.context.sources[:UNCITED_FALLBACK]
    found: list[Citation] = [citations.from_source(s, " ".join(cues.get(s.n, []))) for s in cited]
    notes = list(result.retrieval.notes) + ([result.error] if result.error else [])
    return AskResult(question=result.question, mode=str(result.mode), answer=answer.text if answer else "",
                     citations=found, short_answer=answer.short_answer if answer else "",
                     abstained=bool(answer and answer.abstained), extractive=bool(answer is None or answer.extractive),
                     confidence=answer.confidence if answer else None, model=answer.model if answer else "",
                     sources=len(result.context.sources), notes=notes,
                     reader=answer.reader if answer else "extractive")
