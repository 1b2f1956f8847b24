"""The one limit on a question's length, shared by asking (core.query.engine) and question sets (core.eval).

A question goes into every prompt whole (keywords, answer, judge); 120k characters of it would fill the model's
context and cost a fortune before anyone sees an answer. Real questions are a few hundred characters.
"""
from __future__ import annotations

MAX_QUESTION_CHARS = 4000


def question_too_long(question: str) -> str:
    """Why `question` is refused, or "" when its length is fine."""
    if len(question) <= MAX_QUESTION_CHARS:
        return ""
    return (f"the question is {len(question):,} characters long; the limit is {MAX_QUESTION_CHARS:,} "
            "(ask about one thing at a time)")


__all__ = ["MAX_QUESTION_CHARS", "question_too_long"]
