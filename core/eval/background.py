"""Evaluation runs in background threads, so the page stays responsive, shows progress and can cancel.

The run's row in SQLite is the truth (progress, status, the cancel flag); this only keeps the threads and the
latest in-process Progress, whose pace gives the estimate of time left.
"""
from __future__ import annotations

import logging
import threading

from core.eval.runner import EvalOptions, Progress, run_eval
from core.library import Library
from core.schema.eval import QuestionSet, RunRecord

log = logging.getLogger(__name__)


class EvalJobs:
    def __init__(self, lib: Library):
        self.lib = lib
        self.store = lib.eval_store
        self._threads: dict[str, threading.Thread] = {}
        self._progress: dict[str, Progress] = {}
        self._errors: dict[str, str] = {}
        self._lock = threading.Lock()

    def start(self, qset: QuestionSet, options: EvalOptions, label: str = "",
              resume: RunRecord | None = None) -> str:
        """Starts a run (or resumes one) and returns its id once its row exists."""
        if resume is not None and self.running(resume.id):
            return resume.id
        started = threading.Event()
        holder: dict[str, str] = {}

        def on_start(run: RunRecord) -> None:
            holder["id"] = run.id
            with self._lock:
                self._threads[run.id] = threading.current_thread()
            started.set()

        def on_progress(progress: Progress) -> None:
            with self._lock:
                self._progress[holder["id"]] = progress

        def work() -> None:
            try:
                run_eval(self.lib, qset, options, resume=resume, label=label, store=self.store,
                         on_progress=on_progress, on_start=on_start)
            except Exception as exc:  # the run's row already says it failed; keep the message for the page
                log.exception("evaluation failed")
                self._errors[holder.get("id", "")] = str(exc) if isinstance(exc, ValueError) else \
                    f"{type(exc).__name__}: {exc}"
            finally:
                started.set()

        thread = threading.Thread(target=work, name="papergraph-eval", daemon=True)
        thread.start()
        started.wait(timeout=60)
        if "id" not in holder:
            raise RuntimeError(self._errors.get("", "the run could not start"))
        return holder["id"]

    def running(self, run_id: str) -> bool:
        with self._lock:
            thread = self._threads.get(run_id)
        return bool(thread and thread.is_alive())

    def progress(self, run_id: str) -> Progress | None:
        with self._lock:
            return self._progress.get(run_id)

    def error(self, run_id: str) -> str:
        return self._errors.get(run_id, "")

    def cancel(self, run_id: str) -> None:
        self.store.request_cancel(run_id)

    def join(self, run_id: str, timeout: float | None = None) -> None:
        with self._lock:
            thread = self._threads.get(run_id)
        if thread:
            thread.join(timeout)
