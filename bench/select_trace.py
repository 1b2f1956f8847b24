"""Each call of the select reader's model, as it happened: for refitting select's decisions offline (the verdict's
bias, the calibration) without asking the model again.

bench/answers.py --trace FILE installs `record` around core.query.reading.select.choose: per call, the question,
the form of reply asked for, the shown sentences with their extractive probability, the reply, the odds of the first
generated tokens, the prompt's tokens and the call's seconds (0 when the prompt cache answered).
"""
from __future__ import annotations

import json
from pathlib import Path

from core.query.reading import select as S


class _Recording:
    """A ChatModel that passes every call through and keeps its reply."""

    def __init__(self, inner, calls: list):
        self.inner, self.calls = inner, calls
        self.name = inner.name
        self.accepts_grammar = getattr(inner, "accepts_grammar", False)

    def chat(self, messages, **kwargs):
        reply = self.inner.chat(messages, **kwargs)
        self.calls.append({"reply": reply.text, "top_logprobs": (reply.top_logprobs or [])[:6],
                           "prompt_tokens": reply.prompt_tokens, "seconds": reply.latency_s,
                           "cached": reply.cached, "grammar": kwargs.get("grammar")})
        return reply


def record(path: str) -> callable:
    """Wrap select.choose; returns the function that writes what was recorded to `path`."""
    original, trace = S.choose, []

    def choose(llm, question, shown, *args, **kwargs):
        calls: list = []
        out = original(_Recording(llm, calls), question, shown, *args, **kwargs)
        shown_rows = [{"line": s.line(), "text": s.candidate.text, "p": s.candidate.p} for s in shown]
        trace.append({"question": question, "args": [str(a) for a in args], "shown": shown_rows, "calls": calls})
        return out

    S.choose = choose

    def write() -> None:
        Path(path).write_text(json.dumps(trace, indent=1, ensure_ascii=False), encoding="utf-8")
        print(f"wrote {path} ({len(trace)} questions)")

    return write


def state_all() -> None:
    """select states whatever the model chose: the calibration's thresholds at 0 (a fitting run)."""
    load = S.load_calibration

    def load_without_thresholds() -> S.Calibration:
        calibration = load()
        calibration.threshold = calibration.verdict_threshold = 0.0
        return calibration

    S.load_calibration = load_without_thresholds

