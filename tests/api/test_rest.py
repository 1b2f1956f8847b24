"""The REST face against a live uvicorn server (httpx, over a real socket) on a small real workspace: every route,
the server-sent events of ask, and an upload polled until searchable, then deleted."""
from __future__ import annotations

import time

import httpx
import pytest
from httpx_sse import connect_sse

from tests.api.helpers import ANSWER_WORD, QUESTION, LiveServer, build_workspace


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    lib, ids = build_workspace(tmp_path_factory.mktemp("rest"))
    with LiveServer(lib) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        yield lib, ids, client


def _error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code and error["message"]
    return error["message"]


def test_status_lists_the_ready_papers_and_the_modes(served):
    _, ids, client = served
    status = client.get("/api/status").json()
    assert status["papers"] == 2 and status["by_status"] == {"ready": 2}
    assert "mix" in status["modes"] and status["graph"]["nodes"] > 0
    papers = client.get("/api/papers").json()
    assert sorted(p["id"] for p in papers) == sorted(ids)
    assert all(p["status"] == "ready" and p["pages"] == 1 for p in papers)


def test_a_paper_is_found_by_its_id_or_a_prefix_and_an_unknown_one_is_404(served):
    _, ids, client = served
    full = client.get(f"/api/papers/{ids[0]}").json()
    assert client.get(f"/api/papers/{ids[0][:10]}").json() == full
    assert full["title"] and full["file"] == "bert.pdf"
    _error(client.get("/api/papers/" + "0" * 64), 404, "not_found")
    _error(client.get("/api/papers/not-an-id"), 400, "invalid_input")


def test_search_returns_passages_as_citations_with_page_box_and_quote(served):
    _, _, client = served
    found = client.get("/api/search", params={"q": "masked language model pre-training data", "top_k": 3}).json()
    assert 1 <= len(found["citations"]) <= 3 and len(found["scores"]) == len(found["citations"])
    first = found["citations"][0]
    assert first["page"] == 1 and len(first["box"]) == 4 and first["quote"] and first["paper"]
    assert any("BooksCorpus" in c["quote"] for c in found["citations"])
    _error(client.get("/api/search", params={"q": "x", "top_k": 500}), 400, "invalid_input")
    _error(client.get("/api/search", params={"q": "x", "kind": "video"}), 400, "invalid_input")


def test_ask_answers_with_the_passages_it_cites(served):
    _, _, client = served
    result = client.post("/api/ask", json={"question": QUESTION, "mode": "mix"}).json()
    assert ANSWER_WORD in result["answer"] and result["extractive"] and not result["abstained"]
    assert result["citations"], result
    for citation in result["citations"]:
        assert f"[{citation['n']}]" in result["answer"]
        assert citation["page"] == 1 and citation["quote"]
    assert any(ANSWER_WORD in c["quote"] for c in result["citations"])


def test_ask_streams_server_sent_events_ending_with_the_same_result(served):
    _, _, client = served
    plain = client.post("/api/ask", json={"question": QUESTION, "mode": "naive"}).json()
    events = []
    with connect_sse(client, "POST", "/api/ask", json={"question": QUESTION, "mode": "naive", "stream": True}) as sse:
        assert sse.response.headers["content-type"].startswith("text/event-stream")
        events = [(e.event, e.json()) for e in sse.iter_sse()]
    assert [kind for kind, _ in events][-1] == "result" and events[0][0] == "token"
    assert "".join(data["delta"] for kind, data in events if kind == "token") == plain["answer"]
    streamed = events[-1][1]
    assert streamed["answer"] == plain["answer"] and streamed["citations"] == plain["citations"]


def test_ask_refuses_an_unknown_mode_before_streaming(served):
    _, _, client = served
    message = _error(client.post("/api/ask", json={"question": QUESTION, "mode": "telepathy", "stream": True}),
                     400, "invalid_input")
    assert "naive" in message  # the modes to choose from


def test_ask_names_its_reader_and_refuses_an_unknown_one(served):
    _, _, client = served
    result = client.post("/api/ask", json={"question": QUESTION, "mode": "naive", "reader": "extractive"}).json()
    assert result["reader"] == "extractive" and result["extractive"]
    message = _error(client.post("/api/ask", json={"question": QUESTION, "reader": "oracle"}), 400, "invalid_input")
    assert "select" in message  # the readers to choose from


def test_passage_of_a_page_a_box_and_a_chunk(served):
    _, ids, client = served
    cited = client.post("/api/ask", json={"question": QUESTION, "mode": "naive"}).json()["citations"][0]
    page = client.get(f"/api/papers/{cited['paper_id']}/passage", params={"page": 1}).json()
    assert ANSWER_WORD in page["text"] and page["items"] and page["citations"][0]["page"] == 1
    box = ",".join(str(v) for v in cited["box"])
    inside = client.get(f"/api/papers/{cited['paper_id']}/passage", params={"page": 1, "box": box}).json()
    assert ANSWER_WORD in inside["text"] and len(inside["items"]) < len(page["items"])
    chunk = client.get(f"/api/papers/{cited['paper_id']}/passage", params={"chunk": cited["chunk_id"]}).json()
    assert ANSWER_WORD in chunk["text"] and chunk["citations"][0]["chunk_id"] == cited["chunk_id"]
    _error(client.get(f"/api/papers/{ids[0]}/passage", params={"page": 9}), 400, "invalid_input")
    _error(client.get(f"/api/papers/{ids[0]}/passage", params={"page": 1, "box": "1,2,3"}), 400, "invalid_input")
    _error(client.get(f"/api/papers/{ids[0]}/passage", params={"chunk": f"{ids[1]}:0"}), 404, "not_found")


def test_graph_neighbours_of_an_entity_with_the_passages_it_comes_from(served):
    _, _, client = served
    found = client.get("/api/graph/neighbours", params={"entity": "bert", "limit": 50}).json()
    assert found["name"] == "BERT" and len(found["papers"]) == 2
    assert {"MultiNLI", "CC-News"} <= {n["name"] for n in found["neighbours"]}
    assert found["citations"] and all(c["page"] == 1 and "BERT" in c["quote"] for c in found["citations"])
    _error(client.get("/api/graph/neighbours", params={"entity": "Quantum Gravity"}), 404, "not_found")


def test_graph_path_between_two_entities_cites_each_link(served):
    _, _, client = served
    found = client.get("/api/graph/path", params={"source": "multinli", "target": "cc-news"}).json()
    assert (found["source"], found["target"]) == ("MultiNLI", "CC-News") and found["paths"]
    numbers = {c["n"] for c in found["citations"]}
    for path in found["paths"]:
        assert path[0]["source"] == "MultiNLI" and path[-1]["target"] == "CC-News"
        assert all(hop["citation"] in numbers for hop in path)
    assert all(c["page"] == 1 and c["quote"] for c in found["citations"])
    _error(client.get("/api/graph/path", params={"source": "BERT", "target": "Quantum Gravity"}), 404, "not_found")


def test_cite_gives_each_papers_bibtex_from_its_metadata(served):
    import bibtexparser

    _, ids, client = served
    bibtex = client.get("/api/cite", params={"paper": [ids[0][:8], ids[1]]}).json()["bibtex"]
    entries = bibtexparser.parse_string(bibtex).entries
    assert len(entries) == 2
    titles = [e.fields_dict["title"].value for e in entries]
    assert any("Pre-training Deep Bidirectional Transformers for Language Understanding" in t for t in titles), titles


def test_an_upload_is_processed_in_the_background_found_by_search_then_deleted(served, tmp_path):
    lib, _, client = served
    text = b"# Heliotrope notes\n\nThe zanthoxylum lattice reaches 41.7 accuracy on the Quillwort benchmark.\n"
    escape = tmp_path / "escaped.md"  # where a path-traversal name would write
    response = client.post("/api/papers", params={"filename": f"../../../..{escape}"}, content=text,
                           headers={"content-type": "application/octet-stream"})
    assert response.status_code == 202, response.text
    added = response.json()
    assert added["outcome"] == "added" and added["file"] == "escaped.md" and not escape.exists()
    deadline = time.monotonic() + 90
    while (paper := client.get(f"/api/papers/{added['paper_id']}").json())["status"] != "ready":
        assert paper["status"] != "failed" and time.monotonic() < deadline, paper
        time.sleep(0.3)
    hits = client.get("/api/search", params={"q": "zanthoxylum lattice Quillwort", "top_k": 1}).json()
    assert hits["citations"][0]["paper_id"] == added["paper_id"]
    again = client.post("/api/papers", params={"filename": "copy.md"}, content=text,
                        headers={"X-PaperGraph-Request": "1"})  # untyped: the header marks it as no page's
    assert again.json()["outcome"] == "duplicate"
    deleted = client.delete(f"/api/papers/{added['paper_id']}")
    assert deleted.status_code == 200 and deleted.json()["id"] == added["paper_id"]
    _error(client.get(f"/api/papers/{added['paper_id']}"), 404, "not_found")
    assert not list(lib.workspace.staging_dir.glob("api-upload-*"))  # nothing of the upload left behind


def test_an_upload_that_is_not_a_paper_is_refused_before_its_body_is_read(served):
    _, _, client = served
    typed = {"content-type": "application/octet-stream"}
    message = _error(client.post("/api/papers", params={"filename": "tool.exe"}, content=b"MZ", headers=typed), 400,
                     "invalid_input")
    assert ".pdf" in message
    _error(client.post("/api/papers", params={"filename": "empty.md"}, content=b"", headers=typed), 400,
           "invalid_input")


def test_errors_of_the_framework_have_the_same_shape(served):
    _, _, client = served
    _error(client.get("/api/nothing-here"), 404, "not_found")
    _error(client.put("/api/status"), 405, "method_not_allowed")
    response = client.post("/api/ask", content=b"{not json", headers={"content-type": "application/json"})
    _error(response, 422, "invalid_input")
    _error(client.post("/api/ask", json={"mode": "mix"}), 422, "invalid_input")


def test_the_openapi_description_lists_every_route(served):
    _, _, client = served
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/api/status", "/api/papers", "/api/papers/{paper_id}", "/api/papers/{paper_id}/passage",
                 "/api/search", "/api/ask", "/api/graph/neighbours", "/api/graph/path", "/api/cite", "/v1/models",
                 "/v1/chat/completions"):
        assert path in paths
    assert client.get("/docs").status_code == 200 and client.get("/health").json() == {"ok": True}
