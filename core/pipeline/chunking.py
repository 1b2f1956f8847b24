"""Content items → chunks (what retrieval returns) → embedding windows (what the embedder reads).

Chunks follow LightRAG's token window (1200 tokens, 100 overlap); the section-aware strategy restarts the window
at every level-1/2 heading so a chunk never mixes two sections. Tables, figures and equations become chunks of
their own: the ingest passes each one's chunk text (caption + description, core/multimodal); without it the
item's own words are used. The embedder reads at most 256 tokens, so every chunk is embedded as small windows
that point back to it: search matches what a chunk says anywhere in it, not only its first 256 tokens.
"""
from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from core.content.items import item_text, media_text
from core.schema import ids
from core.schema.records import Chunk, ContentItem
from core.settings.config import ChunkingConfig
from core.text.structured_abstract import labelled_parts

# Running headers, footers and page numbers repeat on every page and say nothing about the paper.
SKIPPED_TYPES = {"header", "footer", "page_number", "discarded"}
MEDIA_TYPES = {"table", "image", "equation"}
ITEM_SEPARATOR = "\n\n"


@dataclass
class Window:
    id: str
    chunk_id: str
    doc_id: str
    text: str
    page: int
    item_indices: list[int]
    bbox: list[float] | None
    section: str
    kind: str


def window_metadata(w: Window) -> dict:
    """What the vector store keeps beside a window's vector: search filters and the hit's page and box."""
    return {"doc_id": w.doc_id, "chunk_id": w.chunk_id, "page": w.page, "kind": w.kind, "section": w.section,
            "items": w.item_indices, "bbox": [round(v, 1) for v in w.bbox] if w.bbox else None}


@dataclass
class ChunkedDocument:
    chunks: list[Chunk] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)


def _sections(items: list[ContentItem], strategy: str) -> list[tuple[str, list[ContentItem]]]:
    """Groups of text items that one token window may span, each with its section heading. A structured
    abstract's labels ("BACKGROUND: …", "RESULTS: …", core/text/structured_abstract.py) start sections too: a
    paragraph holding several is read as one piece per label (each piece keeps the paragraph's index and box)."""
    groups: list[tuple[str, list[ContentItem]]] = [("", [])]
    section = ""
    for item in items:
        if item.type in SKIPPED_TYPES or item.type in MEDIA_TYPES or not item_text(item):
            continue
        if item.is_heading and item.text_level <= 2:
            section = " ".join(item.text.split())[:200]
            if strategy == "section":
                groups.append((section, []))
        elif item.type == "text" and (parts := labelled_parts(item_text(item))):
            for label, text in parts:
                if label:
                    section = label
                    if strategy == "section":
                        groups.append((section, []))
                groups[-1][1].append(replace(item, text=text))
            continue
        groups[-1][1].append(item)
    return [(s, g) for s, g in groups if g]


def _bbox_union(boxes: list[list[float]]) -> list[float] | None:
    if not boxes:
        return None
    return [min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)]


# A sentence ends at . ! or ? (perhaps closed by a quote or bracket) before whitespace and a capital, digit or
# bracket; "et al." and "e.g." style abbreviations are too rare at a window's edge to be worth a model.
_SENTENCE_END = re.compile(r"[.!?][\"')\]]?\s+(?=[A-Z0-9(\[])")


class _Spans:
    """A section's text with the token offsets and item spans needed to cut it anywhere and say where it came from."""

    def __init__(self, items: list[ContentItem], tokenizer):
        pieces, self.item_spans = [], []
        pos = 0
        for item in items:
            text = item_text(item)
            self.item_spans.append((pos, pos + len(text), item))
            pieces.append(text)
            pos += len(text) + len(ITEM_SEPARATOR)
        self.text = ITEM_SEPARATOR.join(pieces)
        self.offsets = [o for o in tokenizer.encode(self.text, add_special_tokens=False).offsets]
        starts = {s for s, _, _ in self.item_spans} | {m.end() for m in _SENTENCE_END.finditer(self.text)}
        # Token indices where a sentence or an item begins: the preferred places to cut.
        self.boundaries = [i for i, (start, _) in enumerate(self.offsets) if start in starts]

    def cut(self, first: int, last: int) -> tuple[str, int, int]:
        """Text of tokens [first, last), and its character span."""
        start, end = self.offsets[first][0], self.offsets[last - 1][1]
        return self.text[start:end], start, end

    def items_in(self, start: int, end: int) -> list[ContentItem]:
        return [item for s, e, item in self.item_spans if s < end and e > start]

    def windows(self, first: int, last: int, size: int, overlap: int) -> list[tuple[int, int]]:
        """Token windows of at most `size` over [first, last) that end where a sentence ends when one does in
        the window's second half; such windows need no overlap, the others (a cut inside a long sentence)
        overlap by `overlap` tokens, as LightRAG's plain windows do."""
        out = []
        start = first
        while start < last:
            end = min(start + size, last)
            if end < last:
                i = bisect.bisect_right(self.boundaries, end) - 1
                if i >= 0 and self.boundaries[i] > start + size // 2:
                    out.append((start, self.boundaries[i]))
                    start = self.boundaries[i]
                    continue
            out.append((start, end))
            if end >= last:
                break
            start = end - overlap
        return out


def _embedding_windows(chunk: Chunk, spans: _Spans, token_range: tuple[int, int],
                       config: ChunkingConfig) -> list[Window]:
    out = []
    for w, (a, b) in enumerate(spans.windows(*token_range, config.window_tokens, config.window_overlap)):
        text, start, end = spans.cut(a, b)
        items = spans.items_in(start, end)
        page = items[0].page_idx if items else chunk.pages[0]
        on_page = [i for i in items if i.page_idx == page]
        out.append(Window(
            id=ids.window_id(chunk.id, w), chunk_id=chunk.id, doc_id=chunk.doc_id, text=text, page=page,
            item_indices=[i.index for i in on_page],
            bbox=_bbox_union([i.bbox for i in on_page if i.bbox]), section=chunk.section, kind=chunk.kind))
    return out


def media_chunk_windows(chunk: Chunk, config: ChunkingConfig, tokenizer, item: ContentItem) -> tuple[int, list[Window]]:
    """An item chunk's token count and embedding windows, from its text: used when a chunk is built and when a
    new description replaces its text."""
    spans = _Spans([ContentItem(type=item.type, page_idx=item.page_idx, index=item.index, text=chunk.text,
                                bbox=item.bbox)], tokenizer)
    return len(spans.offsets), _embedding_windows(chunk, spans, (0, len(spans.offsets)), config)


def chunk_document(doc_id: str, items: list[ContentItem], config: ChunkingConfig, tokenizer,
                   media_texts: Mapping[int, str] | None = None) -> ChunkedDocument:
    """`media_texts`: item index → the chunk text of a table, figure or equation (its caption and description);
    without it, an item chunk holds the item's own words (media_text)."""
    out = ChunkedDocument()

    def new_chunk(kind, text, chunk_items, section, tokens):
        chunk = Chunk(id=ids.chunk_id(doc_id, len(out.chunks)), doc_id=doc_id, index=len(out.chunks), kind=kind,
                      text=text, pages=sorted({i.page_idx for i in chunk_items}),
                      item_indices=list(dict.fromkeys(i.index for i in chunk_items)), section=section, tokens=tokens)
        out.chunks.append(chunk)
        return chunk

    for section, group in _sections(items, config.strategy):
        spans = _Spans(group, tokenizer)
        for first, last in spans.windows(0, len(spans.offsets), config.chunk_tokens, config.overlap_tokens):
            text, start, end = spans.cut(first, last)
            chunk = new_chunk("text", text, spans.items_in(start, end), section, last - first)
            out.windows.extend(_embedding_windows(chunk, spans, (first, last), config))

    section = ""
    for item in items:
        if item.is_heading and item.text_level <= 2:
            section = " ".join(item.text.split())[:200]
        if item.type not in MEDIA_TYPES:
            continue
        text = media_texts.get(item.index, "") if media_texts is not None else media_text(item)
        if not text:
            continue  # an uncaptioned figure with no text inside: nothing to search, still shown in the gallery
        chunk = new_chunk(item.type, text, [item], section, 0)
        chunk.tokens, windows = media_chunk_windows(chunk, config, tokenizer, item)
        out.windows.extend(windows)
    return out
