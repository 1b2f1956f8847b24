"""The ray compute backend against a local Ray instance started here (`ray.init(num_cpus=2)`): the same papers
give exactly the workspace a sequential run gives. Skipped without Ray (`make ray`), except in CI, where a skip
fails and `make test` installs the extra first."""
from __future__ import annotations

import pytest

from core.pipeline.compute import compute_backend
from core.pipeline.compute.ray_backend import runtime_env
from core.pipeline.ingest import process_queue
from core.schema.records import DocStatus
from tests.pipeline.test_compute_local import _WORKER, add_all, new_library, papers, sequential, snapshot

__all__ = ["papers", "sequential"]  # module fixtures shared with the local backend's tests

pytestmark = [pytest.mark.ray, pytest.mark.slow]


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray", reason="the ray backend needs `make ray`")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env=runtime_env())
    yield ray
    ray.shutdown()


def test_ray_backend_gives_the_workspace_of_a_sequential_run(local_ray, papers, sequential, tmp_path):
    lib = new_library(tmp_path / "ws")
    add_all(lib, papers)
    backend = compute_backend(lib.settings.compute, "ray", 2)
    assert backend.workers == 2 and int(local_ray.cluster_resources()["CPU"]) == 2

    stages: dict[str, list[str]] = {}

    def progress(doc_id: str, detail: str, fraction: float) -> None:
        if _WORKER.search(detail):  # a stage a Ray task reported, through the Ray queue
            stages.setdefault(doc_id, []).append(detail)

    done = process_queue(lib, on_progress=progress, backend=backend)

    assert [d.status for d in done] == [DocStatus.READY] * len(papers), [d.message for d in done]
    assert snapshot(lib) == sequential
    # Each paper's stages came back from its worker while it ran, as the local pool's do.
    assert set(stages) == {d.id for d in done}, stages
    for details in stages.values():
        assert any(d.startswith("parsing") for d in details) and any(d.startswith("embedding") for d in details), \
            details
    # The parse came back as bytes and was written into the workspace like a local one.
    for doc in done:
        assert (lib.workspace.parsed_dir(doc.id) / "content_list.json").is_file()
