"""The parent's watch on a parser child's resident memory: the child's process group, summed, sampled twice a second.

The child's own RLIMIT_AS (mineru_worker.limit_memory) bounds each of its processes; this bounds them together (a
child and the pool workers it spawned share its process group) and records the peak the soak benchmark reports.
Over the cap, the whole group is killed by us, so the kernel's OOM killer never has to choose a victim.
"""
from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

SAMPLE_S = 0.5  # the flash tier grew ~40 MB/s on the stress PDF: at most ~20 MB between two samples
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def group_rss(pgid: int) -> int:
    """Bytes resident in the processes of one process group (Linux /proc; 0 elsewhere)."""
    total = 0
    for entry in Path("/proc").iterdir() if Path("/proc/self/stat").exists() else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue  # it ended meanwhile
        fields = stat[stat.rfind(b")") + 2:].split()  # after "pid (comm) ": state ppid pgrp ...
        if len(fields) > 21 and int(fields[2]) == pgid:
            total += int(fields[21]) * _PAGE  # rss, in pages
    return total


class MemoryWatch:
    """Samples a process group's resident memory until stopped; kills the group once it holds more than `cap`
    bytes (0: only measure)."""

    def __init__(self, pgid: int, cap: int):
        self.pgid, self.cap = pgid, cap
        self.peak = 0
        self.tripped = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="papergraph-mineru-memory", daemon=True)

    def __enter__(self) -> MemoryWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            rss = group_rss(self.pgid)
            self.peak = max(self.peak, rss)
            if self.cap and rss > self.cap:
                self.tripped.set()
                try:
                    os.killpg(self.pgid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                return
            if self._stop.wait(SAMPLE_S):
                return
