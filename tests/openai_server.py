"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions protocol and replays scripted replies.

The only test double PaperGraph allows: everything up to the socket is the production code path (the `openai`
package, retries, timeouts, streaming, the cache). Replies are chosen, in order, by
  1. `script`: a queue of Reply objects consumed one per request (429s, slow or malformed replies first...);
  2. `rules`: (substring, Reply) pairs matched against the request's last user message;
  3. `default`: a function of the request body returning a Reply (or a fixed Reply).
Every request body is kept in `requests` so a test can count and inspect the calls actually made, and the
Authorization header of every request (GET and POST; None when absent) in `auth_headers`.

Misbehaving servers, for deadlines and broken replies (Reply.mode):
  "trickle"  a 200 whose body comes `trickle_bytes` bytes every `interval_s` (a stream never ends);
  "stall"    the request is read and never answered;
  "close"    the headers and half the body, then the connection is closed;
  "garbage"  bytes that are not HTTP, then the connection is closed.
Each bad mode ends by itself: when the client goes away, when the server stops, or after `max_hang_s`; the
server listens on 127.0.0.1 only.
"""
from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str = ""
    status: int = 200
    delay_s: float = 0.0  # sleep before answering (timeouts, concurrency)
    raw_body: str | None = None  # sent verbatim instead of a well-formed completion (protocol errors)
    headers: dict[str, str] = field(default_factory=dict)  # e.g. {"Retry-After": "0"}
    mode: str = ""  # "" (a proper reply) | trickle | stall | close | garbage: see the module's docstring
    interval_s: float = 1.0  # trickle: the pause between two sends
    trickle_bytes: int = 1  # trickle: bytes per send


Responder = Callable[[dict[str, Any]], Reply]


def last_user_message(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content", "")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


class OpenAIReplayServer:
    def __init__(self, default: Responder | Reply | None = None, model: str = "replay-model",
                 api_key: str | None = None):
        self.script: deque[Reply] = deque()
        self.rules: list[tuple[str, Reply]] = []
        self.default = default or Reply(content="ok")
        self.model = model
        self.api_key = api_key  # when set, requests without "Authorization: Bearer <key>" get a 401
        self.requests: list[dict[str, Any]] = []
        self.auth_headers: list[str | None] = []
        self.max_hang_s = 30.0  # the longest a bad mode keeps a connection: tests end even if a client never does
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- scripting ---
    def then(self, *replies: Reply) -> OpenAIReplayServer:
        self.script.extend(replies)
        return self

    def when(self, substring: str, reply: Reply) -> OpenAIReplayServer:
        self.rules.append((substring, reply))
        return self

    @property
    def url(self) -> str:
        assert self._httpd is not None, "start() the server first"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if "messages" in r]

    def _choose(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if self.script:
                return self.script.popleft()
        text = last_user_message(body)
        for substring, reply in self.rules:
            if substring in text:
                return reply
        return self.default(body) if callable(self.default) else self.default

    # --- lifecycle ---
    def start(self) -> OpenAIReplayServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep pytest output clean
                pass

            def _authorised(self) -> bool:
                with server._lock:
                    server.auth_headers.append(self.headers.get("Authorization"))
                if server.api_key is None or self.headers.get("Authorization") == f"Bearer {server.api_key}":
                    return True
                self._send_json(401, {"error": {"message": "Incorrect API key provided", "type":
                                                "invalid_request_error", "code": "invalid_api_key"}})
                return False

            def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if not self._authorised():
                    return
                if self.path.rstrip("/").endswith("/models"):
                    self._send_json(200, {"object": "list", "data": [
                        {"id": server.model, "object": "model", "created": 0, "owned_by": "replay"}]})
                else:
                    self._send_json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if not self._authorised():
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send_json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send_json(400, {"error": {"message": "request body is not JSON"}})
                    return
                if body.get("model") != server.model:
                    with server._lock:
                        server.requests.append(body)
                    self._send_json(404, {"error": {"message": f"The model `{body.get('model')}` does not exist",
                                                    "type": "invalid_request_error", "code": "model_not_found"}})
                    return
                reply = server._choose(body)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.mode:
                    try:
                        self._misbehave(body, reply)
                    except OSError:  # the client gave up: that is what these modes are for
                        pass
                    self.close_connection = True
                elif reply.raw_body is not None:
                    self._send_json(reply.status, reply.raw_body, reply.headers)
                elif reply.status != 200:
                    self._send_json(reply.status, {"error": {"message": f"replayed HTTP {reply.status}",
                                                             "type": "server_error"}}, reply.headers)
                elif body.get("stream"):
                    self._stream(body, reply)
                else:
                    self._send_json(200, _completion(body, reply.content), reply.headers)

            def _misbehave(self, body: dict[str, Any], reply: Reply) -> None:
                ends = time.monotonic() + server.max_hang_s
                if reply.mode == "stall":
                    server._stopping.wait(server.max_hang_s)
                    return
                if reply.mode == "garbage":
                    self.wfile.write(b"\x00\x17 this is not HTTP at all \xff\xfe\r\n\r\n")
                    self.wfile.flush()
                    return
                streaming = bool(body.get("stream"))
                if streaming:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    data: Any = itertools.chain.from_iterable(itertools.repeat(_sse_chunk(body, reply.content or "x")))
                else:
                    payload = json.dumps(_completion(body, reply.content)).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    if reply.mode == "close":
                        self.wfile.write(payload[:len(payload) // 2])
                        self.wfile.flush()
                        return
                    data = iter(payload)
                self.wfile.flush()
                if reply.mode != "trickle":
                    return
                while time.monotonic() < ends and not server._stopping.is_set():
                    piece = bytes(itertools.islice(data, max(1, reply.trickle_bytes)))
                    if not piece:
                        return
                    self.wfile.write(piece)
                    self.wfile.flush()
                    server._stopping.wait(reply.interval_s)

            def _stream(self, body: dict[str, Any], reply: Reply) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                pieces = [reply.content[i:i + 8] for i in range(0, len(reply.content), 8)] or [""]
                for piece in pieces:
                    chunk = {"id": "chatcmpl-replay", "object": "chat.completion.chunk", "created": int(time.time()),
                             "model": body.get("model"),
                             "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                last = {"id": "chatcmpl-replay", "object": "chat.completion.chunk", "created": int(time.time()),
                        "model": body.get("model"), "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                self.wfile.write(f"data: {json.dumps(last)}\n\ndata: [DONE]\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="openai-replay", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> OpenAIReplayServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _sse_chunk(body: dict[str, Any], piece: str) -> bytes:
    chunk = {"id": "chatcmpl-replay", "object": "chat.completion.chunk", "created": int(time.time()),
             "model": body.get("model"), "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
    return f"data: {json.dumps(chunk)}\n\n".encode()


def _completion(body: dict[str, Any], content: str) -> dict[str, Any]:
    prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
    return {
        "id": "chatcmpl-replay", "object": "chat.completion", "created": int(time.time()), "model": body.get("model"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": max(1, prompt_chars // 4), "completion_tokens": max(1, len(content) // 4),
                  "total_tokens": max(1, prompt_chars // 4) + max(1, len(content) // 4)},
    }
