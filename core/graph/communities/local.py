"""Communities recomputed in part: Leiden over the communities a change touched, every other one kept as it is.

Why: a paper added to a thousand touches a handful of communities. Leiden over the whole graph on every add reads
every node and edge, renumbers every community (the explorer's colours and "community 12" in yesterday's answer
change meaning) and, with an LLM, writes every report again. A researcher expects the new paper's entities to
join communities at once (community search and the explorer see them) and the rest to stay put, so the write path
recomputes only what the change touched; deferring the refresh instead would leave the new entities out of
community search until some later run, which is the surprise we want to avoid.

The region: every entity changed since the last refresh (new, merged again, or at the end of a new or changed
relation) and every member of the communities they were in. Over the region's nodes Leiden optimises the *whole
graph's* modularity: the Constant Potts Model with each node weighted by its weighted degree in the whole graph
and resolution γ / 2m (m: the whole graph's total edge weight) is modularity (igraph computes modularity the same
way), restricted to these nodes. It starts from the old membership (new entities alone), so communities move
only where the change makes them.

What it is not: a full recompute. Entities outside the region keep their community, and a region community
cannot absorb an outside one (GraphRAG's incremental update is coarser: it clusters the new documents' graph alone
and appends its communities to the old ones). The drift is bounded (core.graph.communities.index): a
full Leiden runs when the entities changed since the last full run exceed FULL_AFTER of the graph and
MIN_FULL_AFTER (so its cost is amortised over the adds, like a growing array's copies), when an entity was
deleted, and on request.
tests/pipeline/test_communities_incremental.py measures the gap to a full recompute's modularity.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import networkx as nx

from core.graph.communities.detect import LEIDEN_ITERATIONS, edge_weight, seeded_igraph

FULL_AFTER = 0.25  # a full Leiden once this share of the entities changed since the last one,
MIN_FULL_AFTER = 200  # and at least this many: a small graph would otherwise be recomputed in full every few papers
LARGE_REGION = 0.5  # a region this share of the graph or more: recomputing all of it costs about the same


def refine_region(graph: nx.Graph, strength: dict[str, float], total_weight: float, initial: dict[str, int | None],
                  resolution: float = 1.0, seed: int = 42) -> list[list[str]]:
    """The region's communities (member keys sorted, largest community first), maximising the whole graph's
    modularity: `strength` is each node's weighted degree in the whole graph, `total_weight` the whole graph's
    total edge weight, `initial` the community each node had (None: a new entity, starting alone)."""
    import igraph

    nodes = sorted(graph.nodes, key=str)
    if not nodes:
        return []
    if total_weight <= 0:
        return [[n] for n in nodes]
    index = {node: i for i, node in enumerate(nodes)}
    edges = sorted((*sorted((index[u], index[v])), edge_weight(d.get("weight")))
                   for u, v, d in graph.edges(data=True) if u != v)
    labels: dict[tuple, int] = {}
    start = [labels.setdefault(("old", initial[n]) if initial.get(n) is not None else ("new", n), len(labels))
             for n in nodes]
    g = igraph.Graph(n=len(nodes), edges=[(a, b) for a, b, _ in edges], directed=False)
    g.es["weight"] = [w for _, _, w in edges]
    with seeded_igraph(seed):
        membership = g.community_leiden(objective_function="CPM", weights="weight",
                                        node_weights=[strength.get(n, 0.0) for n in nodes],
                                        resolution=resolution / (2 * total_weight), initial_membership=start,
                                        n_iterations=LEIDEN_ITERATIONS).membership
    groups: dict[int, list[str]] = {}
    for node, community in zip(nodes, membership):
        groups.setdefault(community, []).append(node)
    return sorted(groups.values(), key=lambda members: (-len(members), str(members[0])))


def assign_ids(groups: list[list[str]], old: dict[str, int | None], freed: Iterable[int],
               next_id: int) -> tuple[dict[str, int], int]:
    """Community ids for the region's new communities: each (largest first) keeps the freed id most of its members
    had, if no larger one took it; the others get new ids from `next_id`. Returns (key → id, the next free id)."""
    freed = set(freed)
    taken: set[int] = set()
    out: dict[str, int] = {}
    for members in groups:
        votes = Counter(c for m in members if (c := old.get(m)) in freed and c not in taken)
        if votes:
            cid = min(votes, key=lambda c: (-votes[c], c))
        else:
            cid, next_id = next_id, next_id + 1
        taken.add(cid)
        out.update(dict.fromkeys(members, cid))
    return out, next_id


def strengths(graph: nx.Graph) -> dict[str, float]:
    """Each node's weighted degree (self-loops left out, weights as Leiden reads them)."""
    out = dict.fromkeys(graph, 0.0)
    for u, v, d in graph.edges(data=True):
        if u != v:
            w = edge_weight(d.get("weight"))
            out[u] += w
            out[v] += w
    return out
