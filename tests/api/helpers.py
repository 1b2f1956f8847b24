"""What the API tests share: a small workspace (two generated one-page papers, the builtin parser, the LLM-free
graph) and the API served for real by uvicorn on a random loopback port, in a thread of the test process."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import uvicorn

from core.api.app import create_app
from core.api.config import ApiConfig
from core.api.serve import server_config
from core.library import Library, open_library
from tests import graph_papers
from tests.presentation.explorer_helpers import ingest

QUESTION = "Which dataset is BERT pre-trained on?"
ANSWER_WORD = "BooksCorpus"


def build_workspace(root: Path) -> tuple[Library, list[str]]:
    """The BERT and RoBERTa papers of tests/graph_papers.py, parsed, indexed and graphed (a few seconds)."""
    ws = graph_papers.fast_workspace(root / "ws")
    lib = open_library(ws)
    pdfs = root / "pdfs"
    pdfs.mkdir()
    ids = ingest(lib, graph_papers.make_bert_pdf(pdfs), graph_papers.make_roberta_pdf(pdfs))
    return lib, ids


class LiveServer:
    """create_app(lib, config) under uvicorn as `core serve` runs it, on 127.0.0.1 and a port the OS picks; `url`
    once it listens."""

    def __init__(self, lib: Library, config: ApiConfig | None = None):
        self.config = config or ApiConfig()
        # `core serve`'s own uvicorn settings (no proxy headers, the deadlines on slow clients), on a free port.
        self.server = uvicorn.Server(server_config(create_app(lib, self.config), self.config, host="127.0.0.1",
                                                   port=0))
        self.thread = threading.Thread(target=self.server.run, name="api-test-server", daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the API server did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.port = port
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)


def cited_keys(citations: list[dict]) -> list[tuple]:
    """What must agree between faces: which passage, page and region each [n] points to."""
    return [(c["n"], c["paper_id"], c["page"], c["chunk_id"], tuple(c["box"] or ())) for c in citations]
