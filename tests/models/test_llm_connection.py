"""The connection check of the Settings page: success with latency and the served models, and a message that names
what is wrong: a refused port, a malformed URL, an unknown host, a rejected key, a missing model, a web server
that is not an OpenAI endpoint."""
from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

from core.models.llm.connection import check_connection
from core.settings.config import LLMConfig
from tests.models.llm_helpers import MODEL, SECRET, free_port


def config_for(url: str, model: str = MODEL) -> LLMConfig:
    return LLMConfig(provider="openai", base_url=url, model=model, timeout_s=10)


def test_check_connection_succeeds_with_latency_and_the_served_models(server):
    report = check_connection(config_for(server.url + "/"), None)
    assert report.ok and report.step == "done", report
    assert report.models == [MODEL] and report.latency_s > 0
    assert f"model '{MODEL}' answered in" in report.message
    (probe,) = server.chat_requests
    assert probe["max_tokens"] <= 8


def test_check_connection_names_a_refused_port():
    port = free_port()
    report = check_connection(config_for(f"http://127.0.0.1:{port}/v1"), None)
    assert (report.ok, report.step) == (False, "connect")
    assert f"connection refused: nothing is listening at 127.0.0.1:{port}" in report.message
    assert "Ollama" in report.message


def test_check_connection_names_a_malformed_url_and_an_unknown_host():
    for url in ("localhost:11434/v1", "ftp://example.com/v1", "http:///v1"):
        report = check_connection(config_for(url), None)
        assert (report.ok, report.step) == (False, "url") and "malformed" in report.message, (url, report)
    report = check_connection(config_for("http://no-such-host.invalid/v1"), None)
    assert report.step == "connect" and "DNS name 'no-such-host.invalid' was not found" in report.message


def test_check_connection_says_the_key_was_rejected(server):
    server.api_key = SECRET
    report = check_connection(config_for(server.url), "sk-wrong-key")
    assert (report.ok, report.step) == (False, "auth")
    assert "rejected the API key (HTTP 401)" in report.message and "sk-wrong-key" not in report.message
    assert check_connection(config_for(server.url), SECRET).ok


def test_check_connection_lists_the_served_models_when_the_model_is_missing(server):
    report = check_connection(config_for(server.url, "llama3:70b"), None)
    assert (report.ok, report.step) == (False, "model")
    assert report.message == f"model 'llama3:70b' not found at {server.url}; the server has: {MODEL}"
    assert report.models == [MODEL]


def test_check_connection_recognises_a_web_server_that_is_not_an_openai_endpoint(tmp_path):
    (tmp_path / "index.html").write_text("<html><body>my homepage</body></html>")
    handler = functools.partial(QuietFiles, directory=str(tmp_path))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        report = check_connection(config_for(base), None)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert (report.ok, report.step) == (False, "models")
    assert "is not an OpenAI-compatible endpoint: GET /models answered HTTP 404 with an HTML page" in report.message
    assert f"the URL usually ends in /v1 (try {base}/v1)" in report.message


class QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
