"""The contract every chat model honours, so extraction, answers and evaluation never see a provider."""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": "..."}


@dataclass
class ChatReply:
    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False  # served from the prompt-hash cache: no call was made
    # Asked for with chat(top_logprobs=N): per generated token, its N likeliest alternatives as [token, logprob],
    # the model's own odds at a decision (core.query.reading.select reads its choice's). None when not asked for
    # or the endpoint gives none.
    top_logprobs: list[list[list]] | None = None


class LLMError(RuntimeError):
    """A call that failed for good (after retries), with a message a user can act on."""


class ChatModel(Protocol):
    name: str  # "openai:gpt-4o-mini", "embedded:qwen2.5-coder-1.5b": shown where the UI says what ran

    def chat(self, messages: Sequence[Message], *, purpose: str = "", response_format: dict[str, Any] | None = None,
             max_tokens: int | None = None, temperature: float | None = None, top_logprobs: int = 0,
             grammar: str | None = None) -> ChatReply:
        """One completion. `purpose` ("extract", "glean", "summarise", "answer"...) is recorded per call.
        `grammar`: a GBNF grammar the reply must follow, for models with `accepts_grammar` (llama.cpp); others
        are given a JSON schema instead."""

    def stream(self, messages: Sequence[Message], *, purpose: str = "", max_tokens: int | None = None,
               temperature: float | None = None) -> Iterator[str]:
        """The completion's text as it arrives."""


def read_top_logprobs(content: list[dict] | None) -> list[list[list]] | None:
    """OpenAI-style `logprobs.content` (llama.cpp writes the same) as [token, logprob] lists per generated token,
    the chosen one first; None when there are none."""
    out = []
    for token in content or []:
        alternatives = [[t["token"], float(t["logprob"])] for t in token.get("top_logprobs") or []]
        out.append([[token["token"], float(token["logprob"])]] + [a for a in alternatives if a[0] != token["token"]])
    return out or None
