"""The graph explorer on real workspaces (builtin parser, spaCy extractor, SQLite, Chroma, the embedding model):
views and their filters, search, neighbourhoods, paths with passages, edits that persist through new papers and
rebuilds (graph and vectors), exports, and rendering that keeps paper text inert."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

from core.library import open_library
from core.pipeline.documents import add_pdf, delete_document
from core.pipeline.graph import edits
from core.pipeline.graph.build import clear_graph, entity_vector_id, relation_vector_id
from core.pipeline.graph.duplicates import merge_entities
from core.pipeline.graph.merge import normalize_key
from core.pipeline.graph.stage import process_graph_queue
from core.pipeline.ingest import process_queue
from core.presentation.graph.explorer import (
    ViewError,
    ViewFilters,
    build_view,
    decode_view_state,
    encode_view_state,
)
from core.presentation.graph.export import cypher_script, export_graph, export_view_html
from core.presentation.graph.graph_index import GraphIndex, load_index
from core.presentation.graph.panels import edge_panel, entity_panel
from core.presentation.graph.paths import explain_connection, shortest_paths, supporting_passage
from core.presentation.graph.render import RenderOptions, render_html
from core.schema.graph import PAPER_PREFIX, RELATED
from core.schema.records import DocStatus
from core.settings.config import Settings, SettingsError, validate
from core.settings.workspace import Workspace
from tests import pdfs
from tests.graph_papers import BERT_TITLE, ROBERTA_TITLE, fast_workspace, make_bert_pdf, make_roberta_pdf
from tests.paths import REPO

GLUE_TITLE = "Benchmarks Revisited for Sentence Understanding"
GLUE_SECTIONS: list[pdfs.Section] = [
    ("Abstract", ["Published at ACL 2021. BERT obtains new state-of-the-art results on the GLUE benchmark. "
                  "We fine-tune BERT on SQuAD for question answering and report the F1 score."]),
    ("1 Results", ["SQuAD and GLUE remain the benchmarks of choice. We compare ELECTRA with BERT on the GLUE "
                   "benchmark."]),
]


def ingest(lib, *pdf_paths: Path) -> list[str]:
    ids = [add_pdf(lib, p.name, p.read_bytes()).doc_id for p in pdf_paths]
    for doc in process_queue(lib):
        assert doc.status == DocStatus.READY, doc.message
    for doc in process_graph_queue(lib):
        assert doc.graph_status == "done", doc.graph_message
    return ids


@pytest.fixture(scope="module")
def base_ws(tmp_path_factory):
    """BERT and RoBERTa papers, LLM-free graph with communities. Tests that change it work on a copy."""
    folder = tmp_path_factory.mktemp("explorer-pdfs")
    root = tmp_path_factory.mktemp("explorer-ws") / "ws"
    lib = open_library(fast_workspace(root))
    bert, roberta = ingest(lib, make_bert_pdf(folder), make_roberta_pdf(folder))
    return root, bert, roberta


@pytest.fixture
def ws_copy(base_ws, tmp_path):
    root, bert, roberta = base_ws
    copy = tmp_path / "ws"
    shutil.copytree(root, copy)
    return copy, bert, roberta


def key(name: str) -> str:
    return normalize_key(name)


# ------------------------------------------------------------------------------------------------- views

@pytest.mark.slow
def test_default_view_is_bounded_and_says_by_which_rule(base_ws):
    root, bert, roberta = base_ws
    lib = open_library(Workspace(root))
    index = load_index(lib)
    full = build_view(index, ViewFilters())
    entities = index.entity_count()
    assert len(full.nodes) == entities and not full.truncated and "all" in full.note
    assert not any(n.key.startswith(PAPER_PREFIX) for n in full.nodes)
    # Every edge joins two shown nodes and is a real RELATED edge of the store.
    shown = {n.key for n in full.nodes}
    assert full.edges and all(e.source in shown and e.target in shown for e in full.edges)
    stored = {e.pair for e in lib.graph.all_edges() if e.relation == RELATED}
    assert {(e.source, e.target) for e in full.edges} == stored

    small = build_view(index, ViewFilters(max_nodes=5))
    assert len(small.nodes) == 5 and small.truncated and small.matched == entities
    assert f"Showing 5 of {entities}" in small.note and "most connected" in small.note
    degrees = sorted((index.degree(k) for k in index.nodes if not k.startswith(PAPER_PREFIX)), reverse=True)
    assert [n.degree for n in small.nodes] == degrees[:5]
    assert key("BERT") in {n.key for n in small.nodes}  # the hub of both papers


def test_filters_by_type_paper_year_degree_weight_community_and_papers(base_ws):
    root, bert, roberta = base_ws
    lib = open_library(Workspace(root))
    index = load_index(lib)
    some_type = next(t for t in index.types if t != "concept")
    typed = build_view(index, ViewFilters(types=(some_type,)))
    assert typed.nodes and all(n.type == some_type for n in typed.nodes)

    only_bert = build_view(index, ViewFilters(doc_ids=(bert,)))
    assert only_bert.nodes and all(bert in n.doc_ids for n in only_bert.nodes)
    assert key("RoBERTa") not in {n.key for n in only_bert.nodes}

    assert index.years == [2018, 2020]
    year_2020 = build_view(index, ViewFilters(years=(2019, 2020)))
    assert {n.key for n in year_2020.nodes} == {n.key for n in build_view(index, ViewFilters(doc_ids=(roberta,))).nodes}

    hubs = build_view(index, ViewFilters(min_degree=3))
    assert hubs.nodes and all(index.degree(n.key) >= 3 for n in hubs.nodes)
    assert len(hubs.nodes) < index.entity_count()

    heavy = max(w for nbrs in index.related.values() for w in nbrs.values())
    weighty = build_view(index, ViewFilters(min_weight=heavy))
    assert weighty.edges and all(e.weight >= heavy for e in weighty.edges)

    assert index.communities, "communities are refreshed when the graph queue empties"
    community = index.communities[0]
    grouped = build_view(index, ViewFilters(communities=(community,)))
    assert grouped.nodes and all(n.community == community for n in grouped.nodes)

    with_papers = build_view(index, ViewFilters(include_papers=True))
    papers = {n.key for n in with_papers.nodes if n.is_paper}
    assert papers == {PAPER_PREFIX + bert, PAPER_PREFIX + roberta}
    assert any(e.target in papers for e in with_papers.edges)

    nothing = build_view(index, ViewFilters(types=("no-such-type",)))
    assert not nothing.nodes and nothing.note == "Nothing matches these filters."
    for bad in (ViewFilters(max_nodes=0), ViewFilters(depth=4), ViewFilters(years=(2020, 2018)),
                ViewFilters(color_by="size"), ViewFilters(min_weight=-1)):
        with pytest.raises(ViewError):
            build_view(index, bad)


def test_search_is_fuzzy_and_knows_aliases(ws_copy):
    root, _, _ = ws_copy
    lib = open_library(Workspace(root))
    index = load_index(lib)
    assert index.search("RoBERTa")[0][0] == key("RoBERTa")
    assert index.search("Roberat")[0][0] == key("RoBERTa")  # a typo
    assert key("MultiNLI") in [k for k, _ in index.search("multinli")]
    assert index.search("zzzz qqqq") == [] and index.search("  ") == []
    view = build_view(index, ViewFilters(search="robrta"))
    assert key("RoBERTa") in {n.key for n in view.nodes}
    # After a merge the merged name is an alias: searching it finds the entity it went into.
    merge_entities(lib, ["MultiNLI"], into="GLUE")
    index = load_index(lib)
    assert key("MultiNLI") not in index.nodes
    assert index.search("MultiNLI")[0][0] == key("GLUE")


def test_neighbourhood_depth_follows_relations(base_ws):
    root, _, _ = base_ws
    index = load_index(open_library(Workspace(root)))
    focus = key("RoBERTa")
    one = build_view(index, ViewFilters(focus=focus, depth=1))
    assert {n.key for n in one.nodes} == {focus} | set(index.related[focus])
    assert all((n.distance == 0) == (n.key == focus) for n in one.nodes) and "Neighbourhood of RoBERTa" in one.note
    two = build_view(index, ViewFilters(focus=focus, depth=2))
    assert {n.key for n in one.nodes} < {n.key for n in two.nodes}
    for node in two.nodes:
        if node.distance == 2:
            assert not set(index.related[node.key]) & {focus}
            assert set(index.related[node.key]) & {n.key for n in one.nodes}
    cut = build_view(index, ViewFilters(focus=focus, depth=2, max_nodes=3))
    assert [n.distance for n in cut.nodes][0] == 0 and cut.truncated and "nearest" in cut.note
    with pytest.raises(ViewError):
        build_view(index, ViewFilters(focus="not an entity"))


def test_view_state_round_trips_and_rejects_junk():
    values = {"search": "bert", "types": ["method"], "years": [2018, 2020], "max_nodes": 500, "depth": 2,
              "min_weight": 1, "neighbourhood": True, "unknown": "x"}
    decoded = decode_view_state(encode_view_state(values))
    assert decoded == {"search": "bert", "types": ["method"], "years": [2018, 2020], "max_nodes": 500, "depth": 2,
                       "min_weight": 1.0, "neighbourhood": True}
    assert decode_view_state("not json") == {} and decode_view_state("[1, 2]") == {}
    assert decode_view_state(json.dumps({"max_nodes": "300", "depth": True, "types": [1, None, {"a": 1}]})) == \
        {"types": [1]}


# ------------------------------------------------------------------------------------------------- paths

def test_shortest_paths_come_with_supporting_passages(base_ws):
    root, bert, roberta = base_ws
    lib = open_library(Workspace(root))
    index = load_index(lib)
    graph = nx.Graph((a, b) for a, nbrs in index.related.items() for b in nbrs)
    source = key("RoBERTa")
    target = next(k for k, d in sorted(nx.single_source_shortest_path_length(graph, source).items()) if d == 2)
    paths = explain_connection(lib, index, source, target)
    assert 1 <= len(paths) <= 3
    assert paths[0].length == 2 == nx.shortest_path_length(graph, source, target)
    assert [p.length for p in paths] == sorted(p.length for p in paths)
    assert len({tuple(p.keys) for p in paths}) == len(paths)
    titles = {BERT_TITLE, ROBERTA_TITLE}
    for path in paths:
        assert path.keys[0] == source and path.keys[-1] == target
        for hop, (a, b) in zip(path.hops, zip(path.keys, path.keys[1:])):
            assert (hop.source, hop.target) == (a, b) and graph.has_edge(a, b)
            assert hop.passage is not None and hop.passage.paper in titles and hop.passage.page == 0
            text = hop.passage.text.casefold()
            assert hop.source_name.casefold() in text or hop.target_name.casefold() in text
    assert shortest_paths(index, source, source) == [] and shortest_paths(index, source, "nowhere") == []


def test_supporting_passage_picks_the_sentence_naming_both_ends():
    text = ("BERT is a model. It was trained for a long time on many books and more text than before. "
            "RoBERTa removes the next sentence prediction objective of BERT. Dynamic masking is used.")
    assert supporting_passage(text, ["RoBERTa", "BERT"]).startswith("RoBERTa removes the next sentence")
    assert supporting_passage("", ["x"]) == ""


def test_panels_show_passages_papers_and_neighbours(base_ws):
    root, bert, roberta = base_ws
    lib = open_library(Workspace(root))
    index = load_index(lib)
    panel = entity_panel(lib, index, key("BERT"))
    assert {d for d, _ in panel.papers} == {bert, roberta}
    assert {t for _, t in panel.papers} == {BERT_TITLE, ROBERTA_TITLE}
    assert panel.passages and all("BERT" in p.text and p.page == 0 for p in panel.passages)
    assert {n.key for n in panel.neighbours if n.relation == RELATED} == set(index.related[key("BERT")])
    other = next(iter(index.related[key("BERT")]))
    edge = edge_panel(lib, index, key("BERT"), other)
    assert edge.edge.relation == RELATED and edge.passages and edge.edge.description
    assert entity_panel(lib, index, "nothing") is None and edge_panel(lib, index, "a", "b") is None


# ------------------------------------------------------------------------------------------------- edits

def _vector_names(lib) -> dict[str, str]:
    """Entity key → name, as the entity vectors' metadata has it."""
    return {m.metadata["key"]: m.metadata["name"] for m, _ in lib.entity_vectors.fetch(lib.entity_vectors.all_ids())}


@pytest.mark.slow
def test_edits_persist_update_vectors_and_survive_new_papers_and_rebuilds(ws_copy, tmp_path):
    root, bert, roberta = ws_copy
    lib = open_library(Workspace(root))
    glue, squad, roberta_key = key("GLUE"), key("SQuAD"), key("RoBERTa")
    bert_key = key("BERT")
    assert lib.graph.get_edge(*sorted((bert_key, glue))) is not None

    edits.rename_entity(lib, glue, "GLUE benchmark suite")
    edits.retype_entity(lib, roberta_key, "Model")
    edits.delete_entity(lib, squad)
    edits.delete_relation(lib, glue, bert_key)

    def check(lib) -> None:
        assert lib.graph.get_node(glue).name == "GLUE benchmark suite"
        assert lib.graph.get_node(roberta_key).type == "model"
        assert lib.graph.get_node(squad) is None
        assert not any(squad in e.pair for e in lib.graph.all_edges())
        assert lib.graph.get_edge(*sorted((bert_key, glue))) is None
        names = _vector_names(lib)
        assert names[glue] == "GLUE benchmark suite" and squad not in names
        assert lib.entity_vectors.get_documents([entity_vector_id(glue)])[entity_vector_id(glue)].startswith(
            "GLUE benchmark suite (")
        assert not lib.relation_vectors.get_documents([relation_vector_id(*sorted((bert_key, glue)))])
        index = load_index(lib)
        assert squad not in index.nodes and glue not in index.related.get(bert_key, {})
        assert index.nodes[glue].name == "GLUE benchmark suite"

    check(lib)
    # A new paper that mentions SQuAD and states BERT — GLUE again: the edits still hold.
    third = pdfs.make_paper_pdf(tmp_path / "glue.pdf", title=GLUE_TITLE, sections=GLUE_SECTIONS, pages=1,
                                with_table=False, with_figure=False, authors="Ada Lovelace")
    (third_id,) = ingest(lib, third)
    check(lib)
    assert third_id in lib.graph.get_node(glue).doc_ids  # the renamed entity still grows with new papers
    # A full rebuild from the stored extractions applies them too.
    clear_graph(lib, keep_extractions=True)
    process_graph_queue(lib)
    check(lib)
    # Deleting a paper and adding it back changes nothing either.
    delete_document(lib, third_id)
    ingest(lib, third)
    check(lib)

    # The edits are listed and each can be undone: the papers' version comes back.
    made = {r.override.field + ":" + r.override.a: r for r in edits.list_edits(lib)}
    assert len(made) == 4
    assert edits.undo_edit(lib, made["deleted:" + squad].override)
    assert lib.graph.get_node(squad) is not None and squad in _vector_names(lib)
    assert any(e.relation == RELATED for e in lib.graph.node_edges(squad))
    edits.undo_edit(lib, made["name:" + glue].override)
    assert lib.graph.get_node(glue).name == "GLUE"
    edits.undo_edit(lib, made[f"deleted:{min(bert_key, glue)}"].override)
    assert lib.graph.get_edge(*sorted((bert_key, glue))) is not None
    assert relation_vector_id(*sorted((bert_key, glue))) in lib.relation_vectors.get_documents(
        [relation_vector_id(*sorted((bert_key, glue)))])


def test_bad_edits_are_refused_and_change_nothing(ws_copy):
    root, bert, _ = ws_copy
    lib = open_library(Workspace(root))
    before = (sorted(n.key for n in lib.graph.all_nodes()), lib.graph.counts())
    bad = [lambda: edits.rename_entity(lib, key("GLUE"), "   "),
           lambda: edits.rename_entity(lib, key("GLUE"), "RoBERTa"),  # another entity's name: merge instead
           lambda: edits.rename_entity(lib, key("GLUE"), "!!!"),
           lambda: edits.rename_entity(lib, PAPER_PREFIX + bert, "A title"),
           lambda: edits.retype_entity(lib, key("GLUE"), "paper"),
           lambda: edits.retype_entity(lib, "no such entity", "method"),
           lambda: edits.delete_entity(lib, PAPER_PREFIX + bert),
           lambda: edits.delete_relation(lib, key("GLUE"), PAPER_PREFIX + bert),
           lambda: edits.delete_relation(lib, key("GLUE"), "no such entity")]
    for edit in bad:
        with pytest.raises(edits.EditError):
            edit()
    assert (sorted(n.key for n in lib.graph.all_nodes()), lib.graph.counts()) == before
    assert edits.list_edits(lib) == [] and not lib.graph_sources.dirty()[0]


@pytest.mark.slow
def test_a_renamed_entity_collects_later_mentions_of_its_new_name(ws_copy, tmp_path):
    root, _, _ = ws_copy
    lib = open_library(Workspace(root))
    target = key("XLNet")  # only in the RoBERTa paper; ELECTRA is in no paper yet
    assert lib.graph.get_node(target) is not None and lib.graph.get_node(key("ELECTRA")) is None
    edits.rename_entity(lib, target, "ELECTRA")
    third = pdfs.make_paper_pdf(tmp_path / "glue.pdf", title=GLUE_TITLE, sections=GLUE_SECTIONS, pages=1,
                                with_table=False, with_figure=False, authors="Ada Lovelace")
    (third_id,) = ingest(lib, third)
    assert third_id in lib.graph.get_node(target).doc_ids and lib.graph.get_node(key("ELECTRA")) is None
    assert lib.graph.get_node(target).name == "ELECTRA"


# ------------------------------------------------------------------------------------------------- exports

def test_cypher_script_quotes_every_string(base_ws):
    root, _, _ = base_ws
    lib = open_library(Workspace(root))
    nodes, edges = list(lib.graph.all_nodes()), list(lib.graph.all_edges())
    hostile = nodes[0].__class__(key="x", name='O\'Neil "quoted" \\ back `tick`: }) DETACH DELETE n //',
                                 type="method", description="line\nbreak <script>alert(1)</script>")
    script = cypher_script(nodes + [hostile], edges)
    statements = [s for s in script.splitlines() if s and not s.startswith("//")]
    assert statements[0].startswith("CREATE CONSTRAINT entity_key") and statements[-1].endswith(";")
    assert sum(s.startswith("UNWIND") for s in statements) >= 3
    assert any("MERGE (a)-[r:RELATED]->(b)" in s for s in statements)
    assert any("MERGE (a)-[r:MENTIONED_IN]->(b)" in s for s in statements)

    def rows(statement: str) -> list:
        """Read the UNWIND list as Cypher would: a string ends at an unescaped double quote; outside strings,
        `key` map keys become JSON keys. A name that broke out of its string would break this reading."""
        literal = statement[len("UNWIND "):statement.rindex(" AS row ")]
        out, in_string, escaped = [], False, False
        for ch in literal:
            if in_string:
                in_string = escaped or ch != '"'
                escaped = not escaped and ch == "\\"
            elif ch == '"':
                in_string = True
            elif ch == "`":
                ch = '"'
            out.append(ch)
        return json.loads("".join(out))

    loaded = [r for s in statements if "MERGE (n:Entity" in s for r in rows(s)]
    assert len(loaded) == sum(not n.is_paper for n in nodes) + 1
    assert next(r for r in loaded if r["key"] == "x")["name"] == hostile.name
    assert next(r for r in loaded if r["key"] == "x")["description"] == hostile.description
    links = [r for s in statements if "MERGE (a)-[r:" in s for r in rows(s)]
    assert len(links) == len(edges)


def test_exports_json_node_link_and_standalone_html(base_ws, tmp_path):
    root, _, _ = base_ws
    lib = open_library(Workspace(root))
    (out,) = export_graph(lib.graph, "json", tmp_path / "g.json")
    data = json.loads(out.read_text())
    graph = nx.node_link_graph(data, edges="links")
    assert graph.number_of_nodes() == lib.graph.counts()[0] and graph.number_of_edges() == lib.graph.counts()[1]
    (cypher,) = export_graph(lib.graph, "cypher", tmp_path / "g.cypher")
    assert cypher.read_text().count("UNWIND") >= 3
    (page,) = export_view_html(lib, tmp_path / "view.html")
    text = page.read_text()
    assert "new vis.Network" in text and "RoBERTa" in text and '"clickable": false' in text
    assert not re.search(r"<(?:script|link)\b[^>]*(?:src|href)=\"https?://", text)  # opens offline
    with pytest.raises(ValueError):
        export_graph(lib.graph, "gexf", tmp_path / "g.gexf")


# ------------------------------------------------------------------------------------------------- rendering

@pytest.mark.slow
def test_rendering_keeps_untrusted_text_inert(ws_copy):
    root, _, _ = ws_copy
    lib = open_library(Workspace(root))
    payload = "<script>alert(1)</script>"
    edits.rename_entity(lib, key("GLUE"), payload)
    edits.rename_entity(lib, key("RoBERTa"), "<img src=x onerror=alert(2)>")
    index = load_index(lib)
    view = build_view(index, ViewFilters(include_papers=True))
    details = {key("BERT"): "</script><script>alert(3)</script> & <b>bold</b>"}
    page = render_html(view, RenderOptions(type_order=index.types, title="<i>title</i>"), details)
    assert payload not in page and "<img src=x" not in page and "alert(3)</script>" not in page
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in page  # the name is there, as inert JSON
    assert "&lt;i&gt;title&lt;/i&gt;" in page
    assert "el.textContent = text" in page and ".innerHTML" not in page.split("drawGraph();")[-1]
    assert not re.search(r"<(?:script|link)\b[^>]*(?:src|href)=\"https?://", page)
    # The static layout for large views: positions for every node, physics off.
    big = build_view(index, ViewFilters(), config=lib.settings.explorer.__class__(static_layout_above=5))
    assert big.static_layout and all(n.x is not None and n.y is not None for n in big.nodes)
    assert '"physics": {"enabled": false' in render_html(big)  # not the label-scaling option's "enabled"


def test_index_is_reloaded_when_the_graph_changes(ws_copy):
    root, _, _ = ws_copy
    lib = open_library(Workspace(root))
    first = load_index(lib)
    assert load_index(lib) is first
    edits.delete_entity(lib, key("SQuAD"))
    second = load_index(lib)
    assert second is not first and key("SQuAD") not in second.nodes
    assert isinstance(second, GraphIndex)


@pytest.mark.slow
def test_cli_exports_cypher_and_the_html_view(base_ws, tmp_path):
    root, _, _ = base_ws
    env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(root))
    for fmt in ("cypher", "html"):
        out = subprocess.run([sys.executable, "-m", "core", "graph", "export", "--format", fmt, "--out",
                              str(tmp_path / f"g.{fmt}")], cwd=REPO, env=env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
        assert f"wrote {tmp_path / f'g.{fmt}'}" in out.stdout
    assert "MERGE (n:Entity" in (tmp_path / "g.cypher").read_text()
    assert "new vis.Network" in (tmp_path / "g.html").read_text()


def test_explorer_settings_are_validated():
    settings = Settings()
    validate(settings)
    settings.explorer.max_nodes = settings.explorer.max_nodes_limit + 1
    with pytest.raises(SettingsError, match="explorer"):
        validate(settings)
    settings = Settings()
    settings.explorer.stabilization_iterations = -1
    with pytest.raises(SettingsError, match="explorer"):
        validate(settings)
