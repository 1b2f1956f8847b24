"""Where descriptions are made, and how an item's chunk follows its description.

- Ingest (core/ingest._index): every item gets an offline description, a few milliseconds each (plus OCR for a
  raster figure), so a paper is searchable as soon as it is indexed. A VLM description already made for the
  very same item (same fingerprint: a retry, a re-index) is used instead.
- Graph stage (core/pipeline/graph/build.extract_document, before entity extraction): with a VLM configured, each item
  not yet described by that model is sent to it, one cached call per item; its description replaces the
  offline one in the item's chunk and windows, so the extraction that follows reads it and the item's entity
  links to what the VLM saw. A VLM call takes seconds to minutes: running it here keeps new papers from waiting
  (the app's worker pauses the graph stage for uploads), and a failure leaves the offline description in place.
- The gallery's "Re-describe" button: one item, now, bypassing the cache.

Updating a chunk: the new windows are written (old window ids deleted first), then the chunk row. A crash in
between leaves the chunk's old text, which differs from its description, so the next run redoes the update.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path

from core.content.media_doc import MediaDoc, load_media_doc
from core.content.media_items import fingerprint, is_media, media_labels
from core.library import Library
from core.pipeline.media.context import surrounding_text
from core.pipeline.media.descriptions import chunk_text, offline_description
from core.pipeline.media.page_text import texts_in_boxes
from core.schema.ids import window_ids
from core.schema.media import OFFLINE, VLM, Description
from core.schema.records import ContentItem, DocStatus

log = logging.getLogger(__name__)

Progress = Callable[[str, float], None]
# Items needing the text inside their box: figures, equations kept as images, tables the parser did not read.
_NEEDS_INNER_TEXT = ("image", "equation")


def _needs_inner_text(item: ContentItem) -> bool:
    return item.type in _NEEDS_INNER_TEXT or (item.type == "table" and not item.table_body)


def box_texts(pdf_path: Path, items: list[ContentItem], ocr: bool) -> dict[int, str]:
    """Text inside the box of each figure, image-only equation and image-only table (PDF text layer, else OCR)."""
    wanted = [i for i in items if _needs_inner_text(i) and i.bbox and not (i.type == "equation" and i.text)]
    texts = texts_in_boxes(pdf_path, [(i.page_idx, i.bbox) for i in wanted], ocr=ocr)
    return {i.index: t for i, t in zip(wanted, texts) if t}


def inner_texts(lib: Library, doc_id: str, items: list[ContentItem]) -> dict[int, str]:
    return box_texts(lib.workspace.source_pdf(doc_id), items, lib.settings.parsing.ocr)


def describe_offline(pdf_path: Path, doc_id: str, items: list[ContentItem], ocr: bool) -> list[Description]:
    """Every table, figure and equation's offline description; needs no workspace (a compute worker runs it)."""
    media = [i for i in items if is_media(i)]
    labels = media_labels(items)
    inner = box_texts(pdf_path, media, ocr)
    return [Description(doc_id=doc_id, item_index=i.index, fingerprint=fingerprint(i), source=OFFLINE,
                        text=offline_description(i, labels[i.index], inner.get(i.index, ""))) for i in media]


def offline_descriptions(lib: Library, doc_id: str, items: list[ContentItem]) -> list[Description]:
    return describe_offline(lib.workspace.source_pdf(doc_id), doc_id, items, lib.settings.parsing.ocr)


def chunk_texts(doc: MediaDoc) -> dict[int, str]:
    """Item index → chunk text (caption + current description) of every table, figure and equation."""
    out = {}
    for item in doc.media:
        description = doc.current(item)
        if description is not None:
            out[item.index] = chunk_text(item, doc.labels[item.index], description.text)
    return out


def media_chunk_texts(lib: Library, doc_id: str, items: list[ContentItem]) -> dict[int, str]:
    """Item index → chunk text (caption + description) for every table, figure and equation of a paper being
    indexed; the offline descriptions are stored for the gallery on the way."""
    offline = offline_descriptions(lib, doc_id, items)
    store = lib.descriptions
    store.replace_source(doc_id, OFFLINE, offline)
    return chunk_texts(load_media_doc(lib, doc_id, items))


# ---------------------------------------------------------------------------------------------- chunk updates

def _max_windows(tokens: int, window: int, overlap: int) -> int:
    return tokens // max(window - overlap, 1) + 3


def apply_description(lib: Library, doc_id: str, item: ContentItem, label: str, description: Description) -> bool:
    """Make the item's chunk (and its embedding windows) say `description`; False when there was nothing to
    change (same text already, or the paper has no such chunk: it is being re-indexed, or was deleted)."""
    from core.pipeline.chunking import media_chunk_windows, window_metadata

    doc = lib.documents.get(doc_id)
    if doc is None or doc.status != DocStatus.READY:
        return False
    chunks = lib.chunks.by_doc(doc_id)
    chunk = next((c for c in chunks if c.kind == item.type and c.item_indices == [item.index]), None)
    text = chunk_text(item, label, description.text)
    if chunk is None or chunk.text == text:
        return False
    config = lib.settings.chunking
    new = replace(chunk, text=text)
    new.tokens, windows = media_chunk_windows(new, config, lib.tokenizer(), item)
    vectors = lib.embedder().embed([w.text for w in windows], batch_size=lib.settings.embedding.batch_size)
    old = max(_max_windows(chunk.tokens, config.window_tokens, config.window_overlap), len(windows))
    lib.windows.delete(window_ids(chunk.id, old))
    lib.windows.upsert([w.id for w in windows], vectors, [w.text for w in windows],
                       [window_metadata(w) for w in windows])
    lib.chunks.put_doc_chunks(doc_id, [new if c.id == chunk.id else c for c in chunks])
    return True


# ---------------------------------------------------------------------------------------------- the VLM

def _vlm_request(lib: Library, doc: MediaDoc, item: ContentItem, title: str, inner: dict[int, str]):
    from core.content.images import item_png
    from core.pipeline.media.vlm_describe import VLMRequest

    png = item_png(lib, doc.doc_id, item)
    if png is None:
        return None
    context = surrounding_text(doc.items, item, lib.settings.vlm.context_tokens)
    return VLMRequest(item=item, label=doc.labels[item.index], paper_title=title, png=png, context=context,
                      inner_text=inner.get(item.index, ""))


def _call_vlm(lib: Library, model, doc_id: str, req, fresh: bool = False) -> Description:
    from core.models.llm.base import LLMError
    from core.pipeline.media.vlm_describe import PURPOSE, build_messages, parse_reply

    item = req.item
    messages = build_messages(req, lib.settings.graph.entity_types, lib.settings.graph.language)
    response_format = {"type": "json_object"}
    max_tokens = lib.settings.vlm.max_tokens
    base = Description(doc_id=doc_id, item_index=item.index, fingerprint=fingerprint(item), source=VLM, text="",
                       model=model.name)
    if fresh:
        _forget_cached_reply(lib, model.name, messages, response_format, max_tokens)
    try:
        reply = model.chat(messages, purpose=PURPOSE, response_format=response_format, max_tokens=max_tokens)
    except LLMError as exc:
        return replace(base, message=f"the VLM call failed: {exc}")
    parsed = parse_reply(reply.text)
    return replace(base, text=parsed.description, entities=parsed.entities, message=parsed.message)


def _forget_cached_reply(lib: Library, model_name: str, messages, response_format, max_tokens) -> None:
    # Re-describing on request must reach the model: drop this exact request's cached reply (same key as
    # CachedChatModel.chat computes), leaving every other cached reply alone.
    from core.models.llm.cache import cache_key

    lib.llm_cache.forget(cache_key(model_name, messages, response_format, max_tokens, None))


@dataclass
class VLMOutcome:
    described: int = 0
    failed: int = 0
    skipped: int = 0  # no image could be had
    messages: list[str] = field(default_factory=list)
    interrupted: bool = False


def describe_document_media(lib: Library, doc_id: str, progress: Progress | None = None,
                            stop: threading.Event | None = None) -> VLMOutcome:
    """With a VLM configured: describe each item of the paper it has not described yet (one cached call per
    item, `vlm.concurrency` at a time) and put the description into the item's chunk. Without one: nothing."""
    outcome = VLMOutcome()
    model = lib.vision_model()
    if model is None:
        return outcome
    doc_record = lib.documents.get(doc_id)
    if doc_record is None:
        return outcome
    doc = load_media_doc(lib, doc_id)
    todo = []
    for item in doc.media:
        vlm = doc.stored.get(item.index, {}).get(VLM)
        if vlm and vlm.text and vlm.fingerprint == fingerprint(item) and vlm.model == model.name:
            # Described already; make sure its chunk says so (a crash may have come between the two writes).
            apply_description(lib, doc_id, item, doc.labels[item.index], vlm)
            continue
        todo.append(item)
    if not todo:
        return outcome
    inner = inner_texts(lib, doc_id, todo)
    store = lib.descriptions
    total = len(todo)
    if progress:
        progress(f"describing {total} tables, figures and equations with the VLM", 0.0)
    with ThreadPoolExecutor(max_workers=lib.settings.vlm.concurrency, thread_name_prefix="papergraph-vlm") as pool:
        futures = {}
        for item in todo:
            req = _vlm_request(lib, doc, item, doc_record.display_title, inner)
            if req is None:
                outcome.skipped += 1
                continue
            futures[pool.submit(_call_vlm, lib, model, doc_id, req)] = item
        for n, future in enumerate(as_completed(futures), 1):
            item = futures[future]
            description = future.result()
            store.put([description])
            if description.text:
                outcome.described += 1
                apply_description(lib, doc_id, item, doc.labels[item.index], description)
            else:
                outcome.failed += 1
                outcome.messages.append(f"{doc.labels[item.index]}: {description.message}")
            if progress:
                progress(f"described {n}/{total} items with the VLM", n / total)
            if stop is not None and stop.is_set():
                for pending in futures:
                    pending.cancel()
                outcome.interrupted = True
                break
    return outcome


def redescribe_item(lib: Library, doc_id: str, item_index: int) -> Description:
    """Describe one item again, now: by the VLM when one is configured (its cached reply is bypassed), else
    offline. The item's chunk follows; the graph picks the new text up on its next run for the paper."""

    doc = load_media_doc(lib, doc_id)
    item = next((i for i in doc.media if i.index == item_index), None)
    if item is None:
        raise ValueError(f"item {item_index} is not a table, figure or equation of this paper")
    model = lib.vision_model()
    record = lib.documents.get(doc_id)
    description = None
    if model is not None:
        req = _vlm_request(lib, doc, item, record.display_title if record else "", inner_texts(lib, doc_id, [item]))
        if req is not None:
            description = _call_vlm(lib, model, doc_id, req, fresh=True)
    if description is None:
        inner = inner_texts(lib, doc_id, [item])
        description = Description(doc_id=doc_id, item_index=item_index, fingerprint=fingerprint(item), source=OFFLINE,
                                  text=offline_description(item, doc.labels[item_index], inner.get(item_index, "")))
    lib.descriptions.put([description])
    if description.text:
        apply_description(lib, doc_id, item, doc.labels[item.index], description)
    return description
