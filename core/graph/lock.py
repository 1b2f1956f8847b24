"""One writer of the merged graph at a time, across threads and processes (the app's worker, the CLI, a delete).

A rebuild reads contributions, merges and writes nodes, edges and vectors; two rebuilds interleaving can write an
older merge over a newer one (a deleted paper's entities coming back). A paper's commit and its removal take the
lock too, so a worker that checked its paper is still there commits and rebuilds before a delete of it can start
removing it, or sees it gone. The lock is re-entrant within a thread: a removal runs its own rebuild inside it.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.library import Library

try:
    import fcntl
except ImportError:  # Windows: threads of one process are still serialised; one process per workspace there
    fcntl = None

LOCK_NAME = "graph.lock"


class _WorkspaceLock:
    def __init__(self, path: Path):
        self.path = path
        self.thread_lock = threading.RLock()
        self.depth = 0  # changed only by the thread holding thread_lock
        self.handle = None

    @contextmanager
    def hold(self) -> Iterator[None]:
        with self.thread_lock:
            if self.depth == 0:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.handle = open(self.path, "a+")  # noqa: SIM115 - held across the yield, closed below
                if fcntl is not None:
                    fcntl.flock(self.handle, fcntl.LOCK_EX)  # released by the kernel if the process dies
            self.depth += 1
            try:
                yield
            finally:
                self.depth -= 1
                if self.depth == 0:
                    if fcntl is not None:
                        fcntl.flock(self.handle, fcntl.LOCK_UN)
                    self.handle.close()
                    self.handle = None


_locks: dict[str, _WorkspaceLock] = {}
_locks_guard = threading.Lock()


@contextmanager
def graph_lock(lib: Library) -> Iterator[None]:
    path = lib.workspace.root / LOCK_NAME
    with _locks_guard:
        lock = _locks.setdefault(str(path), _WorkspaceLock(path))
    with lock.hold():
        yield
