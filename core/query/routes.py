"""The route table: for each query mode, how it retrieves and what a workspace needs before it can run it.

The engine dispatches through ROUTES; the pages, the CLI and evaluation ask `available_modes` which modes to
offer. A new mode is one Mode member (core.schema.modes) and one Route here.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.library import Library
from core.models.llm.base import ChatModel
from core.query.citing import add_citing
from core.query.community_search import community_retrieve
from core.query.ppr import PPR
from core.query.records import Keywords, QueryParams, Routed
from core.query.retrieve import retrieve
from core.query.second_hop import SecondHopReranker
from core.query.sources import NAIVE, ChunkSource
from core.query.walks import GLOBAL, LOCAL
from core.schema.modes import Mode
from core.settings.config import QueryConfig

# (lib, question, params, *, keywords, llm, embed, reranker) -> what the route retrieved
RouteFn = Callable[..., Routed]


@dataclass(frozen=True)
class Route:
    mode: Mode
    run: RouteFn
    keywords: bool  # the question's keywords are extracted for it (one LLM call, or spaCy)
    needs_graph: bool  # retrieves from the knowledge graph: without one it finds nothing
    needs_reports: bool = False  # runs only once the graph's community reports exist
    # Offered only once the graph has nodes: without them it would quietly return naive's ranking under its name.
    needs_nodes: bool = False
    # Not picked by default where several modes run side by side (Compare, Evaluate, `eval`): community for its
    # LLM call per report, ppr until it has been measured on more than the hotpot bench.
    opt_in: bool = False
    # How much the route's own fused order still counts against the reranker's (core.query.rerank.with_mode_order).
    order_weight: float = 0.0


def fused(mode: Mode, *sources: ChunkSource, rerank: bool = True, order_weight: float = 0.0, second_hop: int = 0,
          citing: bool = False, **route) -> Route:
    """The route of a mode that runs these chunk sources and fuses their rankings, in this order. `rerank=False`:
    the fused order is final (the reranker orders by the question's words and window, which the second hop of a
    multi-hop question lacks); `order_weight`: the fused order still counts this much against the reranker's;
    `second_hop` > 0: the bridge of each of the reranker's top that many passages is among the passages returned
    (core.query.second_hop; only after a reranker); `citing`: a question about what cites a paper of the library
    gets the citing sentences' passages first (core.query.citing)."""
    def run(lib: Library, question: str, params: QueryParams, *, keywords: Keywords | None,
            llm: ChatModel | None, embed, reranker) -> Routed:
        ranker = reranker if rerank else None
        if ranker is not None and second_hop:
            ranker = SecondHopReranker(ranker, lib, second_hop, params.chunk_top_k)
        retrieval = retrieve(lib, question, keywords, params, sources, reranker=ranker, embed=embed,
                             order_weight=order_weight)
        if citing:
            add_citing(lib, question, params, retrieval, (embed or lib.embedder().embed_query)(question))
        return Routed(retrieval)

    graph = any(s.graph for s in sources)
    return Route(mode, run, keywords=graph, needs_graph=graph, order_weight=order_weight, **route)


ROUTES: dict[Mode, Route] = {route.mode: route for route in (
    fused(Mode.NAIVE, NAIVE, citing=True),
    fused(Mode.LOCAL, LOCAL),
    fused(Mode.GLOBAL, GLOBAL),
    fused(Mode.HYBRID, LOCAL, GLOBAL),
    # mix: naive, local and ppr, reranked, the three routes' round-robin order counting twice the reranker's: the
    # combination and weight that found most complete multi-hop evidence without losing the shared papers' first
    # passage (measured: docs/tuning.md, "mix"). A question about what cites a paper gets the citing sentences'
    # passages first (core.query.citing), in naive, mix and ppr.
    fused(Mode.MIX, NAIVE, LOCAL, PPR, order_weight=2.0, citing=True),
    # Reranked, then the second hop (core.query.second_hop): the bridge of each of the reranker's top two passages
    # (the candidate sharing with it the rarest name the question does not say) takes one of the last places of the
    # passages returned when the reranker put it lower; the reranker keeps the first places, which the shared
    # papers' answers need (measured, with what was tried instead: docs/tuning.md, "ppr").
    fused(Mode.PPR, PPR, needs_nodes=True, opt_in=True, second_hop=2, citing=True),
    Route(Mode.COMMUNITY, community_retrieve, keywords=False, needs_graph=True, needs_reports=True, opt_in=True),
)}


def route_of(mode: str) -> Route:
    """The route of a mode given by name or Mode; an unknown name raises ValueError listing the modes."""
    return ROUTES[Mode(mode)]


def unavailable_reason(lib: Library, mode: str) -> str:
    """Why this workspace cannot run the mode now; "" when it can."""
    route = route_of(mode)
    if route.needs_reports and not lib.graph_sources.has_community_reports():
        return (f"{route.mode} mode needs the graph's community reports and this workspace has none yet: they are "
                "built with the graph (or `python -m core graph communities`)")
    if route.needs_nodes and not lib.graph.has_nodes():
        return (f"{route.mode} mode walks the knowledge graph and this workspace's graph has no entities yet: build "
                "it (the graph stage after ingest, or `python -m core graph build`)")
    return ""


def check_available(lib: Library, modes: list[str]) -> list[Mode]:
    """The modes as Mode; ValueError for an unknown name or a mode this workspace cannot run now."""
    checked = [Mode(m) for m in modes]
    for mode in checked:
        if reason := unavailable_reason(lib, mode):
            raise ValueError(reason)
    return checked


def available_modes(lib: Library) -> list[Mode]:
    """The modes this workspace can run now, in Mode's order: what the pages, the CLI and evaluation offer."""
    return [mode for mode in Mode if not unavailable_reason(lib, mode)]


def default_modes(modes: list[Mode]) -> list[Mode]:
    """Of the modes offered, those picked before the user chooses, where several run side by side."""
    return [m for m in modes if not ROUTES[m].opt_in]


def default_mode(lib: Library, modes: list[Mode]) -> Mode:
    """The workspace's default mode when it is among those offered, else QueryConfig's own default."""
    wanted = Mode(lib.settings.query.mode)
    return wanted if wanted in modes else Mode(QueryConfig.mode)
