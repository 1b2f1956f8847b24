"""Load what a first question needs before anyone asks it.

In a fresh app process the first question paid for everything loaded on first use: the embedding model, the
spaCy pipeline of the keywords, Chroma's and FTS5's first reads and the graph's mention index — 15.6 s of
"retrieval" for one question on the ten shared papers, against 0.1–0.2 s for the next. The app asks one throwaway
question in a background thread when it opens a workspace, LLM-free and not saved, so the researcher's first
question costs what the others do.

Then it freezes what is loaded (`gc.freeze`): the models, indexes and stores live as long as the process, and
Streamlit runs a full garbage collection after every script run (`runner.postScriptGC`), which walked all ~600k
of their objects each time: 0.38 CPU-s per rerun on the ten shared papers, more than the answer itself (0.17).
Frozen, they are skipped; what a run creates is still collected.
"""
from __future__ import annotations

import gc
import logging
import threading
import time

from core.library import Library
from core.query.engine import ask
from core.query.records import QueryParams
from core.query.routes import available_modes, default_mode

log = logging.getLogger(__name__)

QUESTION = "What does this collection say about its main method?"
_WARMING: set[str] = set()  # workspace roots whose warm-up thread is running (the sidebar says so)
_WARMING_LOCK = threading.Lock()


def warming(lib: Library) -> bool:
    """Whether this workspace's warm-up is loading the models right now (in this process)."""
    with _WARMING_LOCK:
        return str(lib.workspace.root) in _WARMING


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


def warm_up_and_freeze(lib: Library) -> float:
    """warm_up, then move everything alive into the collector's permanent generation (after one collection, so
    no garbage is frozen with it). Only when the warm-up loaded something: an empty workspace freezes nothing."""
    root = str(lib.workspace.root)
    with _WARMING_LOCK:
        _WARMING.add(root)
    try:
        seconds = warm_up(lib)
    finally:
        with _WARMING_LOCK:
            _WARMING.discard(root)
    if seconds > 0:
        gc.collect()
        gc.freeze()
    return seconds


def start_warm_up(lib: Library) -> threading.Thread:
    """warm_up_and_freeze in a daemon thread (it never holds the app's shutdown)."""
    thread = threading.Thread(target=warm_up_and_freeze, args=(lib,), name="papergraph-warm-up", daemon=True)
    thread.start()
    return thread
