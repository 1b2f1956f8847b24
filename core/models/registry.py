"""The process's shared resources (models, engines, clients), each built once on first use.

A model takes seconds to load and gigabytes to hold, and Streamlit runs every session in a thread of one process:
every caller must get the same instance, and two threads asking at once must not load it twice. One lock per key
means the embedder and the OCR engine can load in parallel while a second request for either waits for the first.

    resources.get(("embedder", model), lambda: Embedder(model))

A factory that raises stores nothing: the next call tries again (a missing package installed meanwhile, a server
that came back). Tests call `resources.clear()` to load afresh.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class Registry:
    """A thread-safe map of key → resource, each built by its factory at most once (until cleared)."""

    def __init__(self):
        self._lock = threading.Lock()  # guards the two dicts, never held while a factory runs
        self._values: dict[Hashable, Any] = {}
        self._key_locks: dict[Hashable, threading.Lock] = {}

    def get(self, key: Hashable, factory: Callable[[], T]) -> T:
        with self._lock:
            if key in self._values:
                return self._values[key]
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                if key in self._values:  # built by the thread we waited for
                    return self._values[key]
            value = factory()
            with self._lock:
                self._values[key] = value
            return value

    def peek(self, key: Hashable) -> Any | None:
        """The resource if it is built, without building it (for a status line)."""
        with self._lock:
            return self._values.get(key)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._values

    def clear(self, *keys: Hashable) -> None:
        """Forget the given resources, or all of them: the next get builds them again."""
        with self._lock:
            for key in keys or list(self._values):
                self._values.pop(key, None)


resources = Registry()  # the one instance of the process; `Library.resources` hands it out


def thread_budget() -> int:
    """The cores this process's models may use: OMP_NUM_THREADS when set (a compute worker's share, set before any
    model loads: core.pipeline.compute.local), else every core it may run on."""
    env = os.environ.get("OMP_NUM_THREADS", "")
    if env.isdigit() and int(env) >= 1:
        return int(env)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
