"""The ppr mode (HippoRAG 2's personalised PageRank) over a real workspace built here: two generated papers whose
two-hop question needs a passage that shares no word with it, linked to the first hop by a person both name."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from core.cli import main as cli_main
from core.graph.mention_index import is_phrase, mention_index
from core.graph.names import names_related
from core.library import open_library
from core.pipeline.documents import add_pdf
from core.query import ppr
from core.query.engine import ask
from core.query.records import QueryParams
from core.query.routes import available_modes, check_available, default_modes, unavailable_reason
from core.query.sources import Probe, scope_of
from core.schema.modes import Mode
from core.settings.workspace import Workspace
from tests import graph_papers, pdfs
from tests.query.query_helpers import index_and_graph

# First hop: the engine's passage names its inventor. Second hop: the inventor's schooling, in another paper, in
# words the question never uses; the person both name is the bridge.
QUESTION = "Where was the inventor of the Zorbatron engine educated?"
SECOND_HOP = "Miriam Castellane studied chemistry at Uppsala University"

ENGINE_SECTIONS: list[pdfs.Section] = [
    ("1 Origins", ["The Zorbatron engine was invented by Miriam Castellane in 1987 in a workshop near Gothenburg."]),
    ("2 Design", ["The Zorbatron engine compresses steam in three stages and drives a single brass flywheel."]),
    ("3 Legacy", ["Every Zorbatron engine built after 1990 copies the valve layout of the first Zorbatron engine."]),
]
BIOGRAPHY_SECTIONS: list[pdfs.Section] = [
    ("1 Early Life", [f"{SECOND_HOP} under Professor Anders Lindqvist, graduating with honours."]),
    ("2 Later Years", ["Anders Lindqvist founded a laboratory for organic synthesis in Stockholm in 1979."]),
]
TOP = 3  # fewer chunks than the papers have: a mode must rank, not return everything


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("ppr-ws")
    ws = graph_papers.fast_workspace(root / "ws")
    lib = open_library(ws)
    folder = root / "pdfs"
    for name, title, sections in (("engine.pdf", "The Zorbatron Steam Engine", ENGINE_SECTIONS),
                                  ("lives.pdf", "Lives of Swedish Chemists", BIOGRAPHY_SECTIONS)):
        pdf = pdfs.make_paper_pdf(folder / name, title=title, sections=sections, pages=1, with_table=False,
                                  with_figure=False, authors="A. Historian")
        add_pdf(lib, pdf.name, pdf.read_bytes())
    index_and_graph(lib)
    return ws


@pytest.fixture
def lib(workspace):
    return open_library(Workspace(workspace.root))


def _texts(result) -> list[str]:
    return [c.hit.chunk.text for c in result.retrieval.chunks]


def test_the_fixture_is_two_hop_the_second_passage_shares_no_word_and_a_person_bridges(lib):
    question_words = {w.strip("?").lower() for w in QUESTION.split()} - {"the", "of", "was"}
    assert not question_words & {w.lower() for w in SECOND_HOP.split()}
    bridge = lib.graph.get_node("miriam castellane")
    assert bridge is not None, sorted(n.key for n in lib.graph.all_nodes())
    chunks = lib.chunks.get_many(bridge.source_chunks)
    assert {c.doc_id for c in chunks.values()} == {d.id for d in lib.documents.list()}


def test_ppr_finds_the_second_hop_that_naive_misses(lib):
    # The mode's own order (no reranker: it ranks by the question's words, which the second hop lacks). Six of
    # the nine chunks: in so small a graph the first-hop passages, seeded directly, still outrank the bridge's.
    top = 6
    naive = ask(lib, QUESTION, QueryParams(mode="naive", chunk_top_k=top, rerank=False, context_only=True))
    assert not any(SECOND_HOP in t for t in _texts(naive)), _texts(naive)
    ppr = ask(lib, QUESTION, QueryParams(mode="ppr", chunk_top_k=top, rerank=False, context_only=True))
    texts = _texts(ppr)
    assert any(SECOND_HOP in t for t in texts), texts
    assert any("invented by Miriam Castellane" in t for t in texts), texts  # and the first hop with it
    assert "ppr_s" in ppr.retrieval.timings and all("ppr" in c.via for c in ppr.retrieval.chunks)
    assert "miriam castellane" in [e.key for e in ppr.retrieval.entities]


def test_ppr_answers_llm_free_with_citations(lib):
    result = ask(lib, QUESTION, QueryParams(mode="ppr", chunk_top_k=TOP))
    assert result.answer.text and result.answer.sentences
    for sentence in result.answer.sentences:
        assert sentence.citations and all(result.context.source(n) for n in sentence.citations)
    for source in result.context.sources:
        chunk = lib.chunks.get_many([source.chunk_id])[source.chunk_id]
        assert chunk.doc_id == source.doc_id and source.page in chunk.pages


def test_cli_ask_mode_ppr(workspace, monkeypatch, capsys):
    monkeypatch.setenv("PAPERGRAPH_WORKSPACE", str(workspace.root))
    assert cli_main(["ask", QUESTION, "--mode", "ppr", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mode"] == "ppr" and data["citations"]


def test_ppr_is_offered_only_once_the_graph_has_entities(lib, tmp_path):
    assert Mode.PPR in available_modes(lib) and not unavailable_reason(lib, "ppr")
    assert Mode.PPR not in default_modes(available_modes(lib))  # opt-in side by side, like community
    empty = open_library(graph_papers.fast_workspace(tmp_path / "empty"))
    assert Mode.PPR not in available_modes(empty)
    assert "graph has no entities" in unavailable_reason(empty, "ppr")
    with pytest.raises(ValueError, match="graph has no entities"):
        check_available(empty, ["ppr"])


# ---------------------------------------------------------------------------------------------- local's walk
def _local(lib, seed_passages: int, hop_neighbours: int) -> list[str]:
    saved = lib.settings.query.seed_passages, lib.settings.query.hop_neighbours
    lib.settings.query.seed_passages, lib.settings.query.hop_neighbours = seed_passages, hop_neighbours
    try:
        result = ask(lib, QUESTION, QueryParams(mode="local", chunk_top_k=6, rerank=False, context_only=True))
    finally:
        lib.settings.query.seed_passages, lib.settings.query.hop_neighbours = saved
    return _texts(result)


def test_local_reaches_the_second_hop_through_the_bridge_entity(lib):
    # Seeded by the question's keywords and the dense passages' entities, one hop along the strongest relations
    # reaches the person's other passages.
    assert any(SECOND_HOP in t for t in _local(lib, seed_passages=5, hop_neighbours=10))
    # Seeded by the first-hop passage alone, without the hop: the bridge itself is a seed (the passage names her).
    assert any(SECOND_HOP in t for t in _local(lib, seed_passages=5, hop_neighbours=0))


def test_a_compositional_question_is_answered_from_two_passages_through_the_bridge(lib):
    result = ask(lib, QUESTION, QueryParams(mode="ppr", chunk_top_k=6))
    answer = result.answer
    assert answer.bridge == "Miriam Castellane", answer
    # The final hop first (it holds the answer), then the bridge it was reached through.
    assert SECOND_HOP in answer.sentences[0].text and "Uppsala University" in answer.short_answer
    assert answer.sentences[1].text.startswith("Via Miriam Castellane:")
    assert "invented by Miriam Castellane" in answer.sentences[1].text
    cited = [result.context.source(s.citations[0]) for s in answer.sentences[:2]]
    assert len({s.doc_id for s in cited}) == 2  # one citation in each paper


# ---------------------------------------------------------------------------------------------- global's walk
def _relation_passages(lib, question: str) -> list[str]:
    result = ask(lib, question, QueryParams(mode="global", chunk_top_k=10, rerank=False, context_only=True))
    return [c.hit.chunk.text for c in result.retrieval.chunks if "relation" in c.via]


def test_global_takes_passages_only_from_relations_that_touch_the_questions_entities(lib):
    # No relation touches the flywheel (the graph's relations are the biography's): every relation matches the
    # question's wording only, so none proposes a passage.
    assert _relation_passages(lib, "How heavy is the brass flywheel?") == []
    # It names both ends of a relation: that relation's passage is proposed.
    texts = _relation_passages(lib, "Did Miriam Castellane study at Uppsala University?")
    assert any(SECOND_HOP in t for t in texts), texts


# ---------------------------------------------------------------------------------------------- near-synonym edges
def test_near_synonym_edges_link_only_close_entities_whose_names_could_name_one_thing(lib):
    index = mention_index(lib)
    keys = [k for k in index.passages_of if not is_phrase(k)]
    probe = Probe(lib, QUESTION, lib.embedder().embed_query(QUESTION), None, lib.embedder().embed_query,
                  QueryParams(mode="ppr"), scope_of(lib, QueryParams(mode="ppr")))
    off = replace(ppr.DEFAULT, synonym_similarity=0.0)
    assert ppr.synonym_pairs(probe, keys, index, off) == []  # the default: no edges, no vector search
    loose = ppr.synonym_pairs(probe, keys, index, replace(off, synonym_similarity=0.3, synonym_names=False))
    assert loose and all(s >= 0.3 and a != b for a, b, s in loose)
    named = ppr.synonym_pairs(probe, keys, index, replace(off, synonym_similarity=0.3))
    assert set(named) < set(loose)  # one sentence describes both: close vectors, unrelated names
    assert all(names_related(a, b) for a, b, _ in named)
    assert ppr.params_of(replace(lib.settings.query, ppr_synonym_similarity=0.8)).synonym_similarity == 0.8
