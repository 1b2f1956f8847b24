"""The graph index: what the explorer's filters need of the whole graph, in memory.

Filtering reads a compact in-memory index of the graph (names, types, papers, communities, years, adjacency and
weights), loaded once per graph version: every filter change is then a pass over dicts, not over the store.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

from core.graph.merge import normalize_key
from core.library import Library
from core.schema.graph import MENTIONED_IN, PAPER_PREFIX

FUZZY_CUTOFF = 80  # rapidfuzz ratio, 0-100: typos and word-order changes pass, unrelated names do not
FUZZY_PARTIAL_CUTOFF = 88
SEARCH_LIMIT = 200


@dataclass(frozen=True)
class IndexNode:
    key: str
    name: str
    type: str
    doc_ids: tuple[str, ...]
    community: int | None
    years: tuple[int, ...]  # publication years of the papers it comes from (those that state one)

    @property
    def is_paper(self) -> bool:
        return self.key.startswith(PAPER_PREFIX)


@dataclass
class GraphIndex:
    """What filtering needs of the whole graph, in memory: ~1 KB per node with its edges."""

    nodes: dict[str, IndexNode]
    related: dict[str, dict[str, float]]  # entity → neighbour → weight (RELATED, both directions)
    mentions: dict[str, dict[str, float]]  # entity ↔ paper node → weight (MENTIONED_IN..., both directions)
    aliases: dict[str, str]  # alias key → entity key (from merges and renames)
    paper_titles: dict[str, str]  # doc id → title
    paper_relations: dict[tuple[str, str], str] = field(default_factory=dict)  # edges to papers not MENTIONED_IN
    version: tuple = ()
    _names: list[str] = field(default_factory=list, repr=False)
    _name_keys: list[str] = field(default_factory=list, repr=False)

    def degree(self, key: str) -> int:
        """Relations of an entity; mentions of a paper node."""
        return len(self.mentions.get(key, ())) if key.startswith(PAPER_PREFIX) else len(self.related.get(key, ()))

    @property
    def types(self) -> list[str]:
        return sorted({n.type for n in self.nodes.values() if not n.is_paper})

    @property
    def communities(self) -> list[int]:
        return sorted({n.community for n in self.nodes.values() if n.community is not None})

    @property
    def years(self) -> list[int]:
        return sorted({y for n in self.nodes.values() for y in n.years})

    def entity_count(self) -> int:
        return sum(not n.is_paper for n in self.nodes.values())

    def search(self, query: str, limit: int = SEARCH_LIMIT) -> list[tuple[str, float]]:
        """Entities whose name or key, or an alias of theirs, matches `query`: exact, then contained, then fuzzy
        (typos, word order). Best first, as (key, score 0-100)."""
        from rapidfuzz import fuzz, process

        text = " ".join(str(query or "").split())
        wanted = normalize_key(text)
        if not wanted:
            return []
        scores: dict[str, float] = {}

        def hit(key: str, score: float) -> None:
            if key in self.nodes and not self.nodes[key].is_paper and score > scores.get(key, -1):
                scores[key] = score

        hit(wanted, 100.0)
        hit(self.aliases.get(wanted, ""), 99.0)
        for alias, key in self.aliases.items():
            if wanted in alias:
                hit(key, 90.0 - min(len(alias) - len(wanted), 30) / 10)
        if not self._name_keys:
            entities = [n for n in self.nodes.values() if not n.is_paper]
            self._name_keys = [n.key for n in entities]
            self._names = [n.name.casefold() for n in entities]
        folded = text.casefold()
        for key, name in zip(self._name_keys, self._names):
            if wanted in key or folded in name:
                hit(key, 95.0 - min(len(key) - len(wanted), 40) / 8)
        # Misspellings and word order over whole keys; a misspelt word inside a longer key only when that key is
        # longer than the query (partial matching would otherwise let "for" match "transformr").
        for scorer in (fuzz.ratio, fuzz.token_sort_ratio):
            for _, score, i in process.extract(wanted, self._name_keys, scorer=scorer, limit=limit,
                                               score_cutoff=FUZZY_CUTOFF):
                hit(self._name_keys[i], min(float(score), 89.0))
        for _, score, i in process.extract(wanted, self._name_keys, scorer=fuzz.partial_ratio, limit=limit,
                                           score_cutoff=FUZZY_PARTIAL_CUTOFF):
            if len(self._name_keys[i]) > len(wanted):
                hit(self._name_keys[i], min(float(score), 89.0) - 10)
        best = sorted(scores.items(), key=lambda kv: (-kv[1], self.degree(kv[0]) * -1, kv[0]))
        return best[:limit]


_cache_lock = threading.Lock()
_cache: dict[str, GraphIndex] = {}
_CACHED_WORKSPACES = 4


def graph_version(lib: Library) -> tuple:
    """Changes whenever what the explorer shows may have: contributions, edits, communities, a rebuild."""
    dirty_nodes, dirty_edges = lib.graph_sources.dirty()
    return (lib.graph_sources.meta("version", "0"), lib.graph_sources.meta("communities_version"),
            lib.graph.counts(), len(dirty_nodes) + len(dirty_edges))


def load_index(lib: Library) -> GraphIndex:
    """The index of the graph as it is now (cached per workspace until the graph changes)."""
    version = graph_version(lib)
    where = str(lib.workspace.db_path)
    with _cache_lock:
        cached = _cache.get(where)
        if cached is not None and cached.version == version:
            return cached
    index = build_index(lib)
    index.version = version
    with _cache_lock:
        _cache.pop(where, None)
        _cache[where] = index
        while len(_cache) > _CACHED_WORKSPACES:  # the oldest first: dicts keep insertion order
            _cache.pop(next(iter(_cache)))
    return index


def build_index(lib: Library) -> GraphIndex:
    papers = lib.graph_sources.papers()
    year_of = {doc_id: p.year for doc_id, p in papers.items() if p.year}
    nodes: dict[str, IndexNode] = {}
    for n in lib.graph.all_nodes():
        nodes[n.key] = IndexNode(key=n.key, name=n.name, type=n.type, doc_ids=tuple(n.doc_ids),
                                 community=n.community,
                                 years=tuple(sorted({year_of[d] for d in n.doc_ids if d in year_of})))
    related: dict[str, dict[str, float]] = {}
    mentions: dict[str, dict[str, float]] = {}
    paper_relations: dict[tuple[str, str], str] = {}
    for source, target, relation, weight in lib.graph.edge_outline():
        # Any edge to a paper node (MENTIONED_IN, a table's BELONGS_TO) is provenance, not a relation between
        # entities: it is drawn only with the paper nodes and never walked by neighbourhoods or paths.
        to_paper = target.startswith(PAPER_PREFIX) or source.startswith(PAPER_PREFIX)
        table = mentions if to_paper else related
        table.setdefault(source, {})[target] = weight
        table.setdefault(target, {})[source] = weight
        if to_paper and relation != MENTIONED_IN:
            paper_relations[(source, target)] = relation
    return GraphIndex(nodes=nodes, related=related, mentions=mentions, aliases=lib.graph_sources.aliases(),
                      paper_titles={d: p.title for d, p in papers.items()}, paper_relations=paper_relations)
