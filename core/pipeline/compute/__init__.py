"""Compute backends for the heavy, pure stages of ingest (parse, offline media descriptions, chunking, embedding).

```
 writer (core.pipeline.ingest.process_queue, one thread of the app or the CLI)
   claim ─► ComputeTask ─► backend.submit ─► Future ─► ComputeResult ─► commit (SQLite, Chroma, status)
                              │
                              ├─ local: ProcessPoolExecutor of spawned workers on this machine (local.py)
                              └─ ray:   the same function as a Ray task on a cluster (ray_backend.py)
```

A backend has: `name`, `workers` (tasks in flight at once), `ships_files` (whether tasks must carry the source's
bytes and results the parse's files), `progress_inbox()` (the writer's end of its workers' progress, with an
`address` the workers send to, `drain()` and `close()`; None when its tasks cannot report), `submit(task,
progress_to) -> Future` (progress_to: the inbox's address), `submit_batch(tasks, progress_to, key) -> Future`
(several short documents in one task, their results a list in order; progress sent under `key`),
`cancel(future)`, `worker_lost(exc)` (the task's worker died: the writer retries it), `reset()` (after a worker
died) and `close()`.
"""
from __future__ import annotations

from core.pipeline.compute.local import LocalBackend, local_backend
from core.pipeline.compute.ray_backend import RayBackend, RayUnavailable
from core.settings.config import ComputeConfig

ComputeBackend = LocalBackend | RayBackend  # the interface above
__all__ = ["ComputeBackend", "LocalBackend", "RayBackend", "RayUnavailable", "compute_backend", "local_backend"]


def compute_backend(config: ComputeConfig, backend: str | None = None, workers: int | None = None):
    """The backend Settings choose (compute.backend, compute.workers), or the one a caller names."""
    name = backend or config.backend
    count = config.workers if workers is None else workers
    if name == "ray":
        return RayBackend(count, config.ray_address, config.retries)
    if name != "local":
        raise ValueError(f"unknown compute backend {name!r}: local or ray")
    return local_backend(count)
