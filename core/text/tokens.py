"""Token counts estimated from characters, where an exact tokenizer pass is not worth its cost."""
from __future__ import annotations


def approx_tokens(text: str) -> int:
    # ~4 characters per token for English; exact counts are not worth a tokenizer pass per node.
    return (len(text) + 3) // 4
