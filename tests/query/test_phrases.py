"""Phrase nodes (HippoRAG's): the retrieval walks reach a passage through a name the display graph does not keep.

A real workspace built here from short encyclopaedia paragraphs (HotpotQA's, Wikipedia text) through the product
path: text documents, the ingest queue, the LLM-free graph stage. The two-hop question names a consultant; his
paragraph names Rudy Giuliani once among his clients; the paragraph that answers ("mayor of New York City") names
Giuliani only in its title line, which the entity extractor never reads as prose. The bridge is a phrase.
"""
from __future__ import annotations

from dataclasses import replace

import pytest

from core.graph.extract.name_spans import name_spans
from core.graph.mention_index import is_phrase, mention_index, phrase_key
from core.library import open_library
from core.pipeline.documents import add_document, delete_document
from core.pipeline.graph.stage import process_graph_queue
from core.pipeline.ingest import process_queue
from core.query.engine import ask
from core.query.keywords import spacy_keywords
from core.query.ppr import params_of, personalised_ranking
from core.query.records import QueryParams
from core.query.sources import Probe, scope_of
from core.query.walks import keyword_entities
from core.schema.records import DocStatus
from core.settings.workspace import Workspace
from tests.graph_papers import fast_workspace

QUESTION = "Scott Howell is a consultant who has worked with the mayor of what city?"
ANSWER = "former mayor of New York City"
DOCS = {
    "Scott Howell (political consultant)": "Herbert Weston Scott Howell III is an American conservative political "
    "consultant, whose recent clients include Meg Whitman and Rudy Giuliani.",
    "Rudy Giuliani": "Rudolph William Louis Giuliani (born May 28, 1944) is an American lawyer, businessman, public "
    f"speaker, {ANSWER}, and an informal adviser on cybersecurity to the White House.",
    "Scott Howell (footballer)": "Scott Howell (born 23 January 1984) is a Scottish footballer who plays as a "
    "midfielder for Albion Rovers. He previously played for Clyde, Stenhousemuir and East Stirlingshire.",
    "Howell School": "Howell School is a historic school building in Howell, Michigan. It was built in 1914 and "
    "served the city as its high school until 1956. It was listed on the National Register of Historic Places.",
    "Jun Choi": "Jun Choi is an American politician who served as mayor of Edison, New Jersey, from 2006 to 2010. "
    "He was the first Korean American mayor of a large city in New Jersey and worked as a consultant before.",
    "David Morgan (psychoanalyst)": "David Morgan is a consultant psychotherapist and psychoanalyst who has worked "
    "with political leaders and city councils on the psychology of fundamentalism and extremism.",
    "Pete Ashdown": "Pete Ashdown is an American businessman and the founder of XMission, the oldest internet "
    "service provider in Utah, who ran for the United States Senate twice, for a city consultant role later.",
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    ws = fast_workspace(tmp_path_factory.mktemp("phrases") / "ws")
    lib = open_library(ws)
    for title, text in DOCS.items():
        add_document(lib, f"{title}.txt", f"{title}\n\n{text}\n".encode())
    assert all(d.status == DocStatus.READY for d in process_queue(lib))
    assert all(d.graph_status == "done" for d in process_graph_queue(lib, communities=False))
    return ws


@pytest.fixture
def lib(workspace):
    return open_library(Workspace(workspace.root))


def _chunk_of(lib, title: str) -> str:
    (doc,) = [d for d in lib.documents.list() if d.display_title == title]
    return lib.chunks.by_doc(doc.id)[0].id


def _texts(result) -> list[str]:
    return [c.hit.chunk.text for c in result.retrieval.chunks]


def test_name_spans_find_names_a_title_line_or_a_cut_name_gives():
    text = ("Rudy Giuliani\n\nAct of War: Direct Action features a story by Dale Brown, a retired captain of the US "
            "Air Force. The Heinkel HD 23 was built in Germany. In Akkadian mythology, Jon L. Luther wrote it.")
    assert name_spans(text) == ["Rudy Giuliani", "Act of War", "Direct Action", "Dale Brown", "US Air Force",
                                "Heinkel HD 23", "Jon L. Luther"]


def test_the_bridge_is_a_stored_phrase_of_both_passages_and_not_a_node_of_the_graph_page(lib):
    first, second = _chunk_of(lib, "Scott Howell (political consultant)"), _chunk_of(lib, "Rudy Giuliani")
    phrases = lib.graph_sources.chunk_phrases()
    assert "rudy giuliani" in phrases[first] and "rudy giuliani" in phrases[second], phrases[second]
    giuliani = lib.graph.get_node("rudy giuliani")  # the graph may keep the name as an entity of the first only
    assert giuliani is None or second not in giuliani.source_chunks
    shown = {n.key for n in lib.graph.all_nodes()}
    assert not shown & {"white house", "cybersecurity"} - set(), "retrieval phrases reached the display graph"
    index = mention_index(lib)
    bridge = "rudy giuliani" if "rudy giuliani" in index.passages_of else phrase_key("Rudy Giuliani")
    assert set(index.passages_of[bridge]) >= {first, second}


def test_a_keyword_finds_the_phrase_node_of_a_name_the_graph_does_not_keep(lib):
    index = mention_index(lib)
    params = QueryParams(mode="local")
    probe = Probe(lib, QUESTION, lib.embedder().embed_query(QUESTION), None, lib.embedder().embed_query, params,
                  scope_of(lib, params))
    seeds = keyword_entities(probe, index, ["Meg Whitman", "Whitman"])
    assert phrase_key("Meg Whitman") in seeds and not lib.graph.get_node("meg whitman")
    assert phrase_key("Whitman") not in seeds  # a word of a longer keyword names no phrase of its own
    assert all(is_phrase(k) or lib.graph.get_node(k) for k in seeds)


def _walk(lib) -> dict[str, float]:
    """ppr's PageRank mass per passage, walked from the question's entities and phrases alone: in seven paragraphs
    every one is among the 20 dense passages ppr also seeds, which would only rank them by the question again."""
    params = QueryParams(mode="ppr")
    probe = Probe(lib, QUESTION, lib.embedder().embed_query(QUESTION), spacy_keywords(QUESTION),
                  lib.embedder().embed_query, params, scope_of(lib, params))
    passages, _, _ = personalised_ranking(probe, replace(params_of(lib.settings.query), passage_weight=0.0))
    return dict(passages)


def test_ppr_reaches_the_second_hop_through_the_shared_name_and_not_without_phrases(lib):
    second = _chunk_of(lib, "Rudy Giuliani")
    naive = ask(lib, QUESTION, QueryParams(mode="naive", chunk_top_k=3, rerank=False, context_only=True),
                save=False)
    assert not any(ANSWER in t for t in _texts(naive)), _texts(naive)
    assert _walk(lib).get(second, 0.0) > 0.0
    lib.settings.query.phrase_nodes = False
    try:
        assert _walk(lib).get(second, 0.0) == 0.0  # no entity links the two paragraphs
    finally:
        lib.settings.query.phrase_nodes = True
    result = ask(lib, QUESTION, QueryParams(mode="ppr", chunk_top_k=3, context_only=True), save=False)
    assert result.retrieval.entities and not any(is_phrase(e.key) for e in result.retrieval.entities)


def test_deleting_a_paper_takes_its_phrases_out_of_the_walks(tmp_path):
    lib = open_library(fast_workspace(tmp_path / "ws"))
    for title in ("Scott Howell (political consultant)", "Rudy Giuliani"):
        add_document(lib, f"{title}.txt", f"{title}\n\n{DOCS[title]}\n".encode())
    process_queue(lib)
    process_graph_queue(lib, communities=False)
    gone = _chunk_of(lib, "Rudy Giuliani")
    assert gone in mention_index(lib).entities_of
    delete_document(lib, lib.chunks.get_many([gone])[gone].doc_id)
    assert gone not in lib.graph_sources.chunk_phrases()
    assert gone not in mention_index(lib).entities_of


def test_retry_with_reextract_gives_an_older_workspace_its_phrases(tmp_path, monkeypatch):
    from core.cli import main
    from core.pipeline.graph.stage import retry_graph

    lib = open_library(fast_workspace(tmp_path / "ws"))
    for title in ("Scott Howell (political consultant)", "Rudy Giuliani"):
        add_document(lib, f"{title}.txt", f"{title}\n\n{DOCS[title]}\n".encode())
    process_queue(lib)
    process_graph_queue(lib, communities=False)
    # A workspace built before the phrase layer: its stored extractions and its graph hold no phrases.
    with lib.db.connect() as conn:
        conn.execute("DELETE FROM graph_phrases")
        rows = conn.execute("SELECT chunk_id, payload FROM graph_extractions").fetchall()
        for chunk_id, payload in rows:
            conn.execute("UPDATE graph_extractions SET payload = ? WHERE chunk_id = ?",
                         (payload.replace('"phrases"', '"phrases_of_no_version"'), chunk_id))
    assert not lib.graph_sources.chunk_phrases()
    retry_graph(lib)  # a plain retry reuses the stored extractions: still none
    process_graph_queue(lib, communities=False)
    assert not lib.graph_sources.chunk_phrases()

    monkeypatch.setenv("PAPERGRAPH_WORKSPACE", str(lib.workspace.root))
    assert main(["graph", "retry", "--reextract", "-q"]) == 0
    phrases = open_library(Workspace(lib.workspace.root)).graph_sources.chunk_phrases()
    assert _chunk_of(lib, "Rudy Giuliani") in phrases and any(phrases.values())
