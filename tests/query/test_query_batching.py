"""What one question costs in embeddings and store calls (core.query.engine, sources, walks, retrieve): its texts
embedded in few encoder batches of similar length, only those its mode reads, each once; the keyword entity search
run once however many of a mode's sources seed from it (hybrid: local and global; mix: local and ppr); the
community mode's candidates scored on window vectors alone, in resolve_hits' order. A real workspace of short text
documents through the product path, with the real model, Chroma and SQLite, counted where it matters."""
from __future__ import annotations

import numpy as np
import pytest

from core.graph.mention_index import MAX_PHRASE_PASSAGES, PHRASE, mention_index
from core.library import open_library
from core.models.embedding import cheapest_batches
from core.query.engine import Embeddings
from core.query.keywords import question_keywords
from core.query.records import QueryParams
from core.query.rerank import FusionReranker
from core.query.retrieve import closest_chunks, resolve_hits
from core.query.routes import route_of
from core.query.sources import keyword_text, scope_of
from core.schema.modes import Mode
from tests import graph_papers
from tests.query.query_helpers import add_texts, index_and_graph

DOCS = [
    ("Zorbatron engine", "The Zorbatron engine was invented by Miriam Castellane in 1987 in a workshop near "
                         "Gothenburg. The Zorbatron engine compresses steam in three stages."),
    ("Miriam Castellane", "Miriam Castellane studied chemistry at Uppsala University under Anders Lindqvist and "
                          "later built steam engines in Gothenburg."),
    ("Uppsala University", "Uppsala University is the oldest university in Sweden. Anders Lindqvist taught "
                           "organic chemistry at Uppsala University for thirty years."),
    ("Gothenburg", "Gothenburg is a port city in Sweden with shipyards, workshops and a university of its own."),
]
QUESTION = "Where did the inventor of the Zorbatron engine study chemistry?"


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    lib = open_library(graph_papers.fast_workspace(tmp_path_factory.mktemp("batching") / "ws"))
    add_texts(lib, DOCS)
    index_and_graph(lib)
    return lib


def _counted(monkeypatch, obj, name: str) -> list:
    """Calls of obj.name, recorded (arguments), the real method still run."""
    calls, real = [], getattr(obj, name)

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(obj, name, counting)
    return calls


def test_cheapest_batches_batch_texts_of_similar_length_each_once():
    texts = ["question", "phrase", "a", "b", "c", "d", "e"]
    lengths = [33, 32, 8, 6, 5, 4, 4]
    # One batch pads all seven to 33 (CALL_TOKENS + 231); the question's two long texts apart from the five short
    # ones cost (CALL_TOKENS + 66) + (CALL_TOKENS + 40); a third batch costs more than the padding it saves.
    assert cheapest_batches(texts, lengths) == [["question", "phrase"], ["a", "b", "c", "d", "e"]]
    assert cheapest_batches(["x", "y", "z"], [5, 5, 5]) == [["x", "y", "z"]]
    assert cheapest_batches(["only"], [40]) == [["only"]]
    assert cheapest_batches([], []) == []
    # Far apart enough, one batch each: padding 4 to 200 costs more than a call.
    assert cheapest_batches(["long", "short"], [200, 4]) == [["long"], ["short"]]


@pytest.mark.slow  # builds a workspace and loads the embedding model and spaCy
def test_prefetch_embeds_in_cheapest_batches_and_gives_the_vectors_of_one_by_one(lib, monkeypatch):
    embedder = lib.embedder()
    texts = [QUESTION, "Zorbatron engine", "inventor", "chemistry", "Miriam Castellane", QUESTION]
    calls = _counted(monkeypatch, embedder, "embed_queries")
    embeddings = Embeddings(lib)
    embeddings.prefetch(texts)
    assert 1 < len(calls) < len(set(texts)), "short keywords share one batch, the question has its own"
    assert sorted(t for (batch,) in calls for t in batch) == sorted(set(texts)), "each text once"
    for text in set(texts):
        np.testing.assert_allclose(embeddings(text), embedder.embed_query(text), atol=1e-5)
    calls.clear()
    embeddings.prefetch(texts)
    assert embeddings(QUESTION) is not None and calls == [], "embedded once per question"


@pytest.mark.slow
def test_a_mode_embeds_only_the_texts_its_sources_read(lib):
    keywords = question_keywords(QUESTION, None)
    assert len(keywords.high) > 1, keywords  # the high-level keywords are embedded together, never one by one
    for mode, wanted in ((Mode.NAIVE, {QUESTION}), (Mode.LOCAL, {QUESTION, *keywords.low}),
                         (Mode.HYBRID, {QUESTION, *keywords.low, keyword_text(keywords.high)})):
        embeddings = Embeddings(lib)
        route = route_of(mode)
        route.run(lib, QUESTION, QueryParams(mode=mode), keywords=keywords if route.keywords else None, llm=None,
                  embed=embeddings, reranker=FusionReranker(lib))
        assert set(embeddings._cache) == wanted, mode


@pytest.mark.slow
@pytest.mark.parametrize("mode", [Mode.HYBRID, Mode.MIX])
def test_a_mode_of_two_graph_sources_searches_the_keyword_entities_once(lib, monkeypatch, mode):
    searches = _counted(monkeypatch, lib.entity_vectors, "query_many")
    keywords = question_keywords(QUESTION, None)
    routed = route_of(mode).run(lib, QUESTION, QueryParams(mode=mode), keywords=keywords, llm=None,
                                embed=Embeddings(lib), reranker=FusionReranker(lib))
    assert len(searches) == 1, f"{mode}: {len(searches)} keyword entity searches"
    assert len(searches[0][0]) == len(keywords.low), "every keyword in that one search"
    assert routed.retrieval.entities and routed.retrieval.chunks


@pytest.mark.slow
def test_closest_chunks_ranks_as_resolve_hits_scores(lib):
    qvec = lib.embedder().embed_query(QUESTION)
    chunk_ids = [c.id for d in lib.documents.list() for c in lib.chunks.by_doc(d.id)] + ["missing:0"]
    hits = resolve_hits(lib, chunk_ids, qvec, scope_of(lib, QueryParams()))
    expected = sorted(hits, key=lambda cid: -hits[cid].score)
    assert len(expected) > 3
    assert closest_chunks(lib, chunk_ids, qvec, 3) == expected[:3]
    assert closest_chunks(lib, chunk_ids, qvec, 100) == expected, "a chunk that does not exist is left out"


@pytest.mark.slow
def test_the_mention_index_joins_entity_names_and_drops_phrases_named_everywhere(lib):
    index = mention_index(lib)
    chunk = next(c.id for d in lib.documents.list() for c in lib.chunks.by_doc(d.id))
    entity = next(k for k, chunks in index.passages_of.items() if not k.startswith(PHRASE) and chunk not in chunks)
    common = [(f"x:{i}", "shared phrase") for i in range(MAX_PHRASE_PASSAGES + 1)]
    rows = [(chunk, entity), (chunk, "rare phrase"), *common]
    with lib.graph_sources.db.transaction() as conn:  # rows as the extractor writes them, then a new graph version
        conn.executemany("INSERT INTO graph_phrases VALUES ('x', ?, ?)", rows)
        conn.execute("UPDATE graph_meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'version'")
    try:
        index = mention_index(lib)
        assert index.passages_of[entity][-1] == chunk and index.passages_of[entity].count(chunk) == 1
        assert entity in index.entities_of[chunk]
        assert index.passages_of[PHRASE + "rare phrase"] == [chunk]
        assert index.entities_of[chunk][-1] == PHRASE + "rare phrase"
        assert PHRASE + "shared phrase" not in index.passages_of and "x:0" not in index.entities_of
    finally:
        with lib.graph_sources.db.transaction() as conn:
            conn.execute("DELETE FROM graph_phrases WHERE doc_id = 'x'")
            conn.execute("UPDATE graph_meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'version'")
