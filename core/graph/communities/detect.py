"""Communities of the entity graph (Leiden, through igraph) and a report per community (GraphRAG's community
reports): LLM-written when a chat model is configured, else a digest built from the graph itself.

Leiden on 50k nodes / 200k edges takes ~0.9 s here, 0.6 s of it building the igraph graph (networkx's Louvain:
~40 s). It is seeded, and the graph is handed to igraph in sorted order, so the same graph gives the same
communities whatever order it was built in.
"""
from __future__ import annotations

import logging
import math
import random
import re
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from core.models.llm.base import ChatModel, LLMError
from core.prompts import PROMPTS
from core.text.json_reply import read_json_object

log = logging.getLogger(__name__)

DIGEST = "digest"  # CommunityReport.generated_by when no LLM wrote the report
DIGEST_ENTITIES = 6
DIGEST_RELATIONS = 5
PROMPT_DESCRIPTION_CHARS = 300  # per entity or relation in the prompt; merged descriptions can be long
MAX_FINDINGS = 8
# Two Leiden iterations: on 50k nodes / 200k edges iterating until stable took 5x longer (1.5 s vs 0.3 s) for the
# same modularity to three decimals.
LEIDEN_ITERATIONS = 2
MAX_CONSECUTIVE_ERRORS = 2  # then the endpoint is taken to be down: the remaining communities get digests

_rng_lock = threading.Lock()

# The reply's shape, for models that take a schema; lists capped, or a small model repeats findings forever.
REPORT_JSON_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "properties": {
        "title": {"type": "string", "maxLength": 120},
        "summary": {"type": "string", "maxLength": 1500},
        "rating": {"type": "number", "minimum": 0, "maximum": 10},
        "rating_explanation": {"type": "string", "maxLength": 300},
        "findings": {"type": "array", "maxItems": 5, "items": {
            "type": "object", "additionalProperties": False,
            "properties": {"summary": {"type": "string", "maxLength": 200},
                           "explanation": {"type": "string", "maxLength": 600}},
            "required": ["summary", "explanation"]}},
    },
    "required": ["title", "summary", "rating", "findings"],
}


# ---------------------------------------------------------------------------------------------- detection


def detect_communities(graph: nx.Graph, resolution: float = 1.0, seed: int = 42) -> dict[str, int]:
    """Node key → community id, by Leiden maximising weighted modularity (edge attribute "weight").

    Ids are numbered by community size, largest first (ties by smallest member key); every node gets one, an
    isolated node being a community of its own. Deterministic for a given graph, resolution and seed."""
    import igraph

    if graph.number_of_nodes() == 0:
        return {}
    nodes = sorted(graph.nodes, key=str)
    index = {node: i for i, node in enumerate(nodes)}
    edges: list[tuple[int, int, float]] = []
    for u, v, data in graph.edges(data=True):
        if u == v:
            continue  # a self-loop says nothing about which community a node belongs to
        a, b = sorted((index[u], index[v]))
        edges.append((a, b, edge_weight(data.get("weight"))))
    edges.sort()
    g = igraph.Graph(n=len(nodes), edges=[(a, b) for a, b, _ in edges], directed=False)
    g.es["weight"] = [w for _, _, w in edges]
    with seeded_igraph(seed):
        membership = g.community_leiden(objective_function="modularity", weights="weight",
                                        resolution=resolution, n_iterations=LEIDEN_ITERATIONS).membership
    groups: dict[int, list[str]] = {}
    for node, community in zip(nodes, membership):
        groups.setdefault(community, []).append(node)
    ordered = sorted(groups.values(), key=lambda members: (-len(members), str(members[0])))
    return {node: new_id for new_id, members in enumerate(ordered) for node in members}


@contextmanager
def seeded_igraph(seed: int) -> Iterator[None]:
    """igraph draws from one process-wide generator: lend it a seeded one for one run, one run at a time."""
    import igraph

    with _rng_lock:
        igraph.set_random_number_generator(random.Random(seed))
        try:
            yield
        finally:
            igraph.set_random_number_generator(random)


def edge_weight(raw: Any) -> float:
    """Edge weights as positive floats: a missing, zero, negative or unreadable weight counts as 1."""
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return 1.0
    return value if math.isfinite(value) and value > 0 else 1.0


def members_by_community(assignment: dict[str, int]) -> dict[int, list[str]]:
    groups: dict[int, list[str]] = {}
    for node, community in assignment.items():
        groups.setdefault(community, []).append(node)
    return {c: sorted(m, key=str) for c, m in sorted(groups.items())}


# ---------------------------------------------------------------------------------------------- reports


@dataclass
class CommunityReport:
    community: int
    title: str
    summary: str
    entities: list[str]  # node keys, most connected first
    size: int
    rating: float | None  # the LLM's 0-10 impact rating; None for a digest
    generated_by: str  # the chat model's name, or "digest"
    findings: list[str] = field(default_factory=list)  # the LLM's key findings, "summary: explanation"


def community_reports(graph: nx.Graph, assignment: dict[str, int], chat_model: ChatModel | None,
                      language: str = "English", min_size: int = 2, max_reports: int = 50, *,
                      token_budget: int = 3000, concurrency: int = 4, json_mode: bool | None = None
                      ) -> list[CommunityReport]:
    """A report for every community of at least `min_size` entities, in community order.

    With a chat model, the `max_reports` largest communities get a GraphRAG-style report written by it (their
    entities and strongest relations, within `token_budget` tokens of prompt); the others, any whose reply
    cannot be read, and all of them once the endpoint has failed twice in a row, get the digest. `json_mode`
    constrains the reply to REPORT_JSON_SCHEMA (default: for the embedded model only, which loops without it;
    not every OpenAI-compatible server accepts a schema)."""
    groups = {c: m for c, m in members_by_community(assignment).items() if len(m) >= min_size}
    ranked = {c: _ranked_members(graph, m) for c, m in groups.items()}
    digests = {c: digest_report(graph, c, ranked[c]) for c in groups}
    if chat_model is None or not groups or max_reports <= 0:
        return [digests[c] for c in sorted(groups)]
    chosen = sorted(groups, key=lambda c: (-len(groups[c]), c))[:max_reports]
    if json_mode is None:
        json_mode = str(getattr(chat_model, "name", "")).startswith("embedded")
    writer = _ReportWriter(graph, chat_model, language, token_budget, json_mode)
    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="community-report") as pool:
        written = dict(zip(chosen, pool.map(lambda c: writer.write(c, ranked[c]), chosen)))
    return [written.get(c) or digests[c] for c in sorted(groups)]


def _ranked_members(graph: nx.Graph, members: Sequence[str]) -> list[str]:
    """Most connected within the community first: weighted degree, then degree, then key."""
    inside = set(members)
    strength: dict[str, float] = {}
    degree: dict[str, int] = {}
    for n in members:
        links = [d for _, v, d in graph.edges(n, data=True) if v in inside and v != n]
        strength[n] = sum(edge_weight(d.get("weight")) for d in links)
        degree[n] = len(links)
    return sorted(members, key=lambda n: (-strength[n], -degree[n], str(n)))


def _name(graph: nx.Graph, node: str) -> str:
    return str(graph.nodes[node].get("name") or node)


def _short(text: Any, limit: int) -> str:
    text = " ".join(str(text or "").split())
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    return (cut[:cut.rfind(" ")] if " " in cut[limit // 2:] else cut).rstrip(" ,;:.") + "…"


def _inner_edges(graph: nx.Graph, members: Sequence[str]) -> list[tuple[str, str, dict]]:
    """The community's own relations, strongest first (ties by names, for a stable order)."""
    inside = set(members)
    edges = [(u, v, d) for u, v, d in graph.edges(members, data=True) if u in inside and v in inside and u != v]
    seen, out = set(), []
    for u, v, d in edges:
        pair = tuple(sorted((str(u), str(v))))
        if pair not in seen:
            seen.add(pair)
            out.append((pair[0], pair[1], d))
    return sorted(out, key=lambda e: (-edge_weight(e[2].get("weight")), e[0], e[1]))


def digest_report(graph: nx.Graph, community: int, ranked: Sequence[str]) -> CommunityReport:
    """The LLM-free report: named after its most connected entities, listing them and its strongest relations."""
    top = list(ranked[:DIGEST_ENTITIES])
    names = [_name(graph, n) for n in top[:3]]
    title = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    types = Counter(str(graph.nodes[n].get("type") or "concept") for n in ranked)
    by_count = sorted(types.items(), key=lambda item: (-item[1], item[0]))
    lines = [f"{len(ranked)} entities ({', '.join(f'{count} {kind}' for kind, count in by_count)})."]
    lines.append("Main entities: " + "; ".join(
        f"{_name(graph, n)} ({graph.nodes[n].get('type') or 'concept'})"
        + (f": {_short(graph.nodes[n].get('description'), 120)}" if graph.nodes[n].get("description") else "")
        for n in top) + ".")
    edges = _inner_edges(graph, ranked)[:DIGEST_RELATIONS]
    if edges:
        lines.append("Strongest relations: " + "; ".join(
            f"{_name(graph, u)} — {_name(graph, v)}"
            + (f" ({_short(d.get('keywords'), 60)})" if d.get("keywords") else "")
            + (f": {_short(d.get('description'), 120)}" if d.get("description") else "")
            for u, v, d in edges) + ".")
    return CommunityReport(community=community, title=title, summary="\n".join(lines), entities=list(ranked),
                           size=len(ranked), rating=None, generated_by=DIGEST)


class _ReportWriter:
    """Writes one community's report with the chat model; None when the reply is unusable or the call fails."""

    def __init__(self, graph: nx.Graph, chat_model: ChatModel, language: str, token_budget: int, json_mode: bool):
        self.graph, self.chat, self.language, self.budget = graph, chat_model, language, token_budget
        self.response_format = ({"type": "json_schema", "json_schema": {"name": "community_report",
                                                                          "schema": REPORT_JSON_SCHEMA}}
                                if json_mode else None)
        self._errors = 0
        self._lock = threading.Lock()

    def write(self, community: int, ranked: list[str]) -> CommunityReport | None:
        with self._lock:
            if self._errors >= MAX_CONSECUTIVE_ERRORS:
                return None
        prompt = community_prompt(self.graph, ranked, self.language, self.budget)
        try:
            reply = self.chat.chat([{"role": "user", "content": prompt}], purpose="community_report",
                                   response_format=self.response_format)
        except LLMError as exc:
            with self._lock:
                self._errors += 1
            log.warning("community %d: the LLM report failed, using the digest: %s", community, exc)
            return None
        with self._lock:
            self._errors = 0
        parsed = parse_report(reply.text)
        if parsed is None:
            log.warning("community %d: the LLM's report could not be read, using the digest", community)
            return None
        return CommunityReport(community=community, title=parsed["title"], summary=parsed["summary"],
                               entities=list(ranked), size=len(ranked), rating=parsed["rating"],
                               generated_by=getattr(self.chat, "name", "llm"), findings=parsed["findings"])


def _tokens(text: str) -> int:
    return (len(text) + 3) // 4  # ~4 characters per token in English: a budget, not a count


def _csv(value: Any) -> str:
    return str(value).replace("|", "/").replace("\n", " ")


def community_prompt(graph: nx.Graph, ranked: Sequence[str], language: str, token_budget: int) -> str:
    """The report prompt: the community's entities (most connected first) and its strongest relations, as many
    as fit in `token_budget` tokens, entities given at most 60% of it."""
    template = PROMPTS["community_report"]
    budget = token_budget - _tokens(template)
    entity_lines = ["id | entity | type | description"]
    used = _tokens(entity_lines[0])
    for n, node in enumerate(ranked):
        attrs = graph.nodes[node]
        line = (f"{n} | {_csv(_name(graph, node))} | {_csv(attrs.get('type') or 'concept')} | "
                f"{_csv(_short(attrs.get('description'), PROMPT_DESCRIPTION_CHARS))}")
        if n > 0 and used + _tokens(line) > 0.6 * budget:
            break
        entity_lines.append(line)
        used += _tokens(line) + 1
    relation_lines = ["source | target | keywords | description | weight"]
    used += _tokens(relation_lines[0])
    for u, v, d in _inner_edges(graph, ranked):
        line = (f"{_csv(_name(graph, u))} | {_csv(_name(graph, v))} | {_csv(_short(d.get('keywords'), 80))} | "
                f"{_csv(_short(d.get('description'), PROMPT_DESCRIPTION_CHARS))} | {edge_weight(d.get('weight')):g}")
        if used + _tokens(line) > budget:
            break
        relation_lines.append(line)
        used += _tokens(line) + 1
    return template.format(language=language, entities="\n".join(entity_lines),
                           relations="\n".join(relation_lines))


def parse_report(text: str) -> dict[str, Any] | None:
    """{title, summary, rating, findings} from a reply, or None when it has no usable title and summary.
    Accepts code fences, chatter around the JSON, a rating written as text, findings as strings or objects."""
    data = read_json_object(text)
    if not isinstance(data, dict):
        return None
    title = " ".join(str(data.get("title") or "").split())
    summary = str(data.get("summary") or "").strip()
    if not title or not summary or len(title) > 300:
        return None
    return {"title": title, "summary": summary, "rating": _rating(data.get("rating")),
            "findings": _findings(data.get("findings"))}


def _rating(raw: Any) -> float | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, str):
        match = re.search(r"\d+(\.\d+)?", raw)
        raw = match.group() if match else None
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return None
    return min(max(value, 0.0), 10.0) if math.isfinite(value) else None


def _findings(raw: Any) -> list[str]:
    out = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict):
            head = " ".join(str(item.get("summary") or "").split())
            body = " ".join(str(item.get("explanation") or "").split())
            text = f"{head}: {body}" if head and body else head or body
        else:
            text = " ".join(str(item or "").split())
        if text:
            out.append(text)
    return out[:MAX_FINDINGS]


# ---------------------------------------------------------------------------------------------- benchmarks


def generate_graph(n_nodes: int, n_edges: int, seed: int = 0, community_size: int = 50,
                   inside: float = 0.9) -> nx.Graph:
    """A random graph with planted communities (blocks of `community_size` nodes; a share `inside` of the edges
    falls within a block), weighted 1-5, with the node and edge attributes the real graph has. For benchmarks."""
    rng = random.Random(seed)
    graph = nx.Graph()
    width = len(str(max(n_nodes - 1, 0)))
    keys = [f"e{i:0{width}d}" for i in range(n_nodes)]
    types = ("method", "dataset", "model", "task", "metric", "concept")
    for i, key in enumerate(keys):
        graph.add_node(key, name=f"Entity {i}", type=types[i % len(types)],
                       description=f"Entity {i} of planted community {i // community_size}.")
    if n_nodes < 2:
        return graph
    target = min(n_edges, n_nodes * (n_nodes - 1) // 2)
    count, attempts = 0, 0
    while count < target and attempts < 20 * target + 100:
        attempts += 1
        u = rng.randrange(n_nodes)
        if rng.random() < inside:
            block = u // community_size
            lo, hi = block * community_size, min((block + 1) * community_size, n_nodes)
            v = rng.randrange(lo, hi)
        else:
            v = rng.randrange(n_nodes)
        if u == v or graph.has_edge(keys[u], keys[v]):
            continue
        graph.add_edge(keys[u], keys[v], weight=float(rng.randint(1, 5)), keywords="related",
                       description=f"{keys[u]} relates to {keys[v]}.")
        count += 1
    return graph
