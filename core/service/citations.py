"""Citations out of what the query layer returns: a context source, a search hit, a stored chunk. The quote is
the passage's sentence (or two) that best matches what cites it — the query of a search, the answer sentences that
cite a source, the names a graph link joins — at most QUOTE_CHARS long."""
from __future__ import annotations

import re

from core.content.content_list import MalformedContentList
from core.content.pages import load_items
from core.library import Library
from core.query.reading.features import rarity
from core.query.reading.words import LOWER_STOP, WORD, stem
from core.query.records import Source
from core.schema.records import Chunk, SearchHit
from core.service.records import Citation

QUOTE_CHARS = 240
SHORT_QUOTE = 120  # a best sentence shorter than this is quoted with the next one (a heading, "Table 2 shows…")
_MARKER = re.compile(r"\[\d+(?:\s*,\s*\d+)*\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")


def _content_stems(text: str) -> list[str]:
    """A text's words in order, without the commonest ones, as crude stems ("nodes" and "node" meet)."""
    return [stem(w) for w in WORD.findall(_MARKER.sub("", text).lower()) if w not in LOWER_STOP and len(w) > 1]


class _Cue:
    """What a sentence is scored against: the cue's content words, each weighed by how rare it is in English
    ("nodes" and "literature" say more than "paper": wordfreq, as the reader weighs question words), and its pairs of
    neighbouring words. A sentence holding a pair as the cue says it ("unique paper nodes") matches the cue's phrase,
    not only its words: asked "unique paper nodes in the literature graph", the sentence "…resulting in 37M unique
    paper nodes" beats "The literature graph has 12M nodes of this type", which holds as many (and rarer) words."""

    def __init__(self, cue: str):
        self.weights: dict[str, float] = {}
        for word in WORD.findall(_MARKER.sub("", cue).lower()):
            if word not in LOWER_STOP and len(word) > 1:
                self.weights[stem(word)] = max(self.weights.get(stem(word), 0.0), rarity(word))
        words = _content_stems(cue)
        self.pairs = set(zip(words, words[1:]))

    def score(self, sentence: str) -> float:
        words = _content_stems(sentence)
        single = sum(self.weights.get(w, 0.0) for w in set(words))
        pairs = self.pairs & set(zip(words, words[1:]))
        return single + sum(self.weights[a] + self.weights[b] for a, b in pairs) / 2


def quote_of(text: str, cue: str = "") -> str:
    """The sentence of `text` that best matches `cue` (_Cue; the first sentence when none shares a word), with the
    next one when it is short; a sentence longer than QUOTE_CHARS is cut around its first matching word, so the quote
    always shows what matched."""
    sentences = [s.strip() for s in _SENTENCE_END.split(" ".join((text or "").split())) if s.strip()]
    if not sentences:
        return ""
    matcher = _Cue(cue)
    scores = [matcher.score(sentence) for sentence in sentences]
    best = max(range(len(sentences)), key=lambda i: (scores[i], -i))
    passage = sentences[best]
    if len(passage) < SHORT_QUOTE and best + 1 < len(sentences):
        passage = f"{passage} {sentences[best + 1]}"
    return _cut(passage, matcher.weights)


def _cut(passage: str, weights: dict[str, float]) -> str:
    if len(passage) <= QUOTE_CHARS:
        return passage
    first = next((m.start() for m in WORD.finditer(passage) if stem(m.group().lower()) in weights), 0)
    start = 0 if first < QUOTE_CHARS // 2 else passage.rfind(" ", 0, first - QUOTE_CHARS // 4) + 1
    lead = "…" if start else ""
    room = QUOTE_CHARS - len(lead) - 1
    body = passage[start:]
    return lead + (body if len(body) <= room + 1 else body[:room].rstrip() + "…")


def from_source(source: Source, cue: str = "") -> Citation:
    return Citation(n=source.n, paper_id=source.doc_id, paper=source.doc_title, page=source.page + 1,
                    box=list(source.bbox) if source.bbox else None, quote=quote_of(source.text, cue),
                    chunk_id=source.chunk_id, kind=source.kind, section=source.section)


def from_hit(hit: SearchHit, n: int, query: str = "") -> Citation:
    """The quote is the sentence of the window that matched (the stored text the query's vector was nearest to)
    sharing the most of the query's words, not the window's first sentence."""
    return Citation(n=n, paper_id=hit.chunk.doc_id, paper=hit.doc_title, page=hit.page + 1,
                    box=list(hit.bbox) if hit.bbox else None, quote=quote_of(hit.window_text, query),
                    chunk_id=hit.chunk.id, kind=hit.chunk.kind, section=hit.chunk.section)


def chunk_box(lib: Library, chunk: Chunk, page_idx: int | None) -> list[float] | None:
    """The union box of the chunk's items on its page, or None (no page, no boxes, an unreadable parse)."""
    if page_idx is None:
        return None
    try:
        items = load_items(lib, chunk.doc_id)
    except (MalformedContentList, OSError):
        return None
    wanted = set(chunk.item_indices)
    boxes = [i.bbox for i in items if i.index in wanted and i.page_idx == page_idx and i.bbox]
    if not boxes:
        return None
    return [min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)]


def from_chunk(lib: Library, chunk: Chunk, n: int, title: str, cue: str = "") -> Citation:
    page = chunk.pages[0] if chunk.pages else None
    return Citation(n=n, paper_id=chunk.doc_id, paper=title, page=None if page is None else page + 1,
                    box=chunk_box(lib, chunk, page), quote=quote_of(chunk.text, cue), chunk_id=chunk.id,
                    kind=chunk.kind, section=chunk.section)
