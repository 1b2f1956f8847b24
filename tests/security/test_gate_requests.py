"""Issue 36 on a real server (`streamlit run serve.py`, what `make run` starts), each attack sent as an attacker
would — raw websockets and HTTP to 127.0.0.1, no browser, no mocks:

- another origin: a page of another local web server (a dev server on localhost:3001, anything on 127.0.0.1:9999)
  or a sandboxed frame (`Origin: null`) opening the loopback app's websocket, where it would act as its editor;
- forged X-Forwarded-For: failed sign-ins from 127.0.0.1, each claiming another address, must still be counted
  against 127.0.0.1 (uvicorn underneath trusted the header from loopback); the header counts only from a proxy
  named in PAPERGRAPH_TRUSTED_PROXIES, read from the right;
- sign-out: a tab's websocket opened while signed in asks for a fragment's rerun (what an Ask or Compare form, a
  citation's dialog or a self-refreshing list sends) after the session was closed: it gets the sign-in page.
The browser's view of the sign-out is tests/pages/test_browser_signout.py.
"""
from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request
from contextlib import contextmanager

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.sync.client import connect

from core.service import sessions
from core.settings import hosts, proxies
from tests.security.streamlit_client import run_page, sign_in
from tests.security.test_shared_app import EDITOR_PASSWORD, UPLOADER, server, server_log

pytestmark = pytest.mark.slow  # each test starts the server (~10 s) and runs the app

NAMED_ORIGIN = "http://tools.lab.example:8080"


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def test_only_the_apps_own_origin_and_named_ones_open_its_websocket(tmp_path, monkeypatch):
    monkeypatch.setenv(hosts.ORIGINS_ENV, f"{NAMED_ORIGIN}, not an origin")
    with server(tmp_path, monkeypatch, sign_in_required=False) as url:
        port = _port(url)
        own = run_page(url, origin=f"http://127.0.0.1:{port}")  # the researcher's own tab: the editor Library
        assert own.accepted and UPLOADER in own.text
        # Streamlit itself lets any port of localhost and 127.0.0.1 in; another scheme or name is another origin.
        for origin in ("http://localhost:3001", "http://127.0.0.1:9999", "null", f"https://127.0.0.1:{port}",
                       f"http://localhost:{port}", "http://tools.lab.example:8081", "file://"):
            attack = run_page(url, origin=origin)
            assert not attack.accepted and attack.status == 403 and not attack.messages, origin
        named = run_page(url, origin=NAMED_ORIGIN)
        assert named.accepted and UPLOADER in named.text
        # An upload sent from such a page is refused by the gate before Streamlit reads it.
        request = urllib.request.Request(f"{url}/_stcore/upload_file/{own.session_id}/f1", data=b"x", method="PUT",
                                         headers={"Origin": "http://localhost:3001"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 403 and b"another site" in refused.value.read()
        log = server_log(tmp_path)
        assert "refused websocket  /_stcore/stream from Origin 'http://localhost:3001'" in log
        assert f"not http://127.0.0.1:{port}; add it to {hosts.ORIGINS_ENV}" in log


def _spray(url: str, count: int, forwarded_for) -> list[int]:
    """`count` failed sign-ins, each at another account name (so only the address limit can stop them), each
    with the X-Forwarded-For `forwarded_for(i)`."""
    return [sign_in(url, f"user{i}", "not-the-password-1", headers={"X-Forwarded-For": forwarded_for(i)})[0]
            for i in range(count)]


def test_forged_forwarded_for_from_loopback_is_not_the_address_counted(tmp_path, monkeypatch):
    limit = sessions.MAX_FAILURES_PER_ADDRESS
    with server(tmp_path, monkeypatch, sign_in_required=True) as url:
        statuses = _spray(url, limit + 5, lambda i: f"203.0.113.{i + 1}")
        print(f"{limit + 5} failures from 127.0.0.1, each with another forged X-Forwarded-For: {statuses}")
        assert statuses == [401] * limit + [429] * 5
        log = server_log(tmp_path)
        assert f"sign-in locked out (address): account 'user{limit}' from 127.0.0.1" in log
        assert "203.0.113." not in log  # no forged address reaches the log either

    # Behind a proxy the user names (here 127.0.0.1 itself), its header counts — read from the right, so a client
    # that prepends forged hops is still counted at the address the proxy saw.
    # (The same accounts and counts: the failures above were all 127.0.0.1's; each name has one, under its limit.)
    monkeypatch.setenv(proxies.PROXIES_ENV, "127.0.0.1/32")
    proxied = tmp_path / "proxied"
    proxied.mkdir()
    with server(proxied, monkeypatch, sign_in_required=True) as url:
        behind = _spray(url, limit + 5, lambda i: f"203.0.113.{i + 1}")
        assert behind == [401] * (limit + 5)  # 25 clients, one failure each: no one is locked out
        prepended = _spray(url, limit + 5, lambda i: f"198.51.100.{i + 1}, 192.0.2.7")
        assert prepended == [401] * limit + [429] * 5
        assert f"sign-in locked out (address): account 'user{limit}' from 192.0.2.7" in server_log(proxied)


# ------------------------------------------------------------------------------------------------ sign-out
@contextmanager
def stream(url: str, cookie: str):
    """The app's websocket as a signed-in tab opens it: own origin, the session cookie."""
    port = _port(url)
    sock = socket.create_connection(("127.0.0.1", port), timeout=90)
    with connect(f"ws://127.0.0.1:{port}/_stcore/stream", sock=sock, origin=None, max_size=None, open_timeout=90,
                 subprotocols=["streamlit", "xsrf-not-sent"],
                 additional_headers={"Cookie": cookie, "Origin": f"http://127.0.0.1:{port}"}) as ws:
        yield ws


def one_run(ws, fragment_id: str = "", page_hash: str = "", page: str = "", timeout: float = 90) -> list[ForwardMsg]:
    rerun = BackMsg()
    rerun.rerun_script.page_name = page
    rerun.rerun_script.fragment_id = fragment_id
    rerun.rerun_script.page_script_hash = page_hash
    ws.send(rerun.SerializeToString())
    messages: list[ForwardMsg] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = ForwardMsg()
        msg.ParseFromString(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
        messages.append(msg)
        if msg.WhichOneof("type") == "script_finished" and msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            break
    return messages


def text(messages: list[ForwardMsg]) -> str:
    return "\n".join(m.SerializeToString().decode("utf-8", "replace") for m in messages)


def test_a_fragment_rerun_after_sign_out_gets_the_sign_in_page(tmp_path, monkeypatch):
    with server(tmp_path, monkeypatch, sign_in_required=True) as url:
        _, edna = sign_in(url, "edna", EDITOR_PASSWORD)
        with stream(url, edna) as ws:
            first = one_run(ws, page="settings")  # (the Library of an empty workspace stops before the model line)
            assert "Signed in as **edna** (editor)" in text(first)
            page_hash = next(m.new_session.page_script_hash for m in first if m.WhichOneof("type") == "new_session")
            # The sidebar's model line is a fragment on every page (app.py): its rerun runs it alone.
            fragment = next(m.delta.fragment_id for m in first if m.WhichOneof("type") == "delta"
                            and m.delta.fragment_id)
            alone = one_run(ws, fragment, page_hash)
            assert "Embedding: **" in text(alone) and "Signed in as" not in text(alone)
            assert alone[-1].script_finished == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY

            assert sessions.close_session(edna.split("=", 1)[1])  # sign-out, as another tab's button does
            after = one_run(ws, fragment, page_hash)
            shown = text(after)
            assert "You were signed out" in shown and "Sign in to PaperGraph" in shown
            assert "Embedding: **" not in shown and "Signed in as" not in shown
            assert after[-1].script_finished == ForwardMsg.FINISHED_SUCCESSFULLY  # a full run, app.py's gate
        # The media and upload routes refuse the ended session's cookie too.
        for path in ("/media/anything.png", "/_stcore/upload_file/x/y"):
            request = urllib.request.Request(f"{url}{path}", headers={"Cookie": edna})
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=30)
            assert refused.value.code == 401, path
