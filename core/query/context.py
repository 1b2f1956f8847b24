"""The context a model reads: entities, relations and passages in separate sections, each within its token
budget, de-duplicated, every passage numbered so an answer can cite it as [n].

Passages are placed strongest first and last, weakest in the middle: models use the ends of a long context
best (Liu et al., "Lost in the Middle"). Numbers follow strength, not position, so [1] is always the best.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from core.query.reading.answer_types import NUMBER, answer_type, yes_no_question
from core.query.records import Context, QueryParams, Retrieval, RetrievedChunk, Source
from core.text.structured_abstract import section_kind

MIN_PARTIAL_TOKENS = 80  # a passage cut shorter than this tells the model too little to be worth its place


# Token counts by (tokenizer, text hash): the same passages and entity descriptions come back question after
# question, and counting them cost more than the whole extractive answer (20 ms a context on a busy machine).
_COUNTS: dict[tuple[int, int], int] = {}
MAX_COUNTS = 50_000


def count_tokens(tokenizer, texts: Sequence[str]) -> list[int]:
    if not texts:
        return []
    keys = [(id(tokenizer), hash(t)) for t in texts]
    missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in _COUNTS))
    if missing:
        if len(_COUNTS) > MAX_COUNTS:
            _COUNTS.clear()
        for t, e in zip(missing, tokenizer.encode_batch(missing, add_special_tokens=False)):
            _COUNTS[(id(tokenizer), hash(t))] = len(e.ids)
    return [_COUNTS.get(k) or len(tokenizer.encode(t, add_special_tokens=False).ids) for t, k in zip(texts, keys)]


def _cut(tokenizer, text: str, tokens: int) -> str:
    encoding = tokenizer.encode(text, add_special_tokens=False)
    if len(encoding.ids) <= tokens:
        return text
    end = encoding.offsets[tokens - 1][1]
    return text[:end].rstrip() + " …"


def _around(tokenizer, text: str, window: str, tokens: int) -> str:
    """At most `tokens` tokens of a passage, centred on the window that matched the question (its stored
    embedding window), cut at word boundaries and marked "…" where something was left out."""
    encoding = tokenizer.encode(text, add_special_tokens=False)
    offsets = encoding.offsets
    if len(offsets) <= tokens:
        return text
    at = _find(text, window)
    if at is None:
        return _cut(tokenizer, text, tokens)
    start_char, end_char = at
    first = next((k for k, (a, b) in enumerate(offsets) if b > start_char), 0)
    last = next((k for k, (a, b) in enumerate(offsets) if a >= end_char), len(offsets))
    spare = max(tokens - (last - first), 0)
    lo = max(0, first - spare // 3)  # a little before (what the sentence continues), more after
    hi = min(len(offsets), lo + tokens)
    lo = max(0, hi - tokens)
    head = text[offsets[lo][0]:offsets[hi - 1][1]].strip()
    return f"{'… ' if lo > 0 else ''}{head}{' …' if hi < len(offsets) else ''}"


def _find(text: str, window: str) -> tuple[int, int] | None:
    """Where the window sits in the passage (windows are cut from it, spaces may differ)."""
    words = (window or "").split()
    if not words:
        return None
    probe = re.compile(r"\s+".join(re.escape(w) for w in words[:8]))
    m = probe.search(text)
    if not m:
        return None
    tail = re.compile(r"\s+".join(re.escape(w) for w in words[-8:]))
    end = tail.search(text, m.start())
    return m.start(), end.end() if end else m.end()


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def ends_first(items: list) -> list:
    """1, 3, 5, … 6, 4, 2: the strongest at both ends."""
    return items[0::2] + items[1::2][::-1]


def _budgeted(tokenizer, lines: list[str], budget: int) -> tuple[list[str], int, int]:
    kept, used = [], 0
    for line, n in zip(lines, count_tokens(tokenizer, lines)):
        if used + n > budget:
            continue  # a long description gives its place to the next ones that fit
        kept.append(line)
        used += n
    return kept, used, len(lines) - len(kept)


def source_of(n: int, chunk: RetrievedChunk, text: str) -> Source:
    hit = chunk.hit
    return Source(n=n, chunk_id=hit.chunk.id, doc_id=hit.chunk.doc_id, doc_title=hit.doc_title, page=hit.page,
                  bbox=hit.bbox, kind=hit.chunk.kind, section=hit.chunk.section, text=text,
                  item_indices=list(hit.chunk.item_indices))


def build_context(retrieval: Retrieval, params: QueryParams, tokenizer, extra_sections: Sequence[tuple[str, str]] = (),
                  question: str = "") -> Context:
    tokens: dict[str, int] = {}
    dropped: dict[str, int] = {}
    sections: list[str] = []
    for title, body in extra_sections:  # community reports, map points
        sections.append(f"-----{title}-----\n{body}")
        tokens[title.lower()] = count_tokens(tokenizer, [body])[0]

    entity_lines = [f"- {_one_line(e.name)} ({e.type}): {_one_line(e.description)}"
                    for e in _unique(retrieval.entities, lambda e: e.key)]
    kept, tokens["entities"], dropped["entities"] = _budgeted(tokenizer, entity_lines, params.max_entity_tokens)
    if kept:
        sections.append("-----Knowledge graph entities-----\n" + "\n".join(kept))

    relation_lines = [f"- {_one_line(r.source_name)} — {_one_line(r.target_name)} ({_one_line(r.keywords)}): "
                      f"{_one_line(r.description)}" for r in _unique(retrieval.relations, lambda r: r.pair)]
    kept, tokens["relations"], dropped["relations"] = _budgeted(tokenizer, relation_lines, params.max_relation_tokens)
    if kept:
        sections.append("-----Knowledge graph relations-----\n" + "\n".join(kept))

    sources: list[Source] = []
    used = 0
    chunks = _unique(retrieval.chunks, lambda c: c.id)
    if question:
        chunks = results_first(chunks, question, getattr(params, "results_first", 0))
    longest = getattr(params, "max_passage_tokens", 0)
    texts = [_around(tokenizer, c.hit.chunk.text, c.hit.window_text, longest) if longest else c.hit.chunk.text
             for c in chunks]
    for chunk, text, n in zip(chunks, texts, count_tokens(tokenizer, texts)):
        left = params.max_chunk_tokens - used
        if n > left:
            if left < MIN_PARTIAL_TOKENS:
                break
            text, n = _around(tokenizer, text, chunk.hit.window_text, left), left  # keep what matched
        sources.append(source_of(len(sources) + 1, chunk, text))
        used += n
    numbers = {s.chunk_id: s.n for s in sources}
    for chunk, source in zip(chunks, sources):
        if chunk.bridge and chunk.bridge[0] in numbers:  # the passage it continues is shown too
            source.bridge_from, source.bridge_name = numbers[chunk.bridge[0]], chunk.bridge[1]
    tokens["chunks"], dropped["chunks"] = used, len(chunks) - len(sources)
    if sources:
        blocks = [f"[{s.n}] {s.doc_title or s.doc_id[:12]}, page {s.page + 1}"
                  f"{', ' + s.section if s.section else ''} ({s.kind})\n{s.text.strip()}" for s in ends_first(sources)]
        sections.append("-----Sources (cite as [n])-----\n" + "\n\n".join(blocks))
    return Context(text="\n\n".join(sections), sources=sources, tokens=tokens, dropped=dropped)


def results_first(chunks: list, question: str, lift: int) -> list:
    """Retrieved chunks with those from a results or conclusions section (core/text/structured_abstract.section_kind)
    moved up by at most `lift` places when the question asks yes or no, or for a number: the finding is stated
    there, the background only motivates it. A small bias: a passage never passes more than `lift` others, and the
    order among the lifted and among the rest is kept."""
    if lift <= 0 or not (yes_no_question(question) or answer_type(question) == NUMBER):
        return chunks
    keyed = [(n - lift - 0.5 if section_kind(c.hit.chunk.section or "") else n, c) for n, c in enumerate(chunks)]
    return [c for _, c in sorted(keyed, key=lambda pair: pair[0])]


def _unique(items, key) -> list:
    seen, out = set(), []
    for item in items:
        k = key(item)
        if k not in seen:
            seen.add(k)
            out.append(item)
    return out
