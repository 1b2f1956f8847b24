"""Load what a first question needs before anyone asks it.

In a fresh app process the first question paid for everything loaded on first use: the embedding model, the
spaCy pipeline of the keywords, Chroma's and FTS5's first reads and the graph's mention index — 15.6 s of
"retrieval" for one question on the ten shared papers, against 0.1–0.2 s for the next. The app asks one throwaway
question in a background thread when it opens a workspace, LLM-free and not saved, so the researcher's first
question costs what the others do.
"""
from __future__ import annotations

import logging
import threading
import time

from core.library import Library
from core.query.engine import ask
from core.query.records import QueryParams
from core.query.routes import available_modes, default_mode

log = logging.getLogger(__name__)

QUESTION = "What does this collection say about its main method?"


def warm_up(lib: Library) -> float:
    """Ask one question in the workspace's default mode without an LLM; the seconds it took (0 when there is
    nothing to ask yet). Never raises: a warm-up that fails leaves the first question to load what it needs."""
    started = time.perf_counter()
    try:
        modes = available_modes(lib)
        if not modes or not lib.documents.ready_papers():
            return 0.0
        params = QueryParams.from_config(lib.settings.query, mode=default_mode(lib, modes), use_llm=False)
        ask(lib, QUESTION, params, save=False)
    except Exception:  # noqa: BLE001 — the researcher's own question will say what is wrong
        log.warning("warm-up of %s failed", lib.workspace.root, exc_info=True)
        return 0.0
    return time.perf_counter() - started


def start_warm_up(lib: Library) -> threading.Thread:
    """warm_up in a daemon thread (it never holds the app's shutdown)."""
    thread = threading.Thread(target=warm_up, args=(lib,), name="papergraph-warm-up", daemon=True)
    thread.start()
    return thread
