"""OpenAI's chat protocol over the collection: /v1/models lists the modes as models (`papergraph-mix`, …) and
/v1/chat/completions answers the last user message through that mode, so any OpenAI client or Open WebUI can chat
with the papers. The reply's text ends with its sources; the same citations come as a structured `citations` field
(beside `choices`, and on the last chunk of a stream)."""
from __future__ import annotations

import json
import time
import uuid
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from core.api.errors import body
from core.api.rest import Caller, run_streaming
from core.service import ask as ask_service
from core.service.errors import invalid
from core.service.inputs import clean_question
from core.service.records import AskResult

router = APIRouter(prefix="/v1")
PREFIX = "papergraph-"
MAX_MESSAGES = 200


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")  # temperature, max_tokens…: accepted, and meaningless here

    model: str = Field(description="papergraph-<mode> (see /v1/models), or papergraph for the default mode")
    messages: list[dict[str, Any]]
    stream: bool = False


def model_mode(model: str) -> str | None:
    if model == "papergraph":
        return None
    if not model.startswith(PREFIX):
        raise invalid(f"unknown model {model[:80]!r}: the models are papergraph-<mode> (GET /v1/models)")
    return model[len(PREFIX):]


def last_question(messages: list[dict[str, Any]]) -> str:
    """The last user message's text (a string, or the text parts of a list of parts). Earlier turns are not used:
    every question is answered from the papers alone, so the same question gets the same answer."""
    if not messages or len(messages) > MAX_MESSAGES:
        raise invalid(f"send 1 to {MAX_MESSAGES} messages, the last one the user's question")
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                content = " ".join(str(p.get("text", "")) for p in content
                                   if isinstance(p, dict) and p.get("type") == "text")
            if isinstance(content, str):
                return content
            raise invalid("the user message's content must be text")
    raise invalid("no user message to answer")


def sources_text(result: AskResult) -> str:
    if not result.citations:
        return ""
    lines = ["", "", "Sources:"]
    for c in result.citations:
        page = f", page {c.page}" if c.page else ""
        lines.append(f"[{c.n}] {c.paper}{page}: \"{c.quote}\"")
    return "\n".join(lines)


def _citations(result: AskResult) -> list[dict]:
    return [c.to_dict() for c in result.citations]


@router.get("/models", summary="The query modes this workspace can run, as models")
def models(request: Request, _: Caller):
    return {"object": "list", "data": [{"id": f"{PREFIX}{m}", "object": "model", "created": 0,
                                        "owned_by": "papergraph"} for m in ask_service.modes(request.app.state.lib)]}


def _owner(request: Request) -> str:
    principal = request.state.principal
    return ask_service.history_owner(principal.name, bool(principal.token_id))


@router.post("/chat/completions", summary="Chat with the collection (OpenAI protocol; stream or not)")
def completions(request: Request, req: ChatRequest, _: Caller):
    lib, save = request.app.state.lib, request.app.state.config.save_history
    mode = model_mode(req.model)
    question = clean_question(last_question(req.messages))
    ask_service.check_mode(lib, mode)
    created, ident = int(time.time()), f"chatcmpl-{uuid.uuid4().hex[:24]}"
    if not req.stream:
        result = ask_service.ask(lib, question, mode, save=save, owner=_owner(request))
        return {"id": ident, "object": "chat.completion", "created": created, "model": req.model,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": result.answer + sources_text(result)}}],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
                "citations": _citations(result)}

    def chunk(delta: dict, finish: str | None = None, **extra) -> bytes:
        data = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": req.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
        return f"data: {json.dumps(data)}\n\n".encode()

    def events():
        yield chunk({"role": "assistant", "content": ""})
        sent = ""
        for kind, value in run_streaming(lambda on_token: ask_service.ask(lib, question, mode, on_token=on_token,
                                                                          save=save, owner=_owner(request))):
            if kind == "token":
                if value.startswith(sent) and len(value) > len(sent):
                    yield chunk({"content": value[len(sent):]})
                    sent = value
            elif kind == "result":
                # The final text may differ from what streamed (an LLM answer is checked against the passages).
                tail = value.answer[len(sent):] if value.answer.startswith(sent) else "\n\n" + value.answer
                yield chunk({"content": tail + sources_text(value)})
                yield chunk({}, "stop", citations=_citations(value))
            else:
                yield f"data: {json.dumps(body(value.code, value.message))}\n\n".encode()
        yield b"data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})
