"""Graph explorer views over a real workspace (tests/presentation/conftest.py): the default view and its bound,
filters, fuzzy search with aliases, neighbourhoods, the view state in the URL, the index reloaded when the graph
changes, and the explorer settings."""
from __future__ import annotations

import json

import pytest

from core.library import open_library
from core.pipeline.graph import edits
from core.pipeline.graph.duplicates import merge_entities
from core.presentation.graph.explorer import (
    ViewError,
    ViewFilters,
    build_view,
    decode_view_state,
    encode_view_state,
)
from core.presentation.graph.graph_index import GraphIndex, load_index
from core.schema.graph import PAPER_PREFIX, RELATED
from core.settings.config import Settings, SettingsError, validate
from core.settings.workspace import Workspace
from tests.presentation.explorer_helpers import key


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


def test_index_is_reloaded_when_the_graph_changes(ws_copy):
    root, _, _ = ws_copy
    lib = open_library(Workspace(root))
    first = load_index(lib)
    assert load_index(lib) is first
    edits.delete_entity(lib, key("SQuAD"))
    second = load_index(lib)
    assert second is not first and key("SQuAD") not in second.nodes
    assert isinstance(second, GraphIndex)


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
