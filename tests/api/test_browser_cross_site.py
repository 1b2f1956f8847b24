"""Issue 36's attack pass again, in Chromium: pages on http://localhost:A (and a sandboxed iframe in it, whose
Origin is `null`) and on http://127.0.0.2:B make the browser POST a text/plain body to the API on loopback, where no
token is needed. Before, each added a paper (202). Now nothing is added and the guard logs each refusal with the
Origin the browser sent; the API's own page (/docs) still writes with the custom header."""
from __future__ import annotations

import http.server
import logging
import threading
from contextlib import contextmanager

import pytest

from core.api.config import ApiConfig
from core.library import open_library
from tests import graph_papers
from tests.api.helpers import LiveServer
from tests.pages.test_browser import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)")

# The script of the attack: a simple request (no preflight), its answer opaque to the page but its effect real.
ATTACK = """
fetch("{api}/api/papers?filename={name}.md", {{method: "POST", mode: "no-cors",
      headers: {{"Content-Type": "text/plain"}}, body: "# {name}\\n\\nPlanted by another origin.\\n"}})
  .then(() => "sent", e => "error " + e).then(r => {{ {report} }});
"""


def _page(api: str, name: str) -> bytes:
    frame = ATTACK.format(api=api, name=f"{name}-sandboxed", report="parent.postMessage(r, '*')")
    srcdoc = frame.replace("&", "&amp;").replace('"', "&quot;")
    return f"""<!doctype html><title>attack</title>
<script>
window.results = [];
addEventListener("message", e => window.results.push("frame " + e.data));
{ATTACK.format(api=api, name=name, report="window.results.push('page ' + r)")}
</script>
<iframe sandbox="allow-scripts" srcdoc="<script>{srcdoc}</script>"></iframe>""".encode()


@contextmanager
def attacker(address: str, body: bytes):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer((address, 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_pages_on_other_origins_cannot_add_papers_through_a_browser(tmp_path, caplog):
    from playwright.sync_api import sync_playwright

    lib = open_library(graph_papers.fast_workspace(tmp_path / "ws"))
    with LiveServer(lib, ApiConfig()) as api, caplog.at_level(logging.INFO, logger="papergraph.api"), \
            attacker("127.0.0.1", _page(api.url, "localhost")) as port_a, \
            attacker("127.0.0.2", _page(api.url, "other-loopback")) as port_b, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            for url in (f"http://localhost:{port_a}/", f"http://127.0.0.2:{port_b}/"):
                page.goto(url)
                page.wait_for_function("window.results.length === 2", timeout=30_000)
                assert sorted(page.evaluate("window.results")) == ["frame sent", "page sent"]
            # The API's own page: a write with the custom header goes through, a simple one does not.
            page.goto(f"{api.url}/docs")
            own = page.evaluate("""async () => {
                const post = (name, headers) => fetch("/api/papers?filename=" + name, {method: "POST", headers,
                                                      body: "# " + name + "\\n\\nFrom the API's own page.\\n"});
                const marked = await post("own-marked.md", {"Content-Type": "text/plain", "X-PaperGraph-Request": "1"});
                return [marked.status, (await post("own-simple.md", {"Content-Type": "text/plain"})).status];
            }""")
        finally:
            browser.close()
    assert sorted(d.filename for d in lib.documents.list()) == ["own-marked.md"]
    assert own == [202, 403], own
    refusals = [r.getMessage() for r in caplog.records if r.getMessage().startswith("refused POST /api/papers")]
    origins = sorted(m.rsplit("Origin ", 1)[1] for m in refusals)
    print("refused:", refusals)
    assert origins == sorted([f"'http://localhost:{port_a}'", "'null'", f"'http://127.0.0.2:{port_b}'", "'null'"])
