"""`write`: the model writes the answer in prose from the passages (LightRAG's answer prompt, core.query.answer),
streamed; every sentence is then checked against the passages (core.query.reading.grounding). A small local model
reads only the extractive reader's best sentences (core.query.reading.small_context), as its minutes go to the
prompt. With a VLM set and tables or figures in the context, their images go with the question.

The reader in front of it (core.query.reading.readers) has already run select's "none" check, so it is only asked
when some sentence of the passages answers.
"""
from __future__ import annotations

from dataclasses import dataclass

from core.models.llm.base import ChatModel, LLMError
from core.query.answer import MAX_ANSWER_IMAGES, answer_messages, parse_answer, stream_llm_answer
from core.query.reading.grounding import ground
from core.query.reading.small_context import compact_context
from core.query.records import Answer
from core.schema.modes import Reader
from core.schema.records import MEDIA_TYPES

SMALL_ANSWER_TOKENS = 200  # the embedded model's answer: ~10 tokens/s on 2 cores


@dataclass
class Written:
    answer: Answer | None  # None: the model failed
    calls: int = 0
    cached: int = 0


def write_answer(job, llm: ChatModel) -> Written:
    """The model's answer, grounded; answer None (said in job.errors) when the model fails: the caller answers
    without it."""
    lib, params, context = job.lib, job.params, job.context
    q = lib.settings.query
    images: list[tuple[int, bytes]] = []
    if params.vlm_images and context.sources:
        vlm = lib.vision_model()
        images = _context_images(lib, context) if vlm is not None else []
        if vlm is None:
            job.notes.append("no VLM is set: the answer was written without the images")
        elif not images:
            job.notes.append("no table or figure in the context: the answer was written from text")
        else:
            llm = vlm
            job.notes.append(f"{min(len(images), MAX_ANSWER_IMAGES)} image(s) sent to {vlm.name}")
    full, max_tokens = context, q.answer_max_tokens
    if llm.name.startswith("embedded:") and q.small_llm_context_tokens and not images:
        # A small local model reads the reader's best sentences, not 3,000 tokens of passages, and writes a short
        # answer: prompt and reply are what its minutes are spent on.
        context = compact_context(job.question, context, job.retrieval, lib, job.qvec, lib.tokenizer(),
                                  q.small_llm_context_tokens)
        max_tokens = min(max_tokens, SMALL_ANSWER_TOKENS)
        job.notes.append(f"the embedded model read the {context.tokens.get('chunks', 0)} tokens of the passages' "
                         "most probable sentences")
    messages = answer_messages(job.question, context, lib.settings.graph.language, params.answer_style)
    cached = not images and _stream_is_cached(llm, messages, max_tokens)
    pieces: list[str] = []
    try:
        for piece in stream_llm_answer(llm, job.question, context, max_tokens, lib.settings.graph.language,
                                       images=images, style=params.answer_style):
            pieces.append(piece)
            if job.on_token:
                job.on_token("".join(pieces))
    except LLMError as exc:
        job.errors.append(f"the LLM could not answer ({exc}); showing the extractive answer instead")
        return Written(None)
    answer = ground(parse_answer("".join(pieces), full, extractive=False, model=llm.name), full, job.question)
    answer.reader = Reader.WRITE.value
    return Written(answer, 0 if cached else 1, int(cached))


def _context_images(lib, context) -> list[tuple[int, bytes]]:
    from core.content.images import item_image

    media = [s for s in context.sources if s.kind in MEDIA_TYPES]
    chunks = lib.chunks.get_many([s.chunk_id for s in media])
    images = []
    for source in media:
        png = item_image(lib, chunks[source.chunk_id]) if source.chunk_id in chunks else None
        if png:
            images.append((source.n, png))
    return images


def _stream_is_cached(llm, messages, max_tokens) -> bool:
    check = getattr(llm, "has_cached_stream", None)
    return bool(check and check(messages, max_tokens=max_tokens, temperature=0.0))
