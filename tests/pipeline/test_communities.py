"""Communities (Leiden through igraph) and their reports: the digest without an LLM, and LLM reports through the
real client stack (core.models.llm.factory) against a local OpenAI-protocol server (tests/openai_server.py): a JSON
report, an unreadable reply and a failing endpoint, each falling back to the digest where it must."""
from __future__ import annotations

import json
from itertools import combinations

import networkx as nx
import pytest

from core.graph.communities.detect import (
    DIGEST,
    CommunityReport,
    community_prompt,
    community_reports,
    detect_communities,
    generate_graph,
    parse_report,
)
from core.models.llm.factory import get_chat_model
from core.settings.config import Settings
from core.store.sqlite_db import Database
from core.store.sqlite_llm_cache import SQLiteLLMCache
from tests.openai_server import OpenAIReplayServer, Reply

MODEL = "replay-model"


def node(graph: nx.Graph, key: str, type_: str = "concept", description: str = "") -> None:
    graph.add_node(key, name=key.upper() if len(key) <= 4 else key.title(), type=type_,
                   description=description or f"{key} is an entity of the test graph.")


def clique(graph: nx.Graph, keys: list[str], weight: float = 1.0) -> None:
    for k in keys:
        if k not in graph:
            node(graph, k)
    for u, v in combinations(keys, 2):
        graph.add_edge(u, v, weight=weight, keywords="related", description=f"{u} relates to {v}.")


def two_cliques() -> nx.Graph:
    g = nx.Graph()
    clique(g, ["a1", "a2", "a3", "a4", "a5", "a6"])
    clique(g, ["b1", "b2", "b3", "b4"])
    g.add_edge("a1", "b1", weight=1.0, keywords="bridge", description="The only link between the two groups.")
    return g


def groups(assignment: dict[str, int]) -> set[frozenset[str]]:
    out: dict[int, set[str]] = {}
    for k, c in assignment.items():
        out.setdefault(c, set()).add(k)
    return {frozenset(v) for v in out.values()}


# ---------------------------------------------------------------------------------------------- detection


def test_two_dense_cliques_joined_by_one_edge_are_two_communities_numbered_by_size():
    assignment = detect_communities(two_cliques())
    assert groups(assignment) == {frozenset({"a1", "a2", "a3", "a4", "a5", "a6"}), frozenset({"b1", "b2", "b3", "b4"})}
    assert assignment["a1"] == 0 and assignment["b1"] == 1  # the larger community first


def test_deterministic_across_runs_and_insertion_orders():
    g = generate_graph(600, 2400, seed=3)
    first = detect_communities(g)
    assert all(detect_communities(g) == first for _ in range(3))
    shuffled = nx.Graph()
    shuffled.add_nodes_from(reversed(list(g.nodes(data=True))))
    shuffled.add_edges_from((v, u, d) for u, v, d in reversed(list(g.edges(data=True))))
    assert detect_communities(shuffled) == first
    assert detect_communities(g, seed=42) == detect_communities(g, seed=42)


def test_planted_communities_are_recovered():
    g = generate_graph(500, 2500, seed=7, community_size=50, inside=0.95)
    assert g.number_of_nodes() == 500 and g.number_of_edges() == 2500
    assignment = detect_communities(g)
    majority = 0
    for block in range(10):
        members = [f"e{i:03d}" for i in range(block * 50, block * 50 + 50)]
        counts: dict[int, int] = {}
        for m in members:
            counts[assignment[m]] = counts.get(assignment[m], 0) + 1
        majority += max(counts.values())
    assert majority / 500 > 0.95


def test_isolated_nodes_are_communities_of_their_own_after_the_others():
    g = two_cliques()
    node(g, "lonely")
    node(g, "alone")
    assignment = detect_communities(g)
    assert set(assignment) == set(g.nodes)
    assert assignment["alone"] == 2 and assignment["lonely"] == 3  # size 1, then by key
    assert detect_communities(nx.Graph()) == {}


def test_edge_weights_decide_where_a_path_splits():
    g = nx.Graph()
    for k in "abcd":
        node(g, k)
    g.add_edge("a", "b", weight=10.0)
    g.add_edge("b", "c", weight=0.1)
    g.add_edge("c", "d", weight=10.0)
    assert groups(detect_communities(g)) == {frozenset("ab"), frozenset("cd")}
    g.add_edge("a", "a", weight=3.0)  # a self-loop and a missing weight do not break it
    g.add_edge("d", "b")
    assert set(detect_communities(g)) == set("abcd")


def test_resolution_makes_more_or_fewer_communities():
    g = generate_graph(400, 1600, seed=2, community_size=40)
    few = len(set(detect_communities(g, resolution=0.2).values()))
    many = len(set(detect_communities(g, resolution=3.0).values()))
    assert few < many


# ---------------------------------------------------------------------------------------------- digests


def paper_graph() -> nx.Graph:
    """Two topics: BERT fine-tuned on NLI benchmarks, and molecules explained with counterfactuals."""
    g = nx.Graph()
    node(g, "bert", "model", "BERT is a bidirectional Transformer encoder pretrained on unlabeled text.")
    node(g, "multinli", "dataset", "MultiNLI is a crowd-sourced natural language inference corpus.")
    node(g, "glue", "dataset", "GLUE is a benchmark of nine language understanding tasks.")
    node(g, "accuracy", "metric", "Accuracy is the share of correct predictions.")
    g.nodes["bert"]["name"], g.nodes["multinli"]["name"] = "BERT", "MultiNLI"
    g.add_edge("bert", "multinli", weight=5.0, keywords="fine-tuned on", description="BERT reaches 86.7% on MultiNLI.")
    g.add_edge("bert", "glue", weight=4.0, keywords="evaluated on", description="BERT scores 80.5 on GLUE.")
    g.add_edge("multinli", "glue", weight=1.0, keywords="part of", description="MultiNLI is one GLUE task.")
    g.add_edge("accuracy", "multinli", weight=2.0, keywords="measured by", description="MultiNLI uses accuracy.")
    node(g, "counterfactual", "method", "Counterfactual explanations change a molecule minimally.")
    node(g, "molecule", "concept", "Molecules are the inputs of the property predictors.")
    node(g, "solubility", "task", "Solubility prediction from molecular structure.")
    clique(g, ["counterfactual", "molecule", "solubility"], weight=2.0)
    g.add_edge("glue", "molecule", weight=0.5, keywords="none", description="A weak, spurious link.")
    node(g, "isolated", "concept", "An entity nothing relates to.")
    return g


def test_digest_reports_name_the_top_entities_and_list_their_strongest_relations():
    g = paper_graph()
    assignment = detect_communities(g)
    reports = community_reports(g, assignment, None)
    assert [r.community for r in reports] == [0, 1]  # the isolated node is below min_size
    nli = next(r for r in reports if "bert" in r.entities)
    assert nli.generated_by == DIGEST and nli.rating is None and nli.findings == []
    assert nli.title == "BERT, MultiNLI and GLUE"  # by weighted degree within the community: 9, 8, 5, 2
    assert nli.entities[:2] == ["bert", "multinli"] and nli.size == 4 == len(nli.entities)
    assert "4 entities (2 dataset, 1 metric, 1 model)." in nli.summary
    assert "BERT (model): BERT is a bidirectional Transformer encoder" in nli.summary
    lines = nli.summary.splitlines()
    relations = lines[-1]
    assert relations.startswith("Strongest relations: BERT — MultiNLI (fine-tuned on): BERT reaches 86.7%")
    assert relations.index("MultiNLI") < relations.index("GLUE (evaluated on)")
    assert "spurious" not in nli.summary  # an edge leaving the community is not one of its relations
    assert community_reports(g, assignment, None, min_size=1)[-1].entities == ["isolated"]


# ---------------------------------------------------------------------------------------------- LLM reports


@pytest.fixture
def server():
    with OpenAIReplayServer(model=MODEL) as s:
        yield s


def chat_model(server, tmp_path):
    settings = Settings()
    settings.llm.provider, settings.llm.base_url, settings.llm.model = "openai", server.url, MODEL
    settings.llm.max_retries = 0  # a failing endpoint fails at once
    return get_chat_model(settings, SQLiteLLMCache(Database(tmp_path / "ws" / "papergraph.sqlite")))


REPORT = {"title": "BERT on natural language inference benchmarks",
          "summary": "BERT is fine-tuned on MultiNLI and evaluated on GLUE, where it reaches 80.5.",
          "rating": 8.5, "rating_explanation": "Central to the paper's results.",
          "findings": [{"summary": "BERT leads on MultiNLI", "explanation": "It reaches 86.7% accuracy."},
                       "GLUE groups nine tasks"]}


def test_an_llm_writes_the_report_from_the_community_entities_and_relations(server, tmp_path):
    server.when("MultiNLI", Reply(content="Here is the report:\n```json\n" + json.dumps(REPORT) + "\n```"))
    server.default = Reply(content=json.dumps({"title": "Counterfactual explanations of molecules",
                                               "summary": "Counterfactuals explain solubility predictions.",
                                               "rating": "6/10", "findings": []}))
    g = paper_graph()
    assignment = detect_communities(g)
    reports = community_reports(g, assignment, chat_model(server, tmp_path), language="French", concurrency=1)
    nli, chem = sorted(reports, key=lambda r: "bert" not in r.entities)
    assert nli.title == REPORT["title"] and nli.summary == REPORT["summary"] and nli.rating == 8.5
    assert nli.findings == ["BERT leads on MultiNLI: It reaches 86.7% accuracy.", "GLUE groups nine tasks"]
    assert nli.generated_by == "openai:replay-model" and nli.entities[0] == "bert" and nli.size == 4
    assert chem.title == "Counterfactual explanations of molecules" and chem.rating == 6.0
    assert len(server.chat_requests) == 2
    prompt = next(r for r in server.chat_requests if "MultiNLI" in r["messages"][-1]["content"])
    text = prompt["messages"][-1]["content"]
    assert "Write in French" in text
    assert "BERT | model | BERT is a bidirectional Transformer encoder" in text
    assert "BERT | MultiNLI | fine-tuned on | BERT reaches 86.7% on MultiNLI. | 5" in text
    assert text.index("BERT | MultiNLI |") < text.index("BERT | GLUE |")  # strongest relations first
    assert "spurious" not in text and "response_format" not in prompt  # no schema for an OpenAI endpoint


def test_an_unreadable_reply_falls_back_to_the_digest_for_that_community_only(server, tmp_path):
    server.when("MultiNLI", Reply(content="I am sorry, I cannot produce JSON today. {not json"))
    server.default = Reply(content=json.dumps(REPORT | {"title": "Molecules"}))
    g = paper_graph()
    reports = community_reports(g, detect_communities(g), chat_model(server, tmp_path))
    by_first = {r.entities[0]: r for r in reports}
    assert by_first["bert"].generated_by == DIGEST and by_first["bert"].title == "BERT, MultiNLI and GLUE"
    other = next(r for k, r in by_first.items() if k != "bert")
    assert other.generated_by == "openai:replay-model" and other.title == "Molecules"


def test_a_failing_endpoint_gives_digests_and_is_not_called_forever(server, tmp_path):
    server.default = Reply(status=500)
    g = generate_graph(120, 600, seed=5, community_size=10, inside=0.97)
    assignment = detect_communities(g)
    reports = community_reports(g, assignment, chat_model(server, tmp_path), concurrency=1)
    assert reports and all(r.generated_by == DIGEST for r in reports)
    assert len(server.chat_requests) == 2  # two failures in a row: the endpoint is taken to be down


def test_max_reports_caps_the_llm_calls_to_the_largest_communities(server, tmp_path):
    server.default = Reply(content=json.dumps(REPORT))
    g = generate_graph(120, 600, seed=5, community_size=10, inside=0.97)
    assignment = detect_communities(g)
    reports = community_reports(g, assignment, chat_model(server, tmp_path), max_reports=2)
    assert len(server.chat_requests) == 2
    assert [r.generated_by for r in reports[:2]] == ["openai:replay-model"] * 2  # ids are by size
    assert all(r.generated_by == DIGEST for r in reports[2:]) and len(reports) > 2


def test_the_prompt_keeps_to_its_token_budget():
    g = generate_graph(300, 3000, seed=1, community_size=300)
    members = sorted(g.nodes)
    prompt = community_prompt(g, members, "English", token_budget=1500)
    assert len(prompt) / 4 <= 1500
    assert prompt.count("| Entity ") > 10 and "relates to" in prompt  # both entities and relations made it


def test_parse_report_reads_what_models_write_and_rejects_the_rest():
    fenced = parse_report("Sure!\n```json\n{\"title\": \"T\", \"summary\": \"S\", \"rating\": \"7.5 out of 10\"}\n```")
    assert fenced == {"title": "T", "summary": "S", "rating": 7.5, "findings": []}
    assert parse_report('{"title": "T", "summary": "S", "rating": 42, "findings": "none"}')["rating"] == 10.0
    assert parse_report('{"title": "T", "summary": "S", "rating": true}')["rating"] is None
    assert parse_report('{"title": "", "summary": "S"}') is None
    assert parse_report('{"title": "T"}') is None
    assert parse_report("[1, 2, 3]") is None and parse_report("") is None and parse_report("no json") is None


def test_reports_are_plain_records():
    report = CommunityReport(community=0, title="t", summary="s", entities=["a"], size=1, rating=None,
                             generated_by=DIGEST)
    assert report.findings == []
