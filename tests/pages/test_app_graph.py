"""The Graph page through Streamlit's AppTest over a real workspace (builtin parser, spaCy graph, SQLite, Chroma):
filters, search, neighbourhoods, the entity and edge panels, edits, paths, duplicates and exports. The graph
itself is drawn in a component (an iframe) that AppTest cannot see into: tests/pages/test_browser_graph.py clicks it."""
from __future__ import annotations

import json
import shutil

import networkx as nx
import pytest

from core.graph.merge import normalize_key
from core.library import open_library
from core.presentation.graph.explorer import encode_view_state
from core.presentation.graph.graph_index import load_index
from core.settings.workspace import Workspace
from tests.graph_papers import fast_workspace, make_bert_pdf, make_roberta_pdf
from tests.pages.app_helpers import run_app, texts
from tests.presentation.explorer_helpers import ingest

PAGE = "pages/graph.py"


@pytest.fixture(scope="module")
def graph_ws(tmp_path_factory):
    folder = tmp_path_factory.mktemp("app-graph-pdfs")
    root = tmp_path_factory.mktemp("app-graph") / "ws"
    lib = open_library(fast_workspace(root))
    ingest(lib, make_bert_pdf(folder), make_roberta_pdf(folder))
    return root


@pytest.fixture
def ws_copy(graph_ws, tmp_path):
    copy = tmp_path / "ws"
    shutil.copytree(graph_ws, copy)
    return copy


def plain(elements) -> str:
    return texts(elements).replace("\\", "")


def ok(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def test_empty_workspace_says_how_to_get_a_graph(monkeypatch, tmp_path):
    at = run_app(monkeypatch, fast_workspace(tmp_path / "empty").root, PAGE)
    assert "The graph is empty" in texts(at.info)


@pytest.mark.slow
def test_filters_and_search_change_the_view_and_its_note(monkeypatch, graph_ws):
    lib = open_library(Workspace(graph_ws))
    entities = sum(not n.is_paper for n in lib.graph.all_nodes())
    at = run_app(monkeypatch, graph_ws, PAGE)
    captions = plain(at.caption)
    # The default view is the overview: each paper with its most connected entities, the main ones labelled.
    assert "Overview: 2 paper(s) and the 8 most connected entities of each" in captions, captions
    assert f"of {entities} entities" in captions and "Labelled: up to the " in captions
    assert "built by LLM-free (spaCy)" in captions and "No LLM is configured" in captions
    assert at.toggle(key="g_include_papers").disabled  # the overview always shows the papers

    at.toggle(key="g_overview").set_value(False).run()
    ok(at)
    assert f"Showing all {entities} entities that match the filters" in plain(at.caption)

    at.slider(key="g_max_nodes").set_value(10).run()
    ok(at)
    assert f"Showing 10 of {entities} entities" in plain(at.caption) and "most connected first" in plain(at.caption)
    assert len(at.selectbox(key="g_entity").options) == 11  # (choose one) + the 10 shown
    # The view is kept in the URL, so a reload or a shared link comes back to it.
    view = at.query_params["view"]
    view = json.loads(view if isinstance(view, str) else view[0])
    assert view["max_nodes"] == 10 and view["overview"] is False

    at.text_input(key="g_search").input("Roberat").run()  # a typo
    ok(at)
    options = at.selectbox(key="g_entity").options
    assert any(o.startswith("RoBERTa (") for o in options), options
    at.text_input(key="g_search").input("").run()

    at.multiselect(key="g_types").set_value(["dataset"]).run()
    ok(at)
    shown = [o for o in at.selectbox(key="g_entity").options if o != "(choose one)"]
    assert shown and all(o.endswith("(dataset)") for o in shown)
    at.multiselect(key="g_types").set_value([]).run()

    at.slider(key="g_years").set_value((2018, 2018)).run()
    ok(at)
    assert "RoBERTa (" not in " ".join(at.selectbox(key="g_entity").options)
    at.slider(key="g_years").set_value((2018, 2020)).run()

    at.number_input(key="g_min_degree").set_value(50).run()
    ok(at)
    assert "Nothing matches these filters." in plain(at.caption)


@pytest.mark.slow
def test_a_link_with_a_view_and_an_entity_opens_its_neighbourhood_and_panel(monkeypatch, graph_ws):
    view = encode_view_state({"neighbourhood": True, "depth": 1, "max_nodes": 300})
    at = run_app(monkeypatch, graph_ws, PAGE, query_params={"view": view, "entity": normalize_key("RoBERTa")})
    ok(at)
    assert "Neighbourhood of RoBERTa at depth 1" in plain(at.caption)
    assert [s.value for s in at.subheader] == ["RoBERTa"]
    md = plain(at.markdown)
    assert "**Papers**" in md and "**Passages**" in md and "**Neighbours**" in md
    assert "page 1*" in md and "RoBERTa removes the next sentence prediction objective" in md
    links = at.get("page_link")
    assert any("page=1" in link.proto.query_string and "tab=Pages" in link.proto.query_string for link in links)
    neighbours = at.dataframe[0].value
    lib = open_library(Workspace(graph_ws))
    stored = lib.graph.node_edges(normalize_key("RoBERTa"))
    expected = {lib.graph.get_node(e.target if e.source == normalize_key("RoBERTa") else e.source).name for e in stored}
    assert set(neighbours["name"]) == expected and set(neighbours["relation"]) == {e.relation for e in stored}
    export = at.get("download_button")[0]  # the papers around it (both mention RoBERTa or a neighbour of it)
    assert export.label == "Export BibTeX of the 2 paper(s) around this entity"

    # A junk view parameter is ignored, not an error.
    at = run_app(monkeypatch, graph_ws, PAGE, query_params={"view": "{not json", "entity": "no such entity"})
    ok(at)
    assert not at.subheader


def test_edge_panel_from_a_link_and_from_the_neighbours(monkeypatch, graph_ws):
    lib = open_library(Workspace(graph_ws))
    bert = normalize_key("BERT")
    edge = next(e for e in lib.graph.node_edges(bert) if e.relation == "RELATED")
    at = run_app(monkeypatch, graph_ws, PAGE, query_params={"edge": f"{edge.source}|{edge.target}"})
    ok(at)
    heading = plain(at.subheader)
    assert " — " in heading and "BERT" in heading
    assert f"RELATED · weight {edge.weight:g}" in plain(at.caption)
    assert "**Keywords:**" in plain(at.markdown) or not edge.keywords
    at.button(key="g_close_edge").click().run()
    ok(at)
    assert not at.subheader


@pytest.mark.slow
def test_fixing_an_entity_from_the_page_persists(monkeypatch, ws_copy):
    glue = normalize_key("GLUE")
    at = run_app(monkeypatch, ws_copy, PAGE, query_params={"entity": glue})
    at.text_input(key=f"g_rename_{glue}").input("<img src=x onerror=alert(1)>")
    at.button(key="g_rename_btn").click().run()
    ok(at)
    assert "Renamed to" in plain(at.success)
    # Shown literally: escaped for markdown, never as HTML.
    assert at.subheader[0].value == "\\<img src=x onerror=alert\\(1\\)\\>"
    lib = open_library(Workspace(ws_copy))
    assert lib.graph.get_node(glue).name == "<img src=x onerror=alert(1)>"

    at.selectbox(key=f"g_type_{glue}").set_value("metric")
    at.button(key="g_retype_btn").click().run()
    ok(at)
    assert lib.graph.get_node(glue).type == "metric"

    # Refused edits say why and change nothing.
    at.text_input(key=f"g_rename_{glue}").input("RoBERTa")
    at.button(key="g_rename_btn").click().run()
    ok(at)
    assert "Not changed" in plain(at.error) and "merge the two instead" in plain(at.error)

    edits_expander = [e for e in at.expander if e.label.startswith("Your edits")][0]
    assert edits_expander.label == "Your edits (2)"
    at.button(key="g_undo_0").click().run()  # the rename
    ok(at)
    assert lib.graph.get_node(glue).name == "GLUE"

    at.checkbox(key=f"g_confirm_delete_{glue}").check().run()
    at.button(key="g_delete_btn").click().run()
    ok(at)
    assert lib.graph.get_node(glue) is None and "Deleted" in plain(at.success)


def test_merging_by_hand_shows_both_sides_first(monkeypatch, ws_copy):
    bert = normalize_key("BERT")
    at = run_app(monkeypatch, ws_copy, PAGE, query_params={"entity": bert})
    at.text_input(key=f"g_merge_q_{bert}").input("MultiNLI").run()
    ok(at)
    pick = at.selectbox(key=f"g_merge_pick_{bert}")
    assert "MultiNLI (dataset)" in pick.options or "MultiNLI (concept)" in pick.options
    pick.set_value(normalize_key("MultiNLI")).run()
    ok(at)
    md = plain(at.markdown)
    assert "**BERT**" in md and "**MultiNLI**" in md  # both sides' evidence, side by side
    at.button(key="g_merge_btn").click().run()
    ok(at)
    lib = open_library(Workspace(ws_copy))
    assert lib.graph.get_node(normalize_key("MultiNLI")) is None
    assert lib.graph_sources.aliases()[normalize_key("MultiNLI")] == bert


def test_explain_a_connection_lists_paths_with_passages(monkeypatch, graph_ws):
    index = load_index(open_library(Workspace(graph_ws)))
    graph = nx.Graph((a, b) for a, nbrs in index.related.items() for b in nbrs)
    source = normalize_key("RoBERTa")
    target = next(k for k, d in sorted(nx.single_source_shortest_path_length(graph, source).items()) if d == 2)
    at = run_app(monkeypatch, graph_ws, PAGE)
    at.text_input(key="g_path_q_From").input("RoBERTa").run()
    at.selectbox(key="g_path_From").set_value(source)
    at.text_input(key="g_path_q_To").input(index.nodes[target].name).run()
    at.selectbox(key="g_path_To").set_value(target).run()
    at.button(key="g_find_paths").click().run()
    ok(at)
    md = plain(at.markdown)
    assert "**Path 1** (2 hop(s)): RoBERTa → " in md and f" → {index.nodes[target].name}" in md
    assert "Robustly Optimized" in md  # each hop's passage names its paper and page
    assert any("tab=Pages" in link.proto.query_string for link in at.get("page_link"))


def test_exports_from_the_page(monkeypatch, graph_ws):
    at = run_app(monkeypatch, graph_ws, PAGE)
    for fmt, name in (("json", "papergraph.json"), ("csv", "papergraph-csv.zip"), ("cypher", "papergraph.cypher"),
                      ("html", "papergraph.html")):
        at.selectbox(key="g_export_format").set_value(fmt)
        at.button(key="g_export_prepare").click().run()
        ok(at)
        assert at.session_state["g_export"][0] == name
        assert at.get("download_button")
    assert b"new vis.Network" in at.session_state["g_export"][1]


def test_duplicates_are_listed_with_evidence(monkeypatch, graph_ws, ws_copy):
    # At the default threshold (0.92) no pair of these two papers' entities is close enough, and the page says so.
    at = run_app(monkeypatch, graph_ws, PAGE)
    at.button(key="g_find_duplicates").click().run()
    ok(at)
    assert at.session_state["g_duplicates"] == []
    assert "No pair of entities is above the similarity threshold (Settings → graph)." in texts(at.info)

    # With the threshold lowered in the settings, the closest pair is suggested. The two papers' cleaned graph has
    # no true duplicates (20 entities); its closest pair, two method/task phrases, embeds at ~0.67.
    ws = Workspace(ws_copy)
    settings = ws.settings()
    settings.graph.duplicate_similarity = 0.6
    ws.save_settings(settings)
    at = run_app(monkeypatch, ws_copy, PAGE)
    at.button(key="g_find_duplicates").click().run()
    ok(at)
    pairs = at.session_state["g_duplicates"]
    assert pairs, "no pair above 0.6"
    pair = pairs[0]
    assert 0.6 <= pair["similarity"] < 0.92 and f"similarity {pair['similarity']:.2f}" in plain(at.caption)
    assert all(p["similarity"] <= pair["similarity"] for p in pairs)
    # Each side's evidence: name, type and counts, then its description.
    md, captions = plain(at.markdown), plain(at.caption)
    lib = open_library(ws)
    for key in (pair["keep"], pair["merge"]):
        node = lib.graph.get_node(key)
        assert f"**{node.name}** ({node.type}), " in md and node.description[:300] in captions
    assert f"Merge {pair['merge_name']} into {pair['keep_name']}" in [b.label for b in at.button]


def test_the_filters_are_folded_above_the_graph_and_their_label_says_which_are_set(monkeypatch, graph_ws):
    at = run_app(monkeypatch, graph_ws, PAGE)
    (box,) = [e for e in at.expander if e.label.startswith("Filters")]
    assert box.proto.expanded is False  # open, it was taller than the window and hid the graph
    assert not box.text_input and at.text_input(key="g_search")  # the search stays in sight, above the graph
    assert box.multiselect(key="g_types") is not None
    at.multiselect(key="g_types").set_value(["dataset"]).run()
    at.number_input(key="g_min_degree").set_value(2).run()
    ok(at)
    (box,) = [e for e in at.expander if e.label.startswith("Filters")]
    assert box.label == "Filters · 1 entity type, ≥ 2 relations"


def test_an_entity_is_described_by_its_best_sentences_with_their_papers_the_rest_folded(monkeypatch, graph_ws):
    lib = open_library(Workspace(graph_ws))
    key = normalize_key("RoBERTa")
    sources = lib.graph_sources.entity_sources([key])[key]
    titles = load_index(lib).paper_titles
    at = run_app(monkeypatch, graph_ws, PAGE, query_params={"entity": key})
    ok(at)
    lines = [m.value.replace("\\", "") for m in at.markdown if m.value.endswith("*") and " — *" in m.value]
    lead = [line for line in lines if not line.startswith("- ")]  # the folded list's items start with "- "
    assert 1 <= len(lead) <= 2, lines
    for line in lead:
        sentence, paper = line.rsplit(" — *", 1)
        assert paper.rstrip("*") in titles.values()
        assert any(" ".join(sentence.split()) in " ".join(s.description.split()) for s in sources), sentence
    assert "RoBERTa" in lead[0]
    shown = plain(at.markdown)
    assert "more passages)" not in shown  # the merge's "(+N more passages)" jumble is gone
    folded = [e for e in at.expander if "more sentence(s) about this entity" in e.label]
    assert len(folded) <= 1 and all(e.proto.expanded is False for e in folded)
