"""LLM entity and relation extraction, LightRAG's scheme: one extraction call per chunk, then gleaning calls in
the same conversation asking for what was missed.

Replies are read defensively (core/graph/extract/llm/replies.py). A reply that cannot be read costs that
reply's records, never the chunk; only an LLMError (the endpoint could not be reached for good) marks a chunk
failed so the next run retries it.
"""
from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
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
from core.models.llm.base import ChatModel, LLMError, Message
from core.prompts import PROMPTS
from core.schema.graph import ChunkExtraction
from core.schema.records import Chunk
from core.settings.config import GraphConfig

log = logging.getLogger(__name__)

# --- the extractor ---------------------------------------------------------------------------------------------

class LLMExtractor:
    """Extracts entities and relations with any ChatModel; chunks run `concurrency` at a time."""

    def __init__(self, chat_model: ChatModel, config: GraphConfig, concurrency: int = 4, json_mode: bool = False):
        self.chat_model = chat_model
        self.config = config
        self.concurrency = max(1, concurrency)
        self.json_mode = json_mode
        self.name = f"llm:{chat_model.name}"
        self._types = TypeMap(config.entity_types)
        types = ", ".join(config.entity_types)
        delimiters = {"tuple_delimiter": TUPLE_DELIMITER, "record_delimiter": RECORD_DELIMITER,
                      "completion_delimiter": COMPLETION_DELIMITER}
        if json_mode:
            self._system = PROMPTS["entity_extraction_json_system"].format(entity_types=types,
                                                                           language=config.language)
            self._user = PROMPTS["entity_extraction_json_user"]
            self._glean = PROMPTS["entity_continue_extraction_json"].format(entity_types=types)
            schema = extraction_json_schema(config.entity_types)
            self._response_format: dict[str, Any] | None = {
                "type": "json_schema", "json_schema": {"name": "extraction", "schema": schema}}
        else:
            examples = PROMPTS["entity_extraction_examples"].format(**delimiters)
            self._system = PROMPTS["entity_extraction_system"].format(
                entity_types=types, language=config.language, examples=examples, **delimiters)
            self._user = PROMPTS["entity_extraction_user"]
            self._glean = PROMPTS["entity_continue_extraction"].format(entity_types=types, **delimiters)
            self._response_format = None
        self._entity_types = types

    def extract(self, chunks: Sequence[Chunk]) -> Iterator[ChunkExtraction]:
        chunks = list(chunks)
        if not chunks:
            return
        pool = ThreadPoolExecutor(max_workers=min(self.concurrency, len(chunks)), thread_name_prefix="extract")
        try:
            futures = [pool.submit(self.extract_chunk, chunk) for chunk in chunks]
            for future in as_completed(futures):
                yield future.result()
        finally:
            # A caller that stops reading early does not wait for (or pay for) the chunks not started.
            pool.shutdown(wait=True, cancel_futures=True)

    def extract_chunk(self, chunk: Chunk) -> ChunkExtraction:
        """One chunk's records; never raises."""
        result = ChunkExtraction(chunk_id=chunk.id, extractor=self.name)
        if not chunk.text.strip():
            return result
        messages: list[Message] = [
            {"role": "system", "content": self._system},
            {"role": "user", "content": self._user.format(entity_types=self._entity_types, input_text=chunk.text)},
        ]
        merged = ParsedExtraction()
        try:
            for round_ in range(1 + self.config.gleaning_rounds):
                reply = self.chat_model.chat(messages, purpose="extract" if round_ == 0 else "glean",
                                             response_format=self._response_format, temperature=0.0)
                if not reply.cached:
                    result.llm_calls += 1
                added = merged.merge(parse_records(reply.text, self._types))
                if round_ and not added:
                    break  # the model has nothing more to add: further rounds would repeat it
                messages = [*messages, {"role": "assistant", "content": reply.text},
                            {"role": "user", "content": self._glean}]
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
