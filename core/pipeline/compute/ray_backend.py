"""The `ray` compute backend: the same task function as Ray tasks, on a cluster or a local Ray instance.

`ray.init(address=…)` joins the cluster that Settings (compute.ray_address) or RAY_ADDRESS names; with neither,
a local instance with `workers` CPUs is started (`ray.init(num_cpus=N)`). Tasks carry the source's bytes and
return the parse's files with the chunks and vectors, so a worker needs no shared disk, only PaperGraph's code
at the same path (REPO_ROOT, put on its PYTHONPATH) and its requirements (docs/deploy.md). Ray re-runs a task
whose worker died (`max_retries`); one whose retries ran out comes back as an exception the writer turns into
`failed` with Ray's message. Progress travels through a Ray queue (`RayInbox`), an actor every worker of the
cluster reaches, where the local pool's Unix socket reaches only this machine. Ray is imported here only, and only
when this backend is chosen (`make ray`).
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import Future

from core.pipeline.compute.task import ComputeResult, ComputeTask, compute_batch
from core.settings.workspace import REPO_ROOT

ADDRESS_ENV = "RAY_ADDRESS"
_init_lock = threading.Lock()


def runtime_env() -> dict:
    """What every Ray worker of PaperGraph's tasks gets: this repository importable, no model hub, no telemetry,
    and one thread per task (Ray runs one task per CPU)."""
    path = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {"env_vars": {"PYTHONPATH": path, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                         "ANONYMIZED_TELEMETRY": "False", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}}


def _compute(task: ComputeTask, progress_to=None) -> ComputeResult:
    return _compute_batch([task], progress_to)[0]


def _compute_batch(tasks: list[ComputeTask], progress_to=None, key: str = "") -> list[ComputeResult]:
    sink = None
    if progress_to is not None:
        def sink(message: tuple) -> None:
            try:
                progress_to.put_nowait(message)
            except Exception:  # noqa: BLE001 — a full or closed queue: progress is advisory, the result counts
                pass
    return compute_batch(tasks, sink, key)


class RayInbox:
    """The writer's end of its Ray tasks' progress: a bounded Ray queue, drained without blocking."""

    def __init__(self, maxsize: int = 10_000):
        from ray.util.queue import Queue

        self.address = Queue(maxsize=maxsize)  # what submit passes to the tasks: the queue's actor handle

    def drain(self) -> list[tuple]:
        try:
            waiting = self.address.qsize()
            return list(self.address.get_nowait_batch(waiting)) if waiting else []
        except Exception:  # noqa: BLE001 — the queue's actor died with its node: no more progress, not an error
            return []

    def close(self) -> None:
        try:
            self.address.shutdown()
        except Exception:  # noqa: BLE001 — already gone with the cluster
            pass


class RayUnavailable(RuntimeError):
    pass


class RayBackend:
    name = "ray"
    ships_files = True  # a worker may be another machine: sources and parses travel as bytes

    def __init__(self, workers: int, address: str = "", retries: int = 2):
        try:
            import ray
        except ImportError as exc:
            raise RayUnavailable("the ray backend needs Ray: install it with `make ray` "
                                 "(pip install -r requirements-ray.txt)") from exc
        self._ray = ray
        self.address = address or os.environ.get(ADDRESS_ENV, "")
        with _init_lock:
            if not ray.is_initialized():
                if self.address:
                    ray.init(address=self.address, runtime_env=runtime_env(), log_to_driver=False)
                else:
                    ray.init(num_cpus=workers or os.cpu_count() or 1, include_dashboard=False,
                             runtime_env=runtime_env(), log_to_driver=False)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.workers = workers or cpus
        self._remote = ray.remote(num_cpus=1, max_retries=retries)(_compute)
        self._remote_batch = ray.remote(num_cpus=1, max_retries=retries)(_compute_batch)
        self._refs: dict[int, object] = {}

    def progress_inbox(self) -> RayInbox:
        return RayInbox()

    def submit(self, task: ComputeTask, progress_to=None) -> Future:
        return self._track(self._remote.remote(task, progress_to))  # not `or None`: an empty queue is falsy

    def submit_batch(self, tasks: list[ComputeTask], progress_to=None, key: str = "") -> Future:
        """One task for several short documents: its result is their ComputeResults, in order."""
        return self._track(self._remote_batch.remote(tasks, progress_to, key))

    def _track(self, ref) -> Future:
        future = ref.future()
        self._refs[id(future)] = ref
        future.add_done_callback(lambda f: self._refs.pop(id(f), None))
        return future

    def cancel(self, future: Future) -> None:
        ref = self._refs.get(id(future))
        if ref is not None:
            self._ray.cancel(ref, force=True)  # queued or running: Ray stops it either way

    def worker_lost(self, exc: BaseException) -> bool:
        return False  # Ray already retried it max_retries times: what is left is a failure

    def reset(self) -> None:
        pass

    def close(self) -> None:
        pass
