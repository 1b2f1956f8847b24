"""LLM entity and relation extraction, LightRAG's scheme: one extraction call per chunk, then gleaning calls in
the same conversation asking for what was missed.

Replies are read defensively (core/graph/extract/llm/replies.py). A reply that cannot be read costs that
reply's records, never the chunk; only an LLMError (the endpoint could not be reached for good) marks a chunk
failed so the next run retries it.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from core.graph.extract.llm.replies import (
    COMPLETION_DELIMITER,
    RECORD_DELIMITER,
    TUPLE_DELIMITER,
    ParsedExtraction,
    TypeMap,
    add_missing_endpoints,
    extraction_json_schema,
    parse_records,
)
from core.graph.fields import CS, GENERAL_TYPES, detect_field, field_of
from core.models.llm.base import ChatModel, LLMError, Message
from core.prompts import PROMPTS
from core.schema.graph import ChunkExtraction
from core.schema.records import Chunk
from core.settings.config import GraphConfig

log = logging.getLogger(__name__)

@dataclass
class _Prompts:
    """One field's conversation with the LLM: its prompts, reply format and types."""

    system: str
    user: str
    glean: str
    response_format: dict[str, Any] | None
    entity_types: str  # as the prompts list them
    types: TypeMap


# --- the extractor ---------------------------------------------------------------------------------------------

class LLMExtractor:
    """Extracts entities and relations with any ChatModel; chunks run `concurrency` at a time."""

    def __init__(self, chat_model: ChatModel, config: GraphConfig, concurrency: int = 4, json_mode: bool = False,
                 venue_of: Callable[[str], str] | None = None):
        self.chat_model = chat_model
        self.config = config
        self.concurrency = max(1, concurrency)
        self.json_mode = json_mode
        self.name = f"llm:{chat_model.name}"
        self.venue_of = venue_of  # doc id → venue: with the paper's words, its field (core/graph/fields.py)
        self._prompts: dict[str, _Prompts] = {}

    def prompts(self, field_name: str = CS) -> _Prompts:
        """The prompts and types of a field's papers: the configured types for computer science; elsewhere the
        general ones of them plus the field's own, with a line saying what those mean (core/prompts/extraction.py)."""
        if field_name in self._prompts:
            return self._prompts[field_name]
        config, field = self.config, field_of(field_name)
        entity_types = list(config.entity_types)
        hint = ""
        if not field.is_cs:
            entity_types = [t for t in entity_types if t in GENERAL_TYPES] + field.types
            hint = PROMPTS["entity_extraction_field"].format(
                field=field.label, definitions="; ".join(PROMPTS["entity_type_definitions"][t] for t in field.types))
        types = ", ".join(entity_types)
        delimiters = {"tuple_delimiter": TUPLE_DELIMITER, "record_delimiter": RECORD_DELIMITER,
                      "completion_delimiter": COMPLETION_DELIMITER}
        if self.json_mode:
            system = PROMPTS["entity_extraction_json_system"].format(entity_types=types, language=config.language)
            user = PROMPTS["entity_extraction_json_user"]
            glean = PROMPTS["entity_continue_extraction_json"].format(entity_types=types)
            schema = extraction_json_schema(entity_types)
            response_format: dict[str, Any] | None = {
                "type": "json_schema", "json_schema": {"name": "extraction", "schema": schema}}
        else:
            examples = PROMPTS["entity_extraction_examples"].format(**delimiters)
            system = PROMPTS["entity_extraction_system"].format(
                entity_types=types, language=config.language, examples=examples, **delimiters)
            user = PROMPTS["entity_extraction_user"]
            glean = PROMPTS["entity_continue_extraction"].format(entity_types=types, **delimiters)
            response_format = None
        out = self._prompts[field_name] = _Prompts(system=system + hint, user=user, glean=glean,
                                                   response_format=response_format, entity_types=types,
                                                   types=TypeMap(entity_types))
        return out

    def field_of_paper(self, chunks: Sequence[Chunk]) -> str:
        """The field of the paper these chunks belong to (its venue and its words)."""
        if not chunks:
            return CS
        venue = ""
        if self.venue_of is not None:
            try:
                venue = self.venue_of(chunks[0].doc_id) or ""
            except Exception as exc:  # no metadata: the words decide
                log.warning("venue of %s unavailable: %s", chunks[0].doc_id, exc)
        return detect_field(" ".join(c.text for c in chunks), venue)

    def extract(self, chunks: Sequence[Chunk]) -> Iterator[ChunkExtraction]:
        chunks = list(chunks)
        if not chunks:
            return
        pool = ThreadPoolExecutor(max_workers=min(self.concurrency, len(chunks)), thread_name_prefix="extract")
        try:
            papers: dict[str, list[Chunk]] = {}
            for chunk in chunks:
                papers.setdefault(chunk.doc_id, []).append(chunk)
            fields = {doc_id: self.field_of_paper(paper) for doc_id, paper in papers.items()}
            futures = [pool.submit(self.extract_chunk, chunk, fields[chunk.doc_id]) for chunk in chunks]
            for future in as_completed(futures):
                yield future.result()
        finally:
            # A caller that stops reading early does not wait for (or pay for) the chunks not started.
            pool.shutdown(wait=True, cancel_futures=True)

    def extract_chunk(self, chunk: Chunk, field_name: str = CS) -> ChunkExtraction:
        """One chunk's records, with the types of its paper's field; never raises."""
        prompts = self.prompts(field_name)
        result = ChunkExtraction(chunk_id=chunk.id, extractor=self.name)
        if not chunk.text.strip():
            return result
        messages: list[Message] = [
            {"role": "system", "content": prompts.system},
            {"role": "user", "content": prompts.user.format(entity_types=prompts.entity_types, input_text=chunk.text)},
        ]
        merged = ParsedExtraction()
        try:
            for round_ in range(1 + self.config.gleaning_rounds):
                reply = self.chat_model.chat(messages, purpose="extract" if round_ == 0 else "glean",
                                             response_format=prompts.response_format, temperature=0.0)
                if not reply.cached:
                    result.llm_calls += 1
                added = merged.merge(parse_records(reply.text, prompts.types))
                if round_ and not added:
                    break  # the model has nothing more to add: further rounds would repeat it
                messages = [*messages, {"role": "assistant", "content": reply.text},
                            {"role": "user", "content": prompts.glean}]
        except LLMError as exc:
            return ChunkExtraction(chunk_id=chunk.id, extractor=self.name, llm_calls=result.llm_calls,
                                   errors=[str(exc)], failed=True)
        except Exception as exc:  # a bug must not take the other chunks down; the chunk is retried next run
            log.exception("extraction of chunk %s failed", chunk.id)
            return ChunkExtraction(chunk_id=chunk.id, extractor=self.name, llm_calls=result.llm_calls,
                                   errors=[f"{type(exc).__name__}: {exc}"], failed=True)
        add_missing_endpoints(merged)
        result.entities, result.relations = merged.entities, merged.relations
        result.dropped, result.errors = merged.dropped, merged.errors
        return result
