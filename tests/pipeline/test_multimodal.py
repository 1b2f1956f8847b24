"""Tables, figures and equations as knowledge: table HTML with spans, offline descriptions on real MinerU output,
the VLM path through a real local OpenAI-protocol server (the image is sent), media entities in the graph."""
from __future__ import annotations

import base64
import io
import json
from dataclasses import asdict
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from core.content.images import item_image
from core.content.media_doc import load_media_doc
from core.content.media_items import caption_label, media_labels, short_title
from core.graph.merge import normalize_key
from core.library import open_library
from core.models.vlm import image_part
from core.pipeline.documents import add_pdf, delete_document
from core.pipeline.graph.media_entities import BELONGS_TO, media_entity_name
from core.pipeline.graph.stage import process_graph_queue, retry_graph
from core.pipeline.ingest import process_queue
from core.pipeline.media.describe import redescribe_item
from core.pipeline.media.vlm_describe import parse_reply
from core.presentation.gallery import gallery_entries
from core.query.search import SearchFilters, search
from core.schema.graph import RELATED
from core.schema.media import OFFLINE, OFFLINE_NOTE, VLM
from core.schema.records import ContentItem, DocStatus
from core.settings.workspace import Workspace
from core.text import tables
from tests import pdfs
from tests.graph_papers import fast_workspace
from tests.openai_server import OpenAIReplayServer, Reply

SPANNED = ('<table><tr><th rowspan="2">Model</th><th colspan="2">GLUE</th></tr><tr><th>dev</th><th>test</th></tr>'
           '<tr><td rowspan="2">BERT</td><td>86.7</td><td>85.1</td></tr><tr><td>87.0</td><td>86.2</td></tr>'
           '<tr><td colspan="3">Averages over 5 seeds</td></tr></table>')


# ---------------------------------------------------------------------------------------------- tables

def test_rowspan_and_colspan_fill_the_grid_and_name_the_columns():
    frame = tables.table_frame(SPANNED)
    assert list(frame.columns) == ["Model", "GLUE / dev", "GLUE / test"]
    assert frame.values.tolist() == [["BERT", "86.7", "85.1"], ["BERT", "87.0", "86.2"],
                                     ["Averages over 5 seeds"] * 3]
    assert tables.table_records(SPANNED)[:2] == ["Model: BERT; GLUE / dev: 86.7; GLUE / test: 85.1",
                                                 "Model: BERT; GLUE / dev: 87.0; GLUE / test: 86.2"]
    back = pd.read_csv(io.StringIO(tables.table_csv(SPANNED)), dtype=str)
    assert back.columns.tolist() == ["Model", "GLUE / dev", "GLUE / test"] and back.iloc[1, 2] == "86.2"


def test_broken_and_hostile_table_html_keeps_what_can_be_read():
    grid = tables.table_grid('<table><tr><td>a<script>alert(1)</script></td><td rowspan="999999">b'
                             '<tr><td>c</td>')
    assert grid.rows == [["a", "b"], ["c", "b"]]  # the span stops at the last row; the script is not content
    assert tables.table_frame("<p>no table</p>") is None and tables.table_csv("") == ""
    # MinerU writes header cells as <td>: a full first row over data is the header.
    assert tables.table_records("<table><tr><td>Solver</td><td>F1</td></tr><tr><td>Saffron</td><td>4.1</td></tr>"
                                "</table>") == ["Solver: Saffron; F1: 4.1"]


def test_labels_come_from_captions_else_from_rank():
    items = [ContentItem(type="table", page_idx=0, index=0, captions=["TABLE II: Scores."]),
             ContentItem(type="image", page_idx=0, index=1, captions=["Fig. 3. A plot."]),
             ContentItem(type="image", page_idx=1, index=2),
             ContentItem(type="equation", page_idx=1, index=3, text=r"E = mc^2 \tag{4}"),
             ContentItem(type="table", page_idx=2, index=4, captions=["Table II (continued)"])]
    assert media_labels(items) == {0: "Table II", 1: "Figure 3", 2: "Figure 2", 3: "Equation (4)",
                                   4: "Table II (2)"}
    assert caption_label("Results are in the table") == ""
    assert short_title("TableFormer: Table Structure Understanding with Transformers") == "TableFormer"


def test_vlm_replies_are_read_defensively():
    fenced = parse_reply('```json\n{"description": "Bars of {F1}", "entities": [{"name": "BERT"}, 7]}\n```')
    assert fenced.description == "Bars of {F1}" and [e.name for e in fenced.entities] == ["BERT"]
    assert "1 malformed" in fenced.message
    cut = parse_reply('{"description": "Accuracy rises with \\"depth\\", then', )
    assert cut.description == 'Accuracy rises with "depth", then' and "cut off" in cut.message
    prose = parse_reply("A bar chart of accuracy per solver.")
    assert prose.description.startswith("A bar chart") and "prose" in prose.message
    assert parse_reply("{nonsense").description == "" and "could not be read" in parse_reply("{x").message


# ---------------------------------------------------------------------------------------------- offline path

def test_offline_descriptions_on_real_mineru_output(ready_workspace):
    lib = open_library(Workspace(ready_workspace.root))
    chunks = {c.kind: c for c in lib.chunks.by_doc(ready_workspace.doc_id) if c.kind != "text"}
    table, figure = chunks["table"], chunks["image"]
    assert table.text.startswith(pdfs.TABLE_CAPTION)
    assert "Solver: Heliotrope; Accuracy: 91.4; Runtime (s): 12.7" in table.text  # table HTML as column: value
    assert figure.text.startswith(pdfs.FIGURE_CAPTION)
    stored = lib.descriptions.by_doc(ready_workspace.doc_id)
    assert all(set(rows) == {OFFLINE} for rows in stored.values()) and len(stored) == 2
    entries = gallery_entries(lib)
    assert {e.label for e in entries} == {"Table 1", "Figure 1"}
    assert all(e.current.note == OFFLINE_NOTE for e in entries)

    # Retrievable by a query made from the caption, like any chunk.
    hits = search(lib, "accuracy of lattice solvers on the Okapi benchmark", top_k=5)
    assert table.id in [h.chunk.id for h in hits]
    hits = search(lib, "convergence of the heliotrope solver", top_k=5, filters=SearchFilters(kinds=["image"]))
    assert hits and hits[0].chunk.id == figure.id

    png = item_image(lib, table)
    assert png and png.startswith(b"\x89PNG")
    with Image.open(io.BytesIO(png)) as img:
        assert img.width > 100 and img.height > 20
    assert item_image(lib, next(c for c in lib.chunks.by_doc(ready_workspace.doc_id) if c.kind == "text")) is None


def test_media_items_are_entities_that_belong_to_their_paper(ready_workspace):
    lib = open_library(Workspace(ready_workspace.root))
    name = media_entity_name("Table 1", pdfs.TABLE_CAPTION, ready_workspace.title)
    assert name == "Table 1 — Accuracy of the three lattice solvers on the Okapi benchmark"  # from its caption
    node = lib.graph.get_node(normalize_key(name))
    assert node is not None and node.type == "table" and node.name == name
    edges = lib.graph.node_edges(node.key)
    assert [e.relation for e in edges if e.target == f"paper:{ready_workspace.doc_id}"] == [BELONGS_TO]
    linked = {lib.graph.get_node(e.source if e.target == node.key else e.target).name.lower()
              for e in edges if e.relation == RELATED}
    assert any("okapi" in n for n in linked), linked  # an entity its description mentions
    figure = lib.graph.get_node(normalize_key(media_entity_name("Figure 1", pdfs.FIGURE_CAPTION, "")))
    assert figure is not None and figure.type == "figure"


@pytest.mark.slow
def test_insert_delete_insert_gives_the_same_media_entities(tmp_path):
    pdf = pdfs.make_paper_pdf(tmp_path / "paper.pdf")
    lib = open_library(fast_workspace(tmp_path / "ws"))

    def ingest() -> str:
        doc_id = add_pdf(lib, pdf.name, pdf.read_bytes()).doc_id
        assert process_queue(lib)[0].status == DocStatus.READY
        assert process_graph_queue(lib)[0].graph_status == "done"
        return doc_id

    def graph() -> tuple:
        return (sorted(json.dumps(asdict(n) | {"community": None}, sort_keys=True) for n in lib.graph.all_nodes()),
                sorted(json.dumps(asdict(e), sort_keys=True) for e in lib.graph.all_edges()))

    doc_id = ingest()
    first = graph()
    assert any('"type": "table"' in n for n in first[0]) and any(BELONGS_TO in e for e in first[1])
    delete_document(lib, doc_id)
    assert not any('"type": "table"' in n for n in graph()[0])
    ingest()
    assert graph() == first


# ---------------------------------------------------------------------------------------------- VLM path

def vlm_reply(body: dict) -> Reply:
    """A well-behaved VLM: names the item it was asked about and an entity per kind."""
    user = next(m for m in body["messages"] if m["role"] == "user")
    text = next(p["text"] for p in user["content"] if p["type"] == "text")
    label = text.splitlines()[1].split(" (page")[0]
    entity = "Okapi benchmark" if label.startswith("Table") else "HelioNet"
    return Reply(content=json.dumps({"description": f"{label} as seen by the VLM: it compares solvers.",
                                     "entities": [{"name": entity, "type": "dataset", "description": "shown"}]}))


@pytest.fixture
def vlm_server():
    with OpenAIReplayServer(default=vlm_reply, model="replay-vision") as server:
        yield server


def vlm_workspace(root: Path, server) -> Workspace:
    ws = fast_workspace(root)
    settings = ws.settings()
    settings.vlm.provider, settings.vlm.base_url, settings.vlm.model = "openai", server.url, "replay-vision"
    ws.save_settings(settings)
    return ws


def image_parts(body: dict) -> list[str]:
    return [p["image_url"]["url"] for m in body["messages"] if isinstance(m["content"], list)
            for p in m["content"] if p.get("type") == "image_url"]


@pytest.mark.slow
def test_the_vlm_describes_each_item_from_its_image_and_context(tmp_path, vlm_server):
    pdf = pdfs.make_paper_pdf(tmp_path / "paper.pdf")
    lib = open_library(vlm_workspace(tmp_path / "ws", vlm_server))
    doc_id = add_pdf(lib, pdf.name, pdf.read_bytes()).doc_id
    assert process_queue(lib)[0].status == DocStatus.READY
    assert not vlm_server.chat_requests, "indexing never waits for the VLM"
    assert process_graph_queue(lib)[0].graph_status == "done"

    requests = vlm_server.chat_requests
    assert len(requests) == len(load_media_doc(lib, doc_id).media) == 2  # one call per item
    for body in requests:
        (url,) = image_parts(body)
        assert url.startswith("data:image/png;base64,")
        with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as img:
            assert img.format == "PNG" and img.width > 50
        user = next(m for m in body["messages"] if m["role"] == "user")["content"][0]["text"]
        assert "Caption: " in user and "Text around it on the page:" in user
    table_request = next(b for b in requests if "one table of" in b["messages"][0]["content"])
    assert "Heliotrope | 91.4" in json.dumps(table_request)  # the table's HTML content goes with its image

    chunks = {c.kind: c for c in lib.chunks.by_doc(doc_id) if c.kind != "text"}
    assert "Table 1 as seen by the VLM" in chunks["table"].text and chunks["table"].text.startswith("Table 1:")
    hits = search(lib, "Table 1 as seen by the VLM compares solvers", top_k=3)
    assert chunks["table"].id in [h.chunk.id for h in hits]  # its windows were re-embedded
    (vlm_row,) = [r[VLM] for r in lib.descriptions.by_doc(doc_id).values() if "Table" in r[VLM].text]
    assert vlm_row.model == "openai:replay-vision" and vlm_row.entities[0].name == "Okapi benchmark"

    table = lib.graph.get_node(normalize_key(media_entity_name("Table 1", pdfs.TABLE_CAPTION, "")))
    okapi = lib.graph.get_node(normalize_key("Okapi benchmark"))
    assert okapi is not None and lib.graph.get_edge(*sorted((table.key, okapi.key))) is not None

    retry_graph(lib, doc_id)
    process_graph_queue(lib)
    assert len(vlm_server.chat_requests) == 2, "an item described once is never sent again"


@pytest.mark.slow
def test_broken_or_failed_vlm_replies_keep_a_usable_description(tmp_path):
    pdf = pdfs.make_paper_pdf(tmp_path / "paper.pdf")
    broken = Reply(content='{"description": "Convergence curve of the solver, cut off by max_tok')
    refused = Reply(status=400, content="", raw_body=json.dumps({"error": {"message": "image too large"}}))
    with OpenAIReplayServer(default=refused, model="replay-vision") as server:
        server.when("Figure 1 (page", broken)
        lib = open_library(vlm_workspace(tmp_path / "ws", server))
        doc_id = add_pdf(lib, pdf.name, pdf.read_bytes()).doc_id
        process_queue(lib)
        assert process_graph_queue(lib)[0].graph_status == "done"
        entries = {e.label: e for e in gallery_entries(lib)}
        figure, table = entries["Figure 1"], entries["Table 1"]
        assert figure.current.by_vlm and figure.current.text.startswith("Convergence curve")
        assert "cut off" in figure.vlm.message
        assert table.current.source == OFFLINE and "image too large" in table.vlm.message  # offline stays
        chunks = {c.kind: c for c in lib.chunks.by_doc(doc_id)}
        assert "Solver: Heliotrope" in chunks["table"].text

        # Re-describe is a fresh call even when the reply is cached.
        server.rules.clear()
        server.default = vlm_reply
        calls = len(server.chat_requests)
        result = redescribe_item(lib, doc_id, figure.item.index)
        assert len(server.chat_requests) == calls + 1 and "as seen by the VLM" in result.text
        redescribe_item(lib, doc_id, figure.item.index)
        assert len(server.chat_requests) == calls + 2
        assert "as seen by the VLM" in {c.kind: c for c in lib.chunks.by_doc(doc_id)}["image"].text


def test_vision_model_sends_image_parts_and_caches_by_image(tmp_path, vlm_server):
    lib = open_library(vlm_workspace(tmp_path / "ws", vlm_server))
    model = lib.vision_model()
    red, blue = (_png((255, 0, 0)), _png((0, 0, 255)))
    ask = "Table 1 (page 1)\nWhat is this?"

    def messages(png):
        return [{"role": "user", "content": [{"type": "text", "text": "Paper: x\n" + ask}, image_part(png)]}]

    assert model.chat(messages(red)).cached is False
    assert model.chat(messages(red)).cached is True
    assert model.chat(messages(blue)).cached is False, "another image is another request"
    assert len(vlm_server.chat_requests) == 2
    assert image_parts(vlm_server.chat_requests[1])[0] == image_part(blue)["image_url"]["url"]
    with pytest.raises(ValueError):
        image_part(b"")


def _png(colour) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), colour).save(buffer, format="PNG")
    return buffer.getvalue()
