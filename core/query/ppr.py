"""Associative retrieval after HippoRAG 2 (Gutiérrez et al., 2025): personalised PageRank over passages and
entities, seeded with the question's entities and its closest passages.

    seeds    entities the low-level keywords match (entity vectors, one search per keyword; phrase nodes by
             name) and entities and phrases named in the top dense passages, each weighted by match strength
             × specificity (inverse passage frequency: an entity in three passages says more than one in three
             hundred); the top dense passages themselves (naive's ranking), at `passage_weight`
    graph    only the neighbourhood of the seeds: seed entities, their RELATED neighbours, the passages any of
             them is named in, and the seed passages; passage–entity edges for every mention inside it,
             entity–entity edges weighted by the relation's weight, and near-synonym edges by entity-vector
             similarity when QueryConfig.ppr_synonym_similarity is set (off: no gain on hotpot). Phrase nodes
             (every candidate phrase of the LLM-free extractor, terms or not: core.graph.mention_index) are
             entities without relations here: the bridge a two-hop question needs is often a name the display
             graph does not keep
    rank     personalised PageRank (igraph) with damping ~0.5, passages by their mass

A passage that shares no word with the question is reached through the entity it shares with a passage that
does (the bridge of a two-hop question): that is what naive, local and global cannot do.

Which chunk names which entity is not indexed by chunk in the store, so the entity ↔ passage incidence and the
RELATED adjacency are read once per graph version into memory (core.graph.mention_index); each query then builds
only its bounded neighbourhood into an igraph graph, a few hundred nodes.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import igraph

from core.graph.mention_index import is_phrase, mention_index
from core.graph.names import names_related
from core.graph.vectors import entity_vector_id
from core.query.records import RetrievedEntity, RetrievedRelation
from core.query.sources import ChunkSource, Probe, Proposal
from core.query.walks import keyword_entities, passage_entities
from core.schema.graph import RELATED


@dataclass(frozen=True)
class PPRParams:
    damping: float = 0.5  # HippoRAG 2's: half the mass returns to the seeds at each step, so walks stay short
    passage_weight: float = 0.05  # the dense passages' share of the reset vector, relative to entities (HippoRAG 2)
    passage_seeds: int = 20  # top dense passages seeded
    entity_passages: int = 5  # of those, the top ones whose named entities (and phrases) are seeded too
    per_keyword: int = 3  # entities matched per low-level keyword
    min_similarity: float = 0.5  # weaker keyword matches name another entity, not the one asked about
    neighbours: int = 10  # RELATED neighbours taken per seed entity, strongest first
    max_entity_passages: int = 60  # an entity named in more passages is too generic to expand through
    max_nodes: int = 3000  # the neighbourhood stops growing here: the walk stays a few milliseconds
    # The strongest relation's edge against a mention's 1: relation weights sum strengths over every chunk stating
    # them (often 5-20), and unscaled they would pull the walk off the passages into the entity layer.
    relation_weight: float = 0.5
    keyword_phrases: bool = True  # phrase nodes the keywords name by their exact key are seeds too
    # Near-synonym edges (HippoRAG 2's synonymy edges): the strongest seed entities are linked to the entities whose
    # vectors lie this close (cosine; 0: none), one vector search each, at the similarity × synonym_weight.
    # Entity vectors read the name, type and first words of the description, so two entities one sentence describes
    # lie close whatever their names: hence the names' test below.
    synonym_similarity: float = 0.0
    synonym_seeds: int = 5
    synonym_per_entity: int = 5
    synonym_weight: float = 1.0
    synonym_names: bool = True  # only between names that could name one thing (a shared word, initials)


DEFAULT = PPRParams()


def params_of(config) -> PPRParams:
    """The walk's parameters with the workspace's settings (QueryConfig: ppr_damping, ppr_passage_weight,
    seed_passages, ppr_synonym_similarity)."""
    return replace(DEFAULT, damping=config.ppr_damping, passage_weight=config.ppr_passage_weight,
                   entity_passages=config.seed_passages, synonym_similarity=config.ppr_synonym_similarity)


# ---------------------------------------------------------------------------------------------- the walk
def personalised_ranking(probe: Probe, p: PPRParams) -> tuple[list[tuple[str, float]],
                                                                          list[tuple[str, float]], list[str]]:
    """(passages, entities) by PageRank mass, best first, in scope; and the dense ranking it started from."""
    index = mention_index(probe.lib)
    dense = probe.dense().chunk_ids
    passage_seeds = {cid: p.passage_weight / (rank + 1) for rank, cid in enumerate(dense[:p.passage_seeds])}
    # Phrase nodes named in too many passages never reach the index (mention_index.MAX_PHRASE_PASSAGES).
    entity_seeds = passage_entities(dense, index, p.entity_passages)
    words = probe.keywords.low if probe.keywords else []
    for key, weight in keyword_entities(probe, index, words, p.per_keyword, p.min_similarity,
                                        p.keyword_phrases).items():
        entity_seeds[key] = max(entity_seeds.get(key, 0.0), weight)
    if not entity_seeds:  # nothing to walk from: the dense ranking is all there is
        return [(cid, 0.0) for cid in dense], [], dense

    allowed = probe.scope.allows_chunk
    entities = dict.fromkeys(sorted(entity_seeds, key=lambda k: -entity_seeds[k]))
    synonyms = synonym_pairs(probe, [k for k in entities if not is_phrase(k)][:p.synonym_seeds], index, p)
    for key in list(entities):
        for nbr, _ in index.neighbours.get(key, ())[:p.neighbours]:
            entities.setdefault(nbr)
    for _, other, _ in synonyms:
        entities.setdefault(other)
    passages = dict.fromkeys(c for c in passage_seeds if allowed(c))
    for key in entities:
        chunks = index.passages_of.get(key, ())
        if len(chunks) <= p.max_entity_passages or key in entity_seeds:
            passages.update(dict.fromkeys(c for c in chunks[:p.max_entity_passages] if allowed(c)))
        if len(entities) + len(passages) >= p.max_nodes:
            break

    names = list(entities) + list(passages)
    at = {name: i for i, name in enumerate(names)}
    edges: dict[tuple[int, int], float] = {}
    strongest = max((w for key in entities for _, w in index.neighbours.get(key, ())[:1]), default=1.0) or 1.0
    for key in entities:
        for nbr, weight in index.neighbours.get(key, ()):
            if nbr in entities:
                pair = (min(at[key], at[nbr]), max(at[key], at[nbr]))
                edges[pair] = max(p.relation_weight * weight / strongest, 1e-3)
    for key, other, similarity in synonyms:
        pair = (min(at[key], at[other]), max(at[key], at[other]))
        edges[pair] = max(edges.get(pair, 0.0), p.synonym_weight * similarity)
    for cid in passages:
        for key in index.entities_of.get(cid, ()):
            if key in entities:
                edges[(at[key], at[cid])] = 1.0
    graph = igraph.Graph(n=len(names), edges=list(edges), directed=False)
    reset = [0.0] * len(names)
    for key, weight in entity_seeds.items():
        if key in at:
            reset[at[key]] += weight
    for cid, weight in passage_seeds.items():
        if cid in at:
            # Entity seeds are idf-scaled (≈ 1-7): the passages' share is relative to the strongest entity's.
            reset[at[cid]] += weight * max(entity_seeds.values())
    mass = graph.personalized_pagerank(damping=p.damping, reset=reset,
                                       weights=list(edges.values()) if edges else None, directed=False)
    n_entities = len(entities)
    ranked_passages = sorted(((names[i], mass[i]) for i in range(n_entities, len(names))), key=lambda kv: -kv[1])
    ranked_entities = sorted(((names[i], mass[i]) for i in range(n_entities)), key=lambda kv: -kv[1])
    return ranked_passages, ranked_entities, dense


def synonym_pairs(probe: Probe, keys: list[str], index, p: PPRParams) -> list[tuple[str, str, float]]:
    """(seed, near-synonym, cosine) for each of these entities: the entities whose stored vectors lie at least
    `synonym_similarity` from its own. Searched per question for the seeds alone (a few vector searches), so
    nothing is stored at graph build and a new paper's entities take part at once."""
    if p.synonym_similarity <= 0 or not keys:
        return []
    vectors = probe.lib.entity_vectors.get_embeddings([entity_vector_id(k) for k in keys])
    pairs = []
    for key in keys:
        vector = vectors.get(entity_vector_id(key))
        if vector is None:
            continue
        for match in probe.lib.entity_vectors.query(vector, p.synonym_per_entity + 1):
            other = match.metadata.get("key")
            if (other and other != key and other in index.passages_of and match.score >= p.synonym_similarity
                    and (not p.synonym_names or names_related(match.metadata.get("name") or other, key))):
                pairs.append((key, other, float(match.score)))
    return pairs


def ppr_chunks(probe: Probe, p: PPRParams | None = None) -> Proposal:
    """The ppr chunk source: passages by PageRank mass; the most visited entities and the relations among them
    for the context."""
    passages, ranked_entities, dense = personalised_ranking(probe, p or params_of(probe.lib.settings.query))
    limit = probe.params.chunk_top_k * 2
    ids = [cid for cid, _ in passages[:limit]]
    taken = set(ids)
    ids += [cid for cid in dense if cid not in taken][:max(limit - len(ids), 0)]
    via = {cid: ["ppr"] for cid in ids}
    lib, top_k = probe.lib, probe.params.top_k
    top = [key for key, _ in ranked_entities if not is_phrase(key)][:top_k]
    nodes = lib.graph.get_nodes(top)
    score = dict(ranked_entities)
    entities = [RetrievedEntity(key=k, name=n.name, type=n.type, description=n.description, score=score[k],
                                source_chunks=[c for c in n.source_chunks if probe.scope.allows_chunk(c)])
                for k in top if (n := nodes.get(k)) is not None]
    names = {e.key: e.name for e in entities}
    relations = []
    for edge in lib.graph.edges_of(top):
        if edge.relation == RELATED and edge.source in names and edge.target in names:
            relations.append(RetrievedRelation(
                source=edge.source, target=edge.target, source_name=names[edge.source],
                target_name=names[edge.target], keywords=edge.keywords, description=edge.description,
                weight=edge.weight, score=score[edge.source] + score[edge.target],
                source_chunks=[c for c in edge.source_chunks if probe.scope.allows_chunk(c)]))
    relations.sort(key=lambda r: -r.score)
    return Proposal(ids, via, entities, relations[:top_k])


PPR = ChunkSource("ppr", ppr_chunks, graph=True)
