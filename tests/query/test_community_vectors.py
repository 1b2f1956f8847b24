"""The community mode's report vectors (core.graph.communities.vectors, core/query/community_search.py):
embedded by the communities refresh and stored beside the reports, so a question — in a new process too — embeds
no report text; a refresh embeds only the texts it changed; the vectors go with their community; vectors of another
embedding space, or of a report's older text, are never used; a workspace without stored vectors gets them once.
And the passages the mode scores: within a budget, those of the entities closest to the question.

The real embedder throughout, wrapped to count what it is asked to embed."""
from __future__ import annotations

import random

import numpy as np
import pytest

from core.graph.communities.detect import generate_graph
from core.graph.communities.index import refresh_communities
from core.graph.communities.vectors import (
    current_space,
    embedded_texts,
    findings_vectors,
    report_text,
    text_sha,
)
from core.graph.vectors import entity_vector_id
from core.library import Library, open_library
from core.query import community_search
from core.query.community_search import _candidates, _ranked_reports, community_retrieve
from core.query.records import QueryParams
from core.query.sources import Scope
from core.schema.graph import GraphNode
from core.schema.modes import Mode
from core.settings.config import Settings
from core.settings.workspace import Workspace
from core.store.base import VectorRow
from tests.pipeline.test_communities_incremental import new_paper, write, write_graph

pytestmark = pytest.mark.slow  # loads the embedding model


@pytest.fixture
def lib(tmp_path) -> Library:
    ws = Workspace(tmp_path / "ws").ensure()
    ws.save_settings(Settings())
    return open_library(ws)


@pytest.fixture
def embedded(lib, monkeypatch) -> list[str]:
    """Every text the real embedder is asked to embed (documents, not questions)."""
    texts: list[str] = []
    embedder = lib.embedder()
    real = embedder.embed

    def counting(batch, *args, **kwargs):
        texts.extend(batch)
        return real(batch, *args, **kwargs)

    monkeypatch.setattr(embedder, "embed", counting)
    return texts


def _new_process(lib: Library) -> None:
    """What a new process has: nothing of this workspace cached."""
    community_search._RANKED.pop(str(lib.workspace.root), None)


def _stored(lib: Library) -> dict[int, dict[int, tuple[str, np.ndarray]]]:
    reports = lib.graph_sources.community_reports()
    return lib.community_state.vectors(current_space(lib), [r["community"] for r in reports])


def _report(i: int, summary: str) -> dict:
    return {"community": i, "title": f"community {i}", "summary": summary, "rating": 5.0,
            "findings": [f"finding {i} a", f"finding {i} b"], "entities": []}


def test_the_refresh_stores_every_reports_vectors_and_a_question_embeds_none(lib, embedded):
    write_graph(lib, generate_graph(300, 1200, seed=3, community_size=30, inside=0.9))
    refresh_communities(lib)
    reports = lib.graph_sources.community_reports()
    assert len(reports) > 3 and embedded, "the refresh embedded the reports"
    stored = _stored(lib)
    for report in reports:
        texts = embedded_texts(report)
        assert [stored[report["community"]][i][0] for i in range(len(texts))] == [text_sha(t) for t in texts]
    some = reports[2]
    np.testing.assert_allclose(stored[some["community"]][0][1], lib.embedder().embed([report_text(some)])[0],
                               atol=1e-5)

    embedded.clear()
    _new_process(lib)
    question = report_text(some)[:200]
    routed = community_retrieve(lib, question, QueryParams(mode=Mode.COMMUNITY), llm=None,
                                embed=lib.embedder().embed_query)
    assert embedded == [], "a question embeds no report or finding"
    assert routed.retrieval.reports[0]["community"] == some["community"]
    assert routed.sections, "the extractive map scored the findings with the stored vectors"


def test_a_refresh_embeds_only_the_texts_it_changed_and_drops_the_vectors_of_gone_communities(lib, embedded):
    graph = generate_graph(300, 1200, seed=4, community_size=30, inside=0.9)
    write_graph(lib, graph)
    refresh_communities(lib)
    before = {r["community"]: r for r in lib.graph_sources.community_reports()}
    before_texts = {t for r in before.values() for t in embedded_texts(r)}
    embedded.clear()

    new, edges = new_paper(sorted(graph), 1, random.Random(5))
    write(lib, new, edges)
    assert refresh_communities(lib)["full"] == 0.0
    after = {r["community"]: r for r in lib.graph_sources.community_reports()}
    changed = {t for r in after.values() for t in embedded_texts(r)} - before_texts
    assert changed and set(embedded) == changed, "only the new texts are embedded, each once"
    assert len(embedded) == len(changed)
    stored = _stored(lib)
    assert set(stored) == set(after)
    all_rows = lib.community_state.vectors(current_space(lib), set(before) | set(after))
    assert set(all_rows) == set(after), "a community gone took its vectors with it"

    write(lib, delete=[sorted(new)[0]])  # an entity deleted: a full recompute, every report replaced
    assert refresh_communities(lib)["full"] == 1.0
    final = {r["community"]: r for r in lib.graph_sources.community_reports()}
    assert set(lib.community_state.vectors(current_space(lib), set(after) | set(final))) == set(final)


def test_vectors_of_another_space_or_an_older_text_are_not_used(lib, embedded):
    reports = [_report(i, f"graph neural networks for topic {i}") for i in range(4)]
    lib.graph_sources.put_community_reports(reports, version="1")
    store = lib.community_state
    dim = lib.embedder().dim
    junk = np.full(dim, 1 / np.sqrt(dim), dtype=np.float32)
    # Community 0: the right texts, but vectors of another model. Community 1: this space, an older text's hash.
    store.put_vectors([VectorRow(0, i, text_sha(t), junk) for i, t in enumerate(embedded_texts(reports[0]))],
                      "some/other-model|fp32")
    store.put_vectors([VectorRow(1, i, text_sha(t + " (before)"), junk)
                       for i, t in enumerate(embedded_texts(reports[1]))], current_space(lib))

    _new_process(lib)
    ranked = _ranked_reports(lib, lib.embedder().embed_query("graph neural networks for topic 0"))
    assert ranked[0][0]["community"] == 0
    assert set(embedded) == {t for r in reports for t in embedded_texts(r)}, "none of the stale vectors was used"
    stored = _stored(lib)
    for report in reports:
        want = lib.embedder().embed(embedded_texts(report))
        got = np.stack([stored[report["community"]][i][1] for i in range(len(want))])
        np.testing.assert_allclose(got, want, atol=1e-5)

    embedded.clear()
    _new_process(lib)
    _ranked_reports(lib, lib.embedder().embed_query("topic 1"))
    assert embedded == [], "embedded once, stored: the next process reads them"


def test_a_workspace_without_stored_vectors_embeds_them_once(lib, embedded):
    reports = [_report(i, f"graph neural networks for topic {i}") for i in range(6)]
    lib.graph_sources.put_community_reports(reports, version="1")  # written without vectors, as before they existed
    qvec = lib.embedder().embed_query("graph neural networks for topic 3")
    assert _ranked_reports(lib, qvec)[0][0]["community"] == 3
    assert len(embedded) == 6 + 12  # the six reports and their twelve findings, in one load
    embedded.clear()
    _new_process(lib)
    assert _ranked_reports(lib, qvec)[0][0]["community"] == 3 and embedded == []

    reports[2] = _report(2, "protein folding with transformers")
    # Replaced whole (how bench/scale_query.py writes them): the trigger drops every vector with its report.
    lib.graph_sources.put_community_reports(reports, version="2")
    assert _stored(lib) == {}
    ranked = _ranked_reports(lib, qvec)
    assert len(embedded) == 6 + 12
    assert any(r["summary"].startswith("protein") for r, _, _ in ranked), "the new text is what is ranked"


def test_over_the_budget_the_passages_of_the_entities_closest_to_the_question_are_kept(lib, monkeypatch):
    """The top communities name more passages than COMMUNITY_CANDIDATES: those of the entities whose vectors lie
    closest to the question are scored, whatever their place in the communities; an entity without a vector
    (Chroma refuses a ranking among ids it lacks) is ranked last, not an error."""
    topics = ["protein folding", "graph neural networks", "machine translation", "speech recognition",
              "image segmentation", "reinforcement learning"]
    keys = [f"entity {i}" for i in range(len(topics))]
    nodes = [GraphNode(key=k, name=t, type="concept", description=f"{t} research",
                       source_chunks=[f"doc{i}:{j}" for j in range(3)]) for i, (k, t) in enumerate(zip(keys, topics))]
    lib.graph.apply(upsert_nodes=nodes, upsert_edges=[])
    have = keys[:-1]  # the last entity has no vector
    lib.entity_vectors.upsert([entity_vector_id(k) for k in have],
                              lib.embedder().embed([f"{t} research" for t in topics[:-1]]), have,
                              [{"key": k} for k in have])
    scope = Scope(doc_ids=[f"doc{i}" for i in range(len(topics))], titles={})
    qvec = lib.embedder().embed_query("which machine translation systems are compared?")
    assert len(_candidates(lib, keys, qvec, scope)) == 18, "within the budget: every passage"

    monkeypatch.setattr(community_search, "COMMUNITY_CANDIDATES", 4)
    assert _candidates(lib, keys, qvec, scope)[:3] == ["doc2:0", "doc2:1", "doc2:2"]
    assert len(_candidates(lib, keys, qvec, scope)) == 4
    monkeypatch.setattr(community_search, "COMMUNITY_ENTITIES", 1)  # the others follow in the communities' order
    assert _candidates(lib, keys, qvec, scope) == ["doc2:0", "doc2:1", "doc2:2", "doc0:0"]


def test_a_report_without_findings_has_one_vector_and_it_scores_the_summary():
    bare = {"community": 1, "title": "Walruses", "summary": "Walruses relax lattices.", "findings": ["", " "]}
    assert embedded_texts(bare) == [report_text(bare)] == ["Walruses: Walruses relax lattices."]
    full = {**bare, "findings": ["Lattices relax in 37 steps.", "Sea ice is cold."]}
    assert embedded_texts(full) == [report_text(full), *full["findings"]]
    vectors = np.eye(3, dtype=np.float32)
    np.testing.assert_array_equal(findings_vectors(vectors[:1]), vectors[:1])  # the report's text for its summary
    np.testing.assert_array_equal(findings_vectors(vectors), vectors[1:])
