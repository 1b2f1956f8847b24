"""How the graph explorer explains a connection, over a real workspace (tests/presentation/conftest.py): shortest
paths with a supporting passage per hop, and the entity and edge panels with their passages, papers and
neighbours."""
from __future__ import annotations

import networkx as nx

from core.library import open_library
from core.presentation.graph.graph_index import load_index
from core.presentation.graph.panels import edge_panel, entity_panel, neighbourhood_papers
from core.presentation.graph.paths import explain_connection, shortest_paths, supporting_passage
from core.schema.graph import RELATED
from core.settings.workspace import Workspace
from tests.graph_papers import BERT_TITLE, ROBERTA_TITLE
from tests.presentation.explorer_helpers import key


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


def test_the_papers_around_an_entity_are_its_own_then_its_neighbours(base_ws):
    root, bert, roberta = base_ws
    lib = open_library(Workspace(root))
    index = load_index(lib)
    panel = entity_panel(lib, index, key("RoBERTa"))
    around = neighbourhood_papers(index, panel)
    assert around[:len(panel.papers)] == [d for d, _ in panel.papers] and set(around) == {bert, roberta}
    paper = entity_panel(lib, index, f"paper:{bert}")
    assert neighbourhood_papers(index, paper)[0] == bert
