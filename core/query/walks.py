"""The graph walks of local and global mode, with LightRAG's meaning, made to find the second hop of a question.

- local: seed entities are those the low-level keywords name (entity vectors, one search per keyword) and those
  named in the top dense passages, each weighted by match strength × specificity (inverse passage frequency);
  optionally (QueryConfig.hop_neighbours, off by default: it lost two points on hotpot) one hop along each seed's
  strongest relations; passages are ranked by the weight of the seeds (and hops) they name, so a passage naming
  two of the question's entities, or the bridge entity of a dense passage, comes first; the dense passages fill
  what is left. Phrase nodes (core.graph.mention_index) count only when rare and named in a dense passage: the
  hop through a name said once, which the display graph does not keep; the keywords' exact phrases are left to
  ppr (measured: docs/tuning.md, "local").
- global: relation vectors searched with the high-level keywords → those relations → their endpoint entities →
  the source chunks of the relations that touch the question's entities (LightRAG's walk, with that filter: see
  global_chunks).
"""
from __future__ import annotations

from collections import defaultdict

from core.graph.mention_index import MentionIndex, is_phrase, mention_index, phrase_key
from core.library import Library
from core.query.records import RetrievedEntity, RetrievedRelation
from core.query.sources import ChunkSource, Probe, Proposal, Scope, keyword_text
from core.schema.graph import RELATED

# A keyword match below this similarity names another entity than the one asked about (MiniLM cosine).
MIN_SIMILARITY = 0.5
PER_KEYWORD = 3  # entities (local) or relations (global) matched per keyword
# What an entity a dense passage names weighs against one the question names (its similarity × specificity): the
# passage may name much besides what was asked.
PASSAGE_SHARE = 0.3
HOP_SHARE = 0.5  # a neighbour reached in one hop weighs this share of its seed (times the relation's strength)
RELATION_CHUNKS = 3  # global: passages taken per matched relation, in relation order
RELATION_SHARE = 0.5  # global: the share of its candidates relations may take
# global: passages proposed by relations that touch the question's entities, at most: more push the first
# passage out on the papers (measured: docs/tuning.md, "global").
ASKED_RELATION_PASSAGES = 3
MAX_ENTITY_PASSAGES = 60  # an entity named in more passages is too generic to lead anywhere: not expanded
# local: a phrase node of a dense passage counts only when this rare (in at most this share of the passages, and
# never more than RARE_PHRASE_PASSAGES). Passages are scored by the sum of their seeds, and phrases are many (about
# 20 a paragraph): common ones would rank passages by shared vocabulary, not by a bridge.
RARE_PHRASE_SHARE = 0.006
RARE_PHRASE_PASSAGES = 5
PHRASE_SHARE = 0.3  # and weighs this share of an entity named there: a bridge, not the passage's subject


def keyword_entities(probe: Probe, index: MentionIndex, words: list[str], per_keyword: int = PER_KEYWORD,
                     min_similarity: float = MIN_SIMILARITY, phrases: bool = True) -> dict[str, float]:
    """Each keyword's closest entities, by similarity × specificity (the best over keywords)."""
    words = list(dict.fromkeys(w for w in words if w.strip()))
    if not words:
        return {}
    if hasattr(probe.embed, "prefetch"):
        probe.embed.prefetch(words)
    seeds: dict[str, float] = {}
    # A word the keywords also give inside a longer one ("Park" of "South Park") names no phrase of its own: its
    # phrase node would be another park.
    parts = {p for w in words if " " in w for p in w.split()}
    found = probe.entity_matches(words, per_keyword)
    for word, matches in zip(words, found):
        # The entity of that very name first: an entity vector reads its type and description too, so even an
        # exact name can fall below the similarity floor (BooksCorpus against "BooksCorpus (dataset): …": 0.44).
        exact = " ".join(word.lower().split())
        # The phrase node of that name (core.graph.mention_index): a name the display graph does not keep.
        for key in (exact, phrase_key(word) if phrases and word not in parts else ""):
            if key in index.passages_of:
                seeds[key] = max(seeds.get(key, 0.0), index.idf(key))
        for match in matches:
            key = match.metadata.get("key")
            if key in index.passages_of and match.score >= min_similarity:
                seeds[key] = max(seeds.get(key, 0.0), match.score * index.idf(key))
    return seeds


def passage_entities(dense: list[str], index: MentionIndex, passages: int, share: float = 1.0) -> dict[str, float]:
    """Entities named in the top dense passages, by specificity × share, falling with the passage's rank."""
    entities: dict[str, float] = {}
    for rank, cid in enumerate(dense[:passages]):
        for key in index.entities_of.get(cid, ()):
            entities[key] = max(entities.get(key, 0.0), share * index.idf(key) / (rank + 1))
    return entities


def _retrieved_entities(lib: Library, weights: dict[str, float], top_k: int, scope: Scope,
                        nodes: dict | None = None) -> list[RetrievedEntity]:
    """The top entities by weight, as the context shows them; `nodes`: those already read (global's endpoints)."""
    top = sorted((k for k in weights if not is_phrase(k)), key=lambda k: -weights[k])[:top_k]
    nodes = {k: nodes[k] for k in top if k in nodes} if nodes is not None else lib.graph.get_nodes(top)
    degrees = lib.graph.degrees([k for k in top if k in nodes])
    return [RetrievedEntity(key=k, name=n.name, type=n.type, description=n.description, score=weights[k],
                            degree=degrees.get(k, 0),
                            source_chunks=[c for c in n.source_chunks if scope.allows_chunk(c)])
            for k in top if (n := nodes.get(k)) is not None and not n.is_paper]


def _relation(edge, names: dict[str, str], score: float, scope: Scope) -> RetrievedRelation:
    return RetrievedRelation(source=edge.source, target=edge.target, source_name=names.get(edge.source, edge.source),
                             target_name=names.get(edge.target, edge.target), keywords=edge.keywords,
                             description=edge.description, weight=edge.weight, score=score,
                             source_chunks=[c for c in edge.source_chunks if scope.allows_chunk(c)])


# ---------------------------------------------------------------------------------------------- local
def _fill_from_dense(probe: Probe, chunk_ids: list[str], via: dict[str, list[str]]) -> None:
    """Top the graph walk's passages up to QueryConfig.graph_candidates with the dense ones it did not reach."""
    room = max(probe.lib.settings.query.graph_candidates - len(chunk_ids), 0)
    for cid in probe.dense().chunk_ids[:room]:
        if cid not in via:
            chunk_ids.append(cid)
            via[cid] = ["vector"]


def local_chunks(probe: Probe) -> Proposal:
    lib, params, scope, q = probe.lib, probe.params, probe.scope, probe.lib.settings.query
    index = mention_index(lib)
    seeds = keyword_entities(probe, index, probe.keywords.low if probe.keywords else [], phrases=False)
    if q.seed_passages:
        rare = max(2, min(RARE_PHRASE_PASSAGES, int(index.n_passages * RARE_PHRASE_SHARE)))
        for key, weight in passage_entities(probe.dense().chunk_ids, index, q.seed_passages, PASSAGE_SHARE).items():
            if is_phrase(key):
                if len(index.passages_of[key]) > rare:
                    continue
                weight *= PHRASE_SHARE
            seeds[key] = max(seeds.get(key, 0.0), weight)
    seeds = {k: w for k, w in seeds.items() if any(scope.allows_chunk(c) for c in index.passages_of.get(k, ()))}
    # One hop along each seed's strongest relations: the bridge a dense passage names leads to the passage of
    # the second hop, which shares no word with the question.
    weights = dict(seeds)
    hops: set[tuple[str, str]] = set()
    for key, weight in sorted(seeds.items(), key=lambda kv: -kv[1])[:params.top_k]:
        if len(index.passages_of.get(key, ())) > MAX_ENTITY_PASSAGES:
            continue
        strongest = next(iter(index.neighbours.get(key, ())), ("", 1.0))[1] or 1.0
        for nbr, w in index.neighbours.get(key, ())[:q.hop_neighbours]:
            hop = HOP_SHARE * weight * min(w / strongest, 1.0) * index.idf(nbr) / max(index.idf(key), 1e-6)
            if hop > weights.get(nbr, 0.0):
                weights[nbr] = hop
            hops.add((key, nbr))
    # Passages by the weight of the seeds and hops they name: the more of the question's entities, the better.
    score: dict[str, float] = defaultdict(float)
    for key, weight in weights.items():
        chunks = index.passages_of.get(key, ())
        if len(chunks) > MAX_ENTITY_PASSAGES and key not in seeds:
            continue
        for cid in chunks[:MAX_ENTITY_PASSAGES]:
            if scope.allows_chunk(cid):
                score[cid] += weight
    chunk_ids = sorted(score, key=lambda c: -score[c])[:q.graph_candidates]
    via = {cid: ["entity"] for cid in chunk_ids}
    # The dense passages the seeds came from fill what the walk left (a passage naming no entity, a small graph).
    _fill_from_dense(probe, chunk_ids, via)
    entities = _retrieved_entities(lib, weights, params.top_k, scope)
    kept = {e.key: e.name for e in entities}
    edges = [e for e in lib.graph.edges_of(list(kept)) if e.relation == RELATED and e.source in kept
             and e.target in kept]
    relations = [_relation(e, kept, weights[e.source] + weights[e.target], scope) for e in edges]
    relations = sorted((r for r in relations if r.source_chunks), key=lambda r: -r.score)[:params.top_k]
    return Proposal(chunk_ids, via, entities, relations)


# ---------------------------------------------------------------------------------------------- global
def global_chunks(probe: Probe) -> Proposal:
    """LightRAG's global walk: one search of the relation vectors with the high-level keywords together. Searched
    one keyword at a time, or with relation-like text (a name and the relation words around it), it found fewer
    evidence passages on hotpot (see bench/query.py): the LLM-free graph's relations read "A — B: verbs", and the
    question's own wording matches them best.

    Only relations that touch an entity the question's keywords name (as local seeds them) propose passages, those
    between two such entities first, at most ASKED_RELATION_PASSAGES of them: a relation that merely reads like the
    question names other things, and the other relations' passages pushed evidence out (docs/tuning.md, "global").
    The context keeps every matched relation, those touching the question's entities first."""
    lib, params, scope = probe.lib, probe.params, probe.scope
    words = probe.keywords.high if probe.keywords else []
    if not words:
        return Proposal([], {})
    overfetch = 1 if not params.doc_ids else 4
    matches = lib.relation_vectors.query(probe.embed(keyword_text(words)), params.top_k * overfetch)
    pairs = [(m.metadata.get("source"), m.metadata.get("target")) for m in matches
             if m.metadata.get("source") and m.metadata.get("target")]
    scores = {(m.metadata.get("source"), m.metadata.get("target")): m.score for m in matches}
    edges = lib.graph.get_edges(pairs)
    endpoint_keys = list(dict.fromkeys(k for p in pairs if p in edges for k in p))
    nodes = lib.graph.get_nodes(endpoint_keys)
    names = {k: n.name for k, n in nodes.items()}
    relations = []
    for pair in pairs:
        edge = edges.get(pair)
        relation = _relation(edge, names, scores.get(pair, 0.0), scope) if edge is not None else None
        if relation is not None and relation.source_chunks:
            relations.append(relation)
        if len(relations) == params.top_k:
            break
    asked = keyword_entities(probe, mention_index(lib), probe.keywords.low if probe.keywords else [], phrases=False)
    # Stable: within each tier the relations keep their similarity order.
    relations.sort(key=lambda r: -((r.source in asked) + (r.target in asked)))
    chunk_ids: list[str] = []
    for r in relations:
        if r.source in asked or r.target in asked:
            chunk_ids.extend(c for c in r.source_chunks[:RELATION_CHUNKS] if c not in chunk_ids)
    # Relations take at most half of the candidates, the dense passages the rest: a graph whose relations miss the
    # question would otherwise fill the candidates with unrelated passages (docs/tuning.md, "global").
    chunk_ids = chunk_ids[:min(ASKED_RELATION_PASSAGES,
                               max(1, int(lib.settings.query.graph_candidates * RELATION_SHARE)))]
    via = {cid: ["relation"] for cid in chunk_ids}
    # As in local: the dense passages fill what the relations left.
    _fill_from_dense(probe, chunk_ids, via)
    weights = {k: 0.0 for r in relations for k in r.pair}
    order = {k: i for i, k in enumerate(weights)}
    entities = sorted(_retrieved_entities(lib, weights, len(weights), scope, nodes), key=lambda e: order[e.key])
    return Proposal(chunk_ids, via, entities, relations)


LOCAL = ChunkSource("local", local_chunks, graph=True)
# global searches the relations with the high-level keywords together, and seeds the question's entities as local.
GLOBAL = ChunkSource("global", global_chunks, graph=True,
                     queries=lambda keywords: [keyword_text(keywords.high), *keywords.low] if keywords.high else [])
