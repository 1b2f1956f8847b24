"""The two status machines: their stored values and the transitions the pipeline relies on."""
import pytest

from core.schema.records import DocStatus, Document, GraphStatus

D, G = DocStatus, GraphStatus


def test_stored_values_never_change():
    # Existing workspaces store these strings in SQLite.
    assert [s.value for s in DocStatus] == ["queued", "parsing", "indexing", "ready", "failed"]
    assert [s.value for s in GraphStatus] == ["", "pending", "extracting", "done", "failed"]
    assert DocStatus("ready") is D.READY and GraphStatus("") is G.NONE
    assert Document(id="x", filename="x.pdf").graph_status is G.NONE


def test_statuses_read_as_their_values():
    # Shown in tables and CLI lines: never "GraphStatus.DONE".
    assert f"{G.DONE:7}|{D.READY}" == "done   |ready" and str(G.NONE) == ""
    assert G.DONE == "done" and not G.NONE


@pytest.mark.parametrize("path", [
    [D.QUEUED, D.PARSING, D.INDEXING, D.READY],  # an ingest
    [D.QUEUED, D.PARSING, D.FAILED, D.QUEUED],  # a parse error, then Retry
    [D.QUEUED, D.PARSING, D.INDEXING, D.FAILED],
    [D.PARSING, D.QUEUED], [D.INDEXING, D.QUEUED],  # recovery after a dead worker
    [D.READY, D.QUEUED],  # Retry of a ready paper re-parses it
])
def test_document_transitions_the_pipeline_makes(path):
    assert all(a.can_become(b) for a, b in zip(path, path[1:]))


@pytest.mark.parametrize("a, b", [
    (D.QUEUED, D.READY), (D.QUEUED, D.INDEXING), (D.QUEUED, D.FAILED), (D.QUEUED, D.QUEUED),
    (D.PARSING, D.READY), (D.READY, D.PARSING), (D.READY, D.FAILED), (D.FAILED, D.READY), (D.READY, D.READY),
])
def test_document_transitions_that_are_bugs(a, b):
    assert not a.can_become(b)


@pytest.mark.parametrize("path", [
    [G.NONE, G.PENDING, G.EXTRACTING, G.DONE],  # a paper turns ready, its graph is built
    [G.PENDING, G.EXTRACTING, G.FAILED, G.PENDING],  # every chunk failed, then Retry graph
    [G.EXTRACTING, G.PENDING, G.EXTRACTING],  # paused for an upload, or its worker died; resumed
    [G.DONE, G.PENDING, G.PENDING],  # the graph is cleared; Retry graph on a pending paper
    [G.NONE, G.NONE],  # the first ingest of a paper fails
    [G.DONE, G.NONE], [G.EXTRACTING, G.NONE],  # the paper is re-parsed and fails: no graph
])
def test_graph_transitions_the_pipeline_makes(path):
    assert all(a.can_become(b) for a, b in zip(path, path[1:]))


@pytest.mark.parametrize("a, b", [
    (G.NONE, G.EXTRACTING), (G.NONE, G.DONE), (G.PENDING, G.DONE), (G.PENDING, G.FAILED),
    (G.DONE, G.EXTRACTING), (G.FAILED, G.DONE), (G.DONE, G.DONE), (G.EXTRACTING, G.EXTRACTING),
])
def test_graph_transitions_that_are_bugs(a, b):
    assert not a.can_become(b)


def test_in_progress():
    assert [s for s in DocStatus if s.in_progress] == [D.QUEUED, D.PARSING, D.INDEXING]
    assert [s for s in GraphStatus if s.in_progress] == [G.PENDING, G.EXTRACTING]
