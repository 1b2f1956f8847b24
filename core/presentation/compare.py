"""The Compare page's summary: one row per mode (what it answered, how sure it was, how long it took, what it
cost, how many sources it assembled), and how the per-mode details are laid out. Plain values, no Streamlit."""
from __future__ import annotations

import re
from collections.abc import Mapping

from core.query.records import QueryResult

SIDE_BY_SIDE_MAX = 3  # up to this many modes read well in columns; more go to one tab each
FIRST_WORDS = 12
_MARKERS = re.compile(r"\s*\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\]")


def first_words(text: str, limit: int = FIRST_WORDS) -> str:
    """The first `limit` words of an answer, without its [n] markers, with "…" when there is more."""
    words = _MARKERS.sub("", text or "").split()
    return " ".join(words[:limit]) + (" …" if len(words) > limit else "")


def answer_gist(result: QueryResult) -> str:
    """What a mode answered, in a table cell: its short answer, else the answer's first words."""
    if result.error:
        return f"error: {first_words(result.error)}"
    answer = result.answer
    if answer is None:
        return "(context only)"
    if answer.abstained:
        return "(no passage answers this directly)"
    short = (answer.short_answer or "").strip()
    return short or first_words(answer.text) or "(empty answer)"


def confidence_text(result: QueryResult) -> str:
    """The answer's confidence as a percentage ("83%"), "–" when the mode gave none (an error, a context-only run,
    a reader that states no confidence). A value outside 0–1 or not a number is not shown as a percentage."""
    confidence = result.answer.confidence if result.answer is not None and not result.error else None
    if not isinstance(confidence, (int, float)) or not 0.0 <= confidence <= 1.0:  # NaN fails both comparisons
        return "–"
    return f"{confidence:.0%}"


def summary_rows(results: Mapping[str, QueryResult]) -> list[dict]:
    """One row per mode, in the order the modes ran: the answer's gist, latency, LLM calls, tokens, sources."""
    rows = []
    for mode, result in results.items():
        cited = {n for s in (result.answer.sentences if result.answer else []) for n in s.citations}
        known = {s.n for s in result.context.sources}
        rows.append({
            "mode": str(mode),
            "answer": answer_gist(result),
            "confidence": confidence_text(result),
            "latency (s)": round(float(result.timings.get("total_s", 0.0)), 2),
            "LLM calls": int(result.llm_calls),
            "cached calls": int(result.llm_cached),
            "tokens": int(sum(result.tokens.values())) if result.tokens else 0,
            "sources": len(result.context.sources),
            "cited": len(cited & known),
        })
    return rows


def side_by_side(modes: int) -> bool:
    """Columns for a few modes; one tab per mode beyond that (seven columns wrap words mid-way)."""
    return modes <= SIDE_BY_SIDE_MAX
