"""ppr's second hop after the reranker (core.query.second_hop): the passage that shares a rare name with one of the
reranker's top passages is returned even when the reranker, scoring each passage alone against the question, put it
below passages that repeat the question's words. Real SQLite, Chroma, the embedding model and the LLM-free graph
(phrase nodes), over one-paragraph text documents as bench/query.py indexes HotpotQA."""
from __future__ import annotations

import pytest

from core.graph.mention_index import mention_index
from core.library import open_library
from core.query.engine import ask
from core.query.keywords import question_keywords
from core.query.ppr import PPR
from core.query.records import QueryParams
from core.query.rerank import FusionReranker
from core.query.retrieve import retrieve
from core.query.routes import ROUTES, route_of
from core.query.second_hop import SecondHopReranker, asked, bridge_of, question_words, rare_limit, second_hop
from core.schema.modes import Mode
from core.settings.workspace import Workspace
from tests.graph_papers import fast_workspace
from tests.query.query_helpers import add_texts, index_and_graph

# First hop: the engine's paragraph names its inventor. Second hop: her schooling, in a paragraph that shares no
# word with the question; only her name ties the two. The other engine paragraphs repeat the question's words, so a
# reranker that scores each paragraph alone puts them above the second hop.
QUESTION = "Where was the inventor of the Zorbatron engine educated?"
FIRST_HOP = "The Zorbatron engine was invented by Miriam Castellane"
SECOND_HOP = "Miriam Castellane studied chemistry at Uppsala University"
DOCS = [
    ("Zorbatron engine", f"{FIRST_HOP} in 1987 near Gothenburg."),
    ("Miriam Castellane", f"{SECOND_HOP} under Professor Anders Lindqvist, graduating with honours in 1975."),
    ("Zorbatron engine legacy", "Every Zorbatron engine built after 1990 copies the valve layout of the first "
                                "Zorbatron engine."),
    ("Engine inventors", "Where were engine inventors educated? Most steam engine inventors were educated at "
                         "technical schools."),
    ("Anders Lindqvist", "Anders Lindqvist founded a laboratory for organic synthesis in Stockholm in 1979."),
    ("Brass flywheels", "A brass flywheel stores energy in a rotating mass and smooths the output of steam engines."),
]
TOP = 3  # passages returned: the first hop and two more, so the reranker must choose what comes second and third


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    ws = fast_workspace(tmp_path_factory.mktemp("second-hop") / "ws")
    lib = open_library(ws)
    add_texts(lib, DOCS)
    index_and_graph(lib)
    return ws


@pytest.fixture
def lib(workspace):
    return open_library(Workspace(workspace.root))


def _texts(chunks) -> list[str]:
    return [c.hit.chunk.text for c in chunks]


def _ppr(lib, top: int = TOP, rerank: bool = True):
    return ask(lib, QUESTION, QueryParams(mode="ppr", chunk_top_k=top, rerank=rerank, context_only=True))


def _fusion_only(lib, top: int = 10):
    """ppr's passages ordered by the fusion reranker alone: the route as it was before the second hop."""
    params = QueryParams(mode="ppr", chunk_top_k=top)
    return retrieve(lib, QUESTION, question_keywords(QUESTION, None), params, [PPR],
                    reranker=FusionReranker(lib)).chunks


def test_the_fixture_the_reranker_alone_puts_the_second_hop_below_the_passages_returned(lib):
    ranked = _texts(_fusion_only(lib))
    assert any(FIRST_HOP in t for t in ranked[:2]), ranked
    assert any(SECOND_HOP in t for t in ranked), ranked  # ppr proposes it ...
    assert not any(SECOND_HOP in t for t in ranked[:TOP]), ranked  # ... and the reranker pushes it out


def test_ppr_returns_the_second_hop_through_the_name_both_passages_share(lib):
    texts = _texts(_ppr(lib).retrieval.chunks)
    assert len(texts) == TOP
    assert any(FIRST_HOP in t for t in texts) and any(SECOND_HOP in t for t in texts), texts


def test_the_reranker_keeps_its_top_passages_and_the_bridge_takes_the_last_place(lib):
    before = _fusion_only(lib)
    after = _ppr(lib).retrieval.chunks
    assert [c.id for c in after[:TOP - 1]] == [c.id for c in before[:TOP - 1]]
    assert SECOND_HOP in after[TOP - 1].hit.chunk.text and "bridge" in after[TOP - 1].via
    assert not any("bridge" in c.via for c in after[:TOP - 1])


def test_the_researcher_is_told_which_passage_and_name_a_second_hop_continues(lib):
    result = _ppr(lib)
    sources = result.context.sources
    first = next(s for s in sources if FIRST_HOP in s.text)
    bridge = next(s for s in sources if SECOND_HOP in s.text)
    # As the passage writes the name (the index keys it lower-case): what the Ask page's source label shows.
    assert (bridge.bridge_from, bridge.bridge_name) == (first.n, "Miriam Castellane")
    assert all(s.bridge_from == 0 and s.bridge_name == "" for s in sources if s is not bridge)
    chunk = next(c for c in result.retrieval.chunks if SECOND_HOP in c.hit.chunk.text)
    assert chunk.bridge == (first.chunk_id, "Miriam Castellane")


def test_the_bridge_is_named_by_a_rare_name_and_nothing_moves_when_it_is_already_returned(lib):
    index = mention_index(lib)
    ranked = _fusion_only(lib)
    first = next(c for c in ranked if FIRST_HOP in c.hit.chunk.text)
    others = [c.id for c in ranked if c.id != first.id]
    words = question_words(QUESTION)
    bridge = bridge_of(index, first.id, others, words)
    assert SECOND_HOP in next(c for c in ranked if c.id == bridge).hit.chunk.text
    shared = set(index.entities_of[first.id]) & set(index.entities_of[bridge])
    assert "miriam castellane" in shared and len(index.passages_of["miriam castellane"]) <= rare_limit(index)
    # The engine's name is as rare (the legacy paragraph says it too), but the question says it: not a bridge.
    legacy = next(c.id for c in ranked if "valve layout" in c.hit.chunk.text)
    assert asked("~zorbatron engine", words) and not asked("miriam castellane", words)
    assert bridge_of(index, first.id, [legacy], words) is None
    assert bridge_of(index, first.id, [legacy], set()) == legacy
    # Returned anyway (all the candidates fit): the reranker's order is kept as it is.
    assert [c.id for c in second_hop(index, QUESTION, ranked, 2, len(ranked))] == [c.id for c in ranked]
    # No room below the kept passages: nothing is displaced.
    assert [c.id for c in second_hop(index, QUESTION, ranked, 2, 2)] == [c.id for c in ranked]


def test_only_ppr_takes_the_second_hop_and_only_after_a_reranker(lib):
    reranker = FusionReranker(lib)
    for mode in (Mode.NAIVE, Mode.LOCAL, Mode.GLOBAL, Mode.HYBRID, Mode.MIX):
        result = ask(lib, QUESTION, QueryParams(mode=mode, chunk_top_k=TOP, context_only=True))
        assert not any("bridge" in c.via for c in result.retrieval.chunks), mode
    assert ROUTES[Mode.PPR] is route_of("ppr")
    # Without the reranker the walk's own order is final: no second hop to add.
    unranked = _ppr(lib, rerank=False)
    assert not any("reranked" in n for n in unranked.retrieval.notes)
    wrapped = SecondHopReranker(reranker, lib, 2, TOP)
    assert wrapped.calls == 0 and wrapped.name.startswith(reranker.name)
