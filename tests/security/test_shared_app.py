"""The attacks of issue 26 on a real server (`streamlit run serve.py`, what `make run` starts), each as an attacker
would send it — raw websockets and HTTP to 127.0.0.1, no browser, no mocks — and each must now get nothing:

- DNS rebinding: a websocket with `Host: attacker.example:PORT` and `Origin: http://attacker.example:PORT` against
  the default loopback app (no sign-in, the local user is an editor);
- session takeover: a new websocket presenting a signed-in session's id (seen in upload URLs, proxy logs);
- password guessing: 100 parallel guesses at one account, then 100 at as many names, from one address;
- memory: an anonymous 1 GB upload PUT, streamed; a viewer's; an editor's that says it is 1 GB;
- anonymous or viewer `clear_cache` commands.
Sign-in is forced on loopback (PAPERGRAPH_REQUIRE_SIGNIN=1), as behind a reverse proxy: the same gate as a server
on 0.0.0.0, while every byte stays on this machine.
"""
from __future__ import annotations

import re
import selectors
import socket
import threading
import urllib.error
import urllib.request
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg

from core.service import sessions
from core.settings import accounts
from tests.pages.test_browser import serve_app
from tests.security.streamlit_client import run_page, sign_in

pytestmark = pytest.mark.slow  # each test starts the server (~10 s) and runs the app

EDITOR_PASSWORD, VIEWER_PASSWORD = "editor-pass-1", "viewer-pass-1"
GIB = 1 << 30
UPLOADER = "Add PDFs or text documents"  # the Library's upload control, an editor's only


@contextmanager
def server(tmp_path: Path, monkeypatch, sign_in_required: bool):
    if sign_in_required:
        accounts.add_account("edna", EDITOR_PASSWORD, "editor")  # in this test's PAPERGRAPH_CONFIG_DIR (conftest)
        accounts.add_account("vera", VIEWER_PASSWORD, "viewer")
        monkeypatch.setenv(accounts.REQUIRE_SIGNIN_ENV, "1")
    with serve_app(tmp_path / "workspace", tmp_path / "streamlit.log") as url:
        yield url


def server_pid(url: str) -> int:
    port = int(url.rsplit(":", 1)[1])
    (pid,) = {c.pid for c in psutil.net_connections(kind="tcp")
              if c.laddr and c.laddr.port == port and c.status == psutil.CONN_LISTEN}
    return pid


def server_log(tmp_path: Path) -> str:
    return (tmp_path / "streamlit.log").read_text(errors="replace")


def test_a_rebinding_websocket_gets_nothing_from_the_loopback_app(tmp_path, monkeypatch):
    with server(tmp_path, monkeypatch, sign_in_required=False) as url:
        port = url.rsplit(":", 1)[1]
        # The app itself, as the researcher's browser reaches it: the editor Library with its uploaders.
        for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            own = run_page(url, host=host, origin=f"http://{host}")
            assert own.accepted and "Library" in own.text and UPLOADER in own.text, host
        # The attacker's page, its name now resolving to 127.0.0.1: same-origin as far as Streamlit can tell.
        attack = run_page(url, host=f"attacker.example:{port}", origin=f"http://attacker.example:{port}")
        assert not attack.accepted and attack.status == 403 and not attack.messages
        # Plain HTTP under that name (the page, media, uploads) is refused too.
        request = urllib.request.Request(f"{url}/", headers={"Host": f"attacker.example:{port}"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 421
        assert "refused websocket /_stcore/stream for Host 'attacker.example" in server_log(tmp_path)


def test_a_typed_library_address_goes_to_the_root_with_its_query(tmp_path, monkeypatch):
    """/library is the default page's name, which Streamlit serves at the root only: typed or bookmarked, it
    would open a "Page not found" dialog over the Library. The gate sends it to the root, query kept."""
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    with server(tmp_path, monkeypatch, sign_in_required=False) as url:
        for path, expected in (("/library", "/"), ("/library/?status=failed", "/?status=failed")):
            with pytest.raises(urllib.error.HTTPError) as moved:
                opener.open(f"{url}{path}", timeout=30)
            assert moved.value.code == 303 and moved.value.headers["location"] == expected, path
        with urllib.request.urlopen(f"{url}/ask", timeout=30) as page:  # other pages are served where they are
            assert page.status == 200


def test_app_py_run_without_its_gate_serves_nothing(tmp_path, monkeypatch):
    """`streamlit run app.py` has no host check and no way to set the session cookie: it must not serve."""
    with serve_app(tmp_path / "workspace", tmp_path / "streamlit.log", entry="app.py") as url:
        run = run_page(url)
        assert run.accepted and "Start PaperGraph with `make run`" in run.text
        assert UPLOADER not in run.text and "Library" not in run.text


def test_a_replayed_session_id_is_not_signed_in(tmp_path, monkeypatch):
    with server(tmp_path, monkeypatch, sign_in_required=True) as url:
        status, edna = sign_in(url, "edna", EDITOR_PASSWORD)
        assert status == 303 and edna and edna.startswith(sessions.COOKIE_NAME + "=")
        victim = run_page(url, cookie=edna)
        assert victim.accepted and victim.session_id and "Signed in as **edna** (editor)" in victim.text
        assert UPLOADER in victim.text

        # The id alone, on a new websocket: the handshake is refused before any session is resumed.
        replay = run_page(url, resume=victim.session_id)
        assert not replay.accepted and replay.status == 403
        # The id with a forged cookie: refused the same way.
        forged = run_page(url, resume=victim.session_id, cookie=f"{sessions.COOKIE_NAME}=abc.def")
        assert not forged.accepted
        # The id with another account's real cookie: Streamlit resumes the session, but the run is served to the
        # cookie's owner, a viewer — never to edna.
        _, vera = sign_in(url, "vera", VIEWER_PASSWORD)
        takeover = run_page(url, resume=victim.session_id, cookie=vera)
        assert takeover.accepted and takeover.session_id == victim.session_id  # the same Streamlit session
        assert "Signed in as **vera** (viewer)" in takeover.text and "edna" not in takeover.text
        assert UPLOADER not in takeover.text


def _put(url: str, path: str, declared: int | None, send_up_to: int, cookie: str | None = None) -> tuple[int, int]:
    """A PUT streamed to 127.0.0.1 in 1 MiB pieces, never more than `send_up_to` bytes, that stops sending once the
    server answers or closes. The status and the number of bytes the socket took."""
    port = int(url.rsplit(":", 1)[1])
    head = [f"PUT {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: multipart/form-data; boundary=b",
            "X-Xsrftoken: none"]
    head.append(f"Content-Length: {declared}" if declared is not None else "Transfer-Encoding: chunked")
    if cookie:
        head.append(f"Cookie: {cookie}")
    piece = b"\0" * (1 << 20)
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        sock.setblocking(False)
        # A selector, not select.select: by this point of a full run the process can hold over 1,024 descriptors,
        # which select() refuses (CI clone 13); epoll does not care.
        watch = selectors.DefaultSelector()
        watch.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE)
        while sent < send_up_to:
            events = watch.select(60)
            mask = events[0][1] if events else 0
            if mask & selectors.EVENT_READ or not mask & selectors.EVENT_WRITE:
                break  # the server answered (or stopped reading without a word: the status check below fails)
            chunk = piece if declared is not None else b"%x\r\n%s\r\n" % (len(piece), piece)
            try:
                sent += sock.send(chunk[: send_up_to - sent])
            except (BrokenPipeError, ConnectionResetError):
                break
        watch.close()
        sock.setblocking(True)
        try:
            reply = sock.recv(4096).decode("latin-1")
        except ConnectionResetError:
            reply = ""
    match = re.match(r"HTTP/1.1 (\d+)", reply)
    return (int(match.group(1)) if match else 0), sent


def test_an_anonymous_gigabyte_upload_is_refused_before_it_is_read(tmp_path, monkeypatch):
    with server(tmp_path, monkeypatch, sign_in_required=True) as url:
        pid = server_pid(url)
        # A session id as the upload URLs show them: a signed-in session's, lifted from a proxy log.
        _, edna = sign_in(url, "edna", EDITOR_PASSWORD)
        session_id = run_page(url, cookie=edna).session_id
        path = f"/_stcore/upload_file/{session_id}/file-1"
        before = psutil.Process(pid).memory_info().rss

        status, sent = _put(url, path, declared=GIB, send_up_to=GIB)
        assert status == 401
        status_chunked, sent_chunked = _put(url, path, declared=None, send_up_to=GIB)
        assert status_chunked == 401
        _, vera = sign_in(url, "vera", VIEWER_PASSWORD)
        status_viewer, sent_viewer = _put(url, path, declared=GIB, send_up_to=GIB, cookie=vera)
        assert status_viewer == 403
        # An editor's upload that says it is over server.maxUploadSize (500 MB) is refused before its body too.
        status_big, sent_big = _put(url, path, declared=GIB, send_up_to=GIB, cookie=edna)
        assert status_big == 413

        grown = psutil.Process(pid).memory_info().rss - before
        print(f"bytes taken before the refusal: anonymous {sent}, chunked {sent_chunked}, viewer {sent_viewer}, "
              f"editor declaring 1 GiB {sent_big}; server RSS {before >> 20} MB -> {(before + grown) >> 20} MB")
        # Nothing near the gigabyte was taken in: the kernel's socket buffers hold a few MB before the answer.
        assert max(sent, sent_chunked, sent_viewer, sent_big) < 64 << 20, (sent, sent_chunked, sent_viewer, sent_big)
        assert grown < 50 << 20, f"server RSS grew by {grown >> 20} MB"
        assert "refused an upload from 127.0.0.1 (not an editor)" in server_log(tmp_path)


def test_a_hundred_parallel_guesses_get_nowhere_past_the_limit(tmp_path, monkeypatch):
    with server(tmp_path, monkeypatch, sign_in_required=True) as url:
        def burst(names: list[str]) -> Counter:
            statuses: Counter = Counter()
            lock = threading.Lock()

            def guess(name: str, i: int) -> None:
                status, cookie = sign_in(url, name, f"guess-{i:04d}-x")
                with lock:
                    statuses[status] += 1
                    assert cookie is None

            threads = [threading.Thread(target=guess, args=(name, i)) for i, name in enumerate(names)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            return statuses

        # One account: at most MAX_FAILURES_PER_ACCOUNT guesses are checked at all; the rest are refused unread.
        at_edna = burst(["edna"] * 100)
        assert at_edna[401] <= sessions.MAX_FAILURES_PER_ACCOUNT and at_edna[429] >= 100 - at_edna[401]
        assert sum(at_edna.values()) == 100
        # The account is now locked: its right password gets no further.
        assert sign_in(url, "edna", EDITOR_PASSWORD) == (429, None)
        # Spraying over names from the same address: the address's own limit.
        sprayed = burst([f"user{i}" for i in range(100)])
        assert at_edna[401] + sprayed[401] <= sessions.MAX_FAILURES_PER_ADDRESS
        assert sprayed[429] >= 100 - sprayed[401]
        assert sign_in(url, "vera", VIEWER_PASSWORD) == (429, None)
        print(f"100 guesses at edna: {dict(at_edna)}; 100 over 100 names: {dict(sprayed)}")
        log = server_log(tmp_path)
        assert "sign-in locked out (account): account 'edna' from 127.0.0.1" in log
        assert "sign-in locked out (address)" in log


def test_a_viewers_clear_cache_command_is_dropped(tmp_path, monkeypatch):
    with server(tmp_path, monkeypatch, sign_in_required=True) as url:
        _, vera = sign_in(url, "vera", VIEWER_PASSWORD)
        clear = BackMsg()
        clear.clear_cache = True
        run = run_page(url, cookie=vera, backmsgs=[clear])
        assert run.accepted and "Signed in as **vera** (viewer)" in run.text
        dropped = "dropped a clear_cache command from 127.0.0.1 (not an editor)"
        assert server_log(tmp_path).count(dropped) == 1
        # An editor's goes through (the one refusal above stays the only one).
        _, edna = sign_in(url, "edna", EDITOR_PASSWORD)
        assert run_page(url, cookie=edna, backmsgs=[clear]).accepted
        assert server_log(tmp_path).count(dropped) == 1


def test_sign_in_form_one_message_for_a_wrong_name_or_password_and_no_login_csrf(tmp_path, monkeypatch):
    with server(tmp_path, monkeypatch, sign_in_required=True) as url:
        # Not signed in: a deep link goes to the form, keeping the page and its query.
        opener = urllib.request.build_opener(_NoRedirect)
        with pytest.raises(urllib.error.HTTPError) as moved:
            opener.open(f"{url}/graph?entity=e%3Alattice", timeout=30)
        assert moved.value.code == 303
        assert moved.value.headers["Location"] == "/sign-in?next=%2Fgraph%3Fentity%3De%253Alattice"
        assert sign_in(url, "vera", "not-her-password") == (401, None)
        assert sign_in(url, "nobody", VIEWER_PASSWORD) == (401, None)
        # A form posted from another site's page (login CSRF) signs no one in, even with the right password.
        assert sign_in(url, "vera", VIEWER_PASSWORD, origin="http://attacker.example")[0] == 403
        status, cookie = sign_in(url, "vera", VIEWER_PASSWORD, origin=url)
        assert status == 303 and cookie
        assert VIEWER_PASSWORD not in server_log(tmp_path)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None
