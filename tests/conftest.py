"""Shared fixtures.

`ready_workspace` (session): a workspace holding one generated paper (tests/pdfs.make_paper_pdf) ingested
through core for real: mineru parse, chunking, embedding model, SQLite and Chroma, and its LLM-free graph. Built
once per test session (~15-30 s, most of it loading the embedding model) and reused; tests that add documents to it
must remove them.

Markers (pyproject.toml): `browser` is given here to every test of a tests/pages/test_browser*.py file; `slow`,
`corpus`, `neo4j` and `llm` are set by the tests themselves. `pytest -m "not slow"` is the inner loop.

In CI (CI=true) every selected test must run: a skip there is a failure (a Chromium or model install that broke,
a corpus that went missing), so what CI cannot run is deselected by marker in .ci/run, with the reason, instead.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

# Tests must never wait on a model hub or send telemetry, whichever module is imported first.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
# The embedded model is the default reader wherever it is installed (CI installs it for the llm tests): every
# other test reads LLM-free unless it asks for a model, or each answer would cost the embedded model seconds.
os.environ.setdefault("PAPERGRAPH_EMBEDDED_READER", "off")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name.startswith("test_browser"):
            item.add_marker(pytest.mark.browser)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") == "true" and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where every selected test must run: {reason}"


@pytest.fixture(autouse=True)
def private_config(monkeypatch, tmp_path):
    """No API key from the developer's shell or home directory leaks into (or out of) any test: each test
    gets its own empty credentials folder."""
    monkeypatch.delenv("PAPERGRAPH_LLM_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("PAPERGRAPH_CONFIG_DIR", str(tmp_path / "config"))


@dataclass(frozen=True)
class ReadyWorkspace:
    root: Path  # pass as PAPERGRAPH_WORKSPACE or Workspace(root)
    doc_id: str
    pdf: Path  # the generated paper's bytes, e.g. to upload it again
    title: str


@pytest.fixture(scope="session")
def ready_workspace(tmp_path_factory) -> ReadyWorkspace:
    from core.library import open_library
    from core.pipeline.documents import add_pdf
    from core.pipeline.graph.stage import process_graph_queue
    from core.pipeline.ingest import process_queue
    from core.schema.records import DocStatus
    from core.settings.workspace import Workspace
    from tests import pdfs

    root = tmp_path_factory.mktemp("ready-workspace")
    pdf = pdfs.make_paper_pdf(tmp_path_factory.mktemp("ready-pdfs") / "heliotrope-paper.pdf")
    lib = open_library(Workspace(root))
    added = add_pdf(lib, pdf.name, pdf.read_bytes())
    (doc,) = process_queue(lib)
    assert doc.id == added.doc_id and doc.status == DocStatus.READY, doc.message
    (graphed,) = process_graph_queue(lib)
    assert graphed.graph_status == "done", graphed.graph_message
    return ReadyWorkspace(root=root, doc_id=doc.id, pdf=pdf, title=doc.display_title)
