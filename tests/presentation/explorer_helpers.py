"""What the graph explorer tests share (and the page tests that build graph workspaces): ingesting papers
through parsing and the graph stage, and an entity's key from its name."""
from __future__ import annotations

from pathlib import Path

from core.graph.merge import normalize_key
from core.pipeline.documents import add_pdf
from core.pipeline.graph.stage import process_graph_queue
from core.pipeline.ingest import process_queue
from core.schema.records import DocStatus


def ingest(lib, *pdf_paths: Path) -> list[str]:
    ids = [add_pdf(lib, p.name, p.read_bytes()).doc_id for p in pdf_paths]
    for doc in process_queue(lib):
        assert doc.status == DocStatus.READY, doc.message
    for doc in process_graph_queue(lib):
        assert doc.graph_status == "done", doc.graph_message
    return ids


def key(name: str) -> str:
    return normalize_key(name)
