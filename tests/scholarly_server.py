"""A real HTTP server on 127.0.0.1 that speaks the Crossref and OpenAlex REST shapes, for the enrichment tests: the
only double, at the network edge (core.models.scholarly's client, retries, timeouts and cache run as in production).

Paths: /crossref/works/{doi} and /crossref/works?query.bibliographic=…; /openalex/works/https://doi.org/{doi} and
/openalex/works?search=…. `crossref` and `openalex` hold the records by DOI (a title query returns them all, the
service's own ranking left to the client). `script` is a queue of (status, headers, body, delay_s) served first,
one per request (429s, timeouts, HTML). Every request is kept in `requests` as (path, query, headers)."""
from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

Scripted = tuple[int, dict[str, str], str, float]


class ScholarlyServer:
    def __init__(self):
        self.crossref: dict[str, dict] = {}
        self.openalex: dict[str, dict] = {}
        self.script: deque[Scripted] = deque()
        self.requests: list[tuple[str, dict[str, list[str]], dict[str, str]]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):  # noqa: N802
                parts = urlsplit(self.path)
                server.requests.append((unquote(parts.path), parse_qs(parts.query), dict(self.headers)))
                status, headers, body, delay = server.script.popleft() if server.script else server.answer(
                    unquote(parts.path), parse_qs(parts.query))
                if delay:
                    time.sleep(delay)
                data = body.encode()
                try:
                    self.send_response(status)
                    headers = {"Content-Type": "application/json", **headers}
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def answer(self, path: str, query: dict[str, list[str]]) -> Scripted:
        if path.startswith("/crossref/works/"):
            work = self.crossref.get(path.removeprefix("/crossref/works/").lower())
            return (200, {}, json.dumps({"status": "ok", "message-type": "work", "message": work}), 0) if work \
                else (404, {"Content-Type": "text/plain"}, "Resource not found.", 0)
        if path == "/crossref/works":
            items = list(self.crossref.values())
            return 200, {}, json.dumps({"status": "ok", "message-type": "work-list", "message": {"items": items}}), 0
        if path.startswith("/openalex/works/"):
            work = self.openalex.get(path.removeprefix("/openalex/works/https://doi.org/").lower())
            return (200, {}, json.dumps(work), 0) if work else (404, {}, json.dumps({"error": "not found"}), 0)
        if path == "/openalex/works":
            return 200, {}, json.dumps({"meta": {}, "results": list(self.openalex.values())}), 0
        return 404, {}, "{}", 0

    def __enter__(self) -> ScholarlyServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def crossref_work(doi: str, title: str, authors: list[tuple[str, str]], year: int, venue: str,
                  abstract: str = "") -> dict:
    work = {"DOI": doi, "title": [title], "author": [{"given": g, "family": f, "sequence": "additional"}
                                                    for g, f in authors],
            "container-title": [venue], "issued": {"date-parts": [[year, 5, 1]]}, "type": "journal-article"}
    if abstract:
        work["abstract"] = abstract
    return work


def openalex_work(doi: str, title: str, authors: list[str], year: int, abstract: str) -> dict:
    index: dict[str, list[int]] = {}
    for i, word in enumerate(abstract.split()):
        index.setdefault(word, []).append(i)
    return {"id": "https://openalex.org/W1", "doi": f"https://doi.org/{doi}", "display_name": title,
            "publication_year": year, "authorships": [{"author": {"display_name": a}} for a in authors],
            "primary_location": {"source": {"display_name": "Imaginary Journal"}},
            "abstract_inverted_index": index}
