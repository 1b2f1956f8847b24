"""Plain-text and JSON renderings of a query result, for the CLI and exports."""
from __future__ import annotations

import json
from typing import Any

from core.query.records import MATCHED, UNSUPPORTED, QueryResult


def result_json(result: QueryResult) -> dict[str, Any]:
    """The result with each citation resolved to paper, page and passage (what a script needs)."""
    data = result.to_dict()
    data["mode"] = result.mode
    # The answer itself (number, name, phrase) at the top, as evaluation scores it (EM/F1).
    data["short_answer"] = result.answer.short_answer if result.answer else ""
    data["abstained"] = bool(result.answer and result.answer.abstained)
    data["bridge"] = result.answer.bridge if result.answer else ""  # a two-passage extractive answer's link
    data["citations"] = [{"n": s.n, "doc_id": s.doc_id, "paper": s.doc_title, "page": s.page + 1,
                          "chunk_id": s.chunk_id, "kind": s.kind, "items": s.item_indices, "bbox": s.bbox}
                         for s in result.context.sources]
    return data


def result_text(result: QueryResult, show_context: bool = False) -> str:
    lines = [f"mode: {result.mode} · retrieval {result.timings.get('retrieve_s', 0) * 1000:.0f} ms"
             + (f" · generation {result.timings['generate_s'] * 1000:.0f} ms" if "generate_s" in result.timings else "")
             + f" · LLM calls {result.llm_calls}"]
    if result.llm_free:
        lines.append(f"ran without an LLM: {', '.join(result.llm_free)}")
    for note in result.retrieval.notes:
        lines.append(f"note: {note}")
    if result.error:
        lines.append(f"error: {result.error}")
    if result.retrieval.keywords:
        k = result.retrieval.keywords
        lines.append(f"keywords ({k.source}): low = {', '.join(k.low)} | high = {', '.join(k.high)}")
    if show_context or result.answer is None:
        lines += ["", "=== context ===", result.context.text or "(empty: nothing was retrieved)"]
    if result.answer is not None:
        label = "extractive answer (no LLM)" if result.answer.extractive else f"answer ({result.answer.model})"
        lines += ["", f"=== {label} ==="]
        if result.answer.short_answer:
            lines.append(f"short answer: {result.answer.short_answer}")
        if result.answer.bridge:
            lines.append(f"two passages, through: {result.answer.bridge}")
        if result.answer.confidence is not None and result.answer.abstained:
            lines.append(f"nothing is stated: {result.answer.confidence:.0%} likely the papers do not answer it")
        elif result.answer.confidence is not None:
            lines.append(f"confidence: {result.answer.confidence:.0%}")
        flags = {UNSUPPORTED: "  ⟨not found in the passages⟩", MATCHED: "  ⟨source found by PaperGraph⟩"}
        for sentence in result.answer.sentences:
            flag = flags.get(sentence.support, "") or (
                "" if sentence.cited or result.answer.abstained else "  ⟨no citation⟩")
            lines.append(sentence.text + flag)
        if result.answer.unknown_citations:
            lines.append(f"(markers that match no source: {result.answer.unknown_citations})")
    cited = {n for s in (result.answer.sentences if result.answer else []) for n in s.citations}
    if result.context.sources:
        lines += ["", "=== sources ==="]
        for s in result.context.sources:
            mark = "*" if s.n in cited else " "
            lines.append(f"{mark}[{s.n}] {s.doc_title} — page {s.page + 1} — {s.section or '(no section)'} "
                         f"({s.kind}, {s.chunk_id})")
    return "\n".join(lines)


def dumps(result: QueryResult) -> str:
    return json.dumps(result_json(result), indent=2, default=str)
