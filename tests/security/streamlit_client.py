"""A bare Streamlit client for attack tests: what an attacker's script (or a rebinding page) sends, with no
browser in the way. It opens the app's websocket with chosen Host, Origin, cookies and a session id to resume,
asks for one run of a page, and returns what the server sent back as text.

The protocol is Streamlit's own: the subprotocol header carries "streamlit", an XSRF token and, to resume a
session, its id; a BackMsg `rerun_script` asks for a run; ForwardMsgs come back until `script_finished`.
"""
from __future__ import annotations

import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect


@dataclass
class Run:
    accepted: bool  # False: the server refused the websocket handshake
    status: int | None = None  # the refused handshake's HTTP status
    session_id: str = ""
    text: str = ""  # every string the run sent (widget labels, markdown, titles), joined
    messages: list[ForwardMsg] = field(default_factory=list)


def _strings(msg: ForwardMsg) -> str:
    """The message's text content: protobuf strings are stored as UTF-8, so decoding the wire bytes leniently
    keeps every label and markdown body readable for `in` checks."""
    return msg.SerializeToString().decode("utf-8", "replace")


def run_page(url: str, page: str = "", query: str = "", *, host: str | None = None, origin: str | None = None,
             cookie: str | None = None, resume: str | None = None, backmsgs: list[BackMsg] | None = None,
             timeout: float = 90) -> Run:
    """One run of `page` (a url path such as "settings", "" for the default page) over a new websocket to the
    server at `url`, sent to 127.0.0.1 whatever `host` the Host header names."""
    parts = urlsplit(url)
    port = parts.port
    host = host or f"127.0.0.1:{port}"
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    headers = {"Cookie": cookie} if cookie else {}
    if origin:
        headers["Origin"] = origin
    protocols = ["streamlit", "xsrf-not-sent"] + ([resume] if resume else [])
    try:
        ws = connect(f"ws://{host}/_stcore/stream", sock=sock, additional_headers=headers, subprotocols=protocols,
                     open_timeout=timeout, max_size=None, origin=None)
    except InvalidStatus as exc:
        sock.close()
        return Run(accepted=False, status=exc.response.status_code)
    run = Run(accepted=True)
    with ws:
        rerun = BackMsg()
        rerun.rerun_script.query_string = query
        rerun.rerun_script.page_name = page
        ws.send(rerun.SerializeToString())
        for extra in backmsgs or []:
            ws.send(extra.SerializeToString())
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                data = ws.recv(timeout=max(0.1, deadline - time.monotonic()))
            except TimeoutError:
                break
            msg = ForwardMsg()
            msg.ParseFromString(data)
            run.messages.append(msg)
            if msg.WhichOneof("type") == "new_session":
                run.session_id = msg.new_session.initialize.session_id
            run.text += _strings(msg) + "\n"
            if msg.WhichOneof("type") == "script_finished" and msg.script_finished in (
                    ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR):
                break
    return run


def sign_in(url: str, name: str, password: str, origin: str | None = None,
            headers: dict[str, str] | None = None) -> tuple[int, str | None]:
    """POST the /sign-in form as a browser does (plus any `headers`); the status and the session cookie
    ("name=value"), if any."""
    data = urllib.parse.urlencode({"name": name, "password": password, "next": "/"}).encode()
    request = urllib.request.Request(f"{url}/sign-in", data=data, method="POST", headers=headers or {})
    if origin:
        request.add_header("Origin", origin)
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        response = opener.open(request, timeout=120)
        status, headers = response.status, response.headers
    except urllib.error.HTTPError as exc:
        status, headers = exc.code, exc.headers
    cookie = headers.get("Set-Cookie")
    return status, cookie.split(";")[0] if cookie else None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None
