"""The workspace at a glance: how many papers in which state, the graph's size, the modes it can run."""
from __future__ import annotations

from core.library import Library
from core.query.routes import available_modes, default_mode
from core.service.records import Status


def status(lib: Library, ingesting: bool = False) -> Status:
    counts = {str(k): v for k, v in lib.documents.status_counts().items() if v}
    nodes, edges = lib.graph.counts()
    modes = available_modes(lib)
    llm = lib.settings.llm
    return Status(workspace=lib.workspace.root.name, papers=sum(counts.values()), by_status=counts,
                  graph={"nodes": nodes, "edges": edges}, modes=[str(m) for m in modes],
                  default_mode=str(default_mode(lib, modes)),
                  llm="" if llm.provider == "none" else f"{llm.provider}:{llm.model}", ingesting=ingesting)
