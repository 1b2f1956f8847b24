"""The context of a small local model: the reader's most probable sentences, not whole passages.

The embedded model reads ~20 prompt tokens/s on two cores: a 3,000-token context costs it minutes. The LLM-free
reader already ranks every sentence of the retrieved passages by how likely it holds the answer
(core.query.reading.extractive),
so the model gets those sentences, grouped under their passage's number [n] in the passages' order, up to a token
budget. Every [n] still names a source of the full context, so its citations resolve and are checked against the
whole passage (core.query.reading.grounding).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from core.query.context import count_tokens
from core.query.reading.extractive import rank
from core.query.records import Context, Retrieval


def compact_context(question: str, context: Context, retrieval: Retrieval | None, lib, qvec: np.ndarray, tokenizer,
                    budget: int) -> Context:
    """The context with its text made of the best sentences (at most `budget` tokens); its sources unchanged."""
    _, ranked = rank(question, context, retrieval, lib, qvec)
    if not ranked:
        return context
    kept: dict[int, list[str]] = {}
    used = 0
    for c, n in zip(ranked, count_tokens(tokenizer, [c.text for c in ranked])):
        if used + n > budget:
            if used:
                break
            continue
        kept.setdefault(c.n, []).append(c.text)
        used += n
    blocks = []
    for source in context.sources:
        if source.n in kept:
            title = source.doc_title or source.doc_id[:12]
            blocks.append(f"[{source.n}] {title}, page {source.page + 1}\n" + " ".join(kept[source.n]))
    return replace(context, text="-----Sources (cite as [n])-----\n" + "\n\n".join(blocks),
                   tokens={**context.tokens, "chunks": used})
