"""The graph stage of a paper: extract its chunks (resumable), commit its contributions, rebuild what changed.

1. extract_document: every chunk not yet extracted by the current extractor (or whose text changed) goes
   through the extractor; each result is stored as it arrives, so a killed run resumes where it stopped and
   an LLM is never asked twice (its replies are also cached by prompt hash).
2. commit_document: the paper's contributions (and the phrases its chunks mention, for retrieval only) replace
   its old ones and everything they touch is marked dirty, in one transaction.
3. rebuild_dirty: each dirty node and edge is merged again from all its contributions, written to the graph
   store in one batch, its vector updated, and only then unmarked. Repeating it after a crash is harmless.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from core.graph.lock import graph_lock
from core.graph.merge import Summarizer, mention_edge, merge_entity, merge_relation, normalize_key
from core.graph.papers import bibliography, publication_year
from core.graph.vectors import entity_vector_id as entity_vector_id  # re-exported: callers import it here
from core.graph.vectors import relation_vector_id as relation_vector_id
from core.graph.vectors import sync_vectors
from core.library import Library
from core.pipeline.graph.media_entities import paper_edge, with_media_entity
from core.pipeline.media.describe import describe_document_media
from core.pipeline.references.resolve import sync_citation_edges
from core.schema.graph import (
    PAPER_PREFIX,
    RELATED,
    ChunkExtraction,
    EntitySource,
    Extractor,
    GraphEdge,
    GraphNode,
    PaperRecord,
    RelationSource,
    text_sha,
)
from core.schema.overrides import GraphOverrides
from core.schema.records import Chunk, ContentItem, GraphStatus
from core.text.tokens import approx_tokens

log = logging.getLogger(__name__)

GraphProgress = Callable[[str, float], None]  # detail, fraction of the graph stage done


class GraphError(RuntimeError):
    pass


class Interrupted(Exception):
    """The worker was asked to stop; the chunks done so far are kept and the next run resumes."""


@dataclass
class ExtractOutcome:
    extractor: str
    chunks: int
    extracted_now: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0


def outcome_status(paper: PaperRecord, outcome: ExtractOutcome, error: str) -> tuple[GraphStatus, str]:
    """A committed paper's graph status and message: failed only when no chunk could be extracted; `error` names
    the cause when the extractor gave none."""
    message = f"{paper.entity_count} entities, {paper.relation_count} relations ({paper.extractor})"
    status = GraphStatus.DONE
    if outcome.failed:
        message += (f"; {outcome.failed} of {outcome.chunks} chunks could not be extracted "
                    f"({outcome.errors[0] if outcome.errors else error}): retry the graph to redo them")
        status = GraphStatus.FAILED if outcome.failed == outcome.chunks else GraphStatus.DONE
    if paper.dropped:
        message += f"; {paper.dropped} malformed records dropped"
    return status, message[:2000]


def current_extractor(lib: Library) -> Extractor:
    config = lib.settings.graph
    chat = lib.chat_model()
    if config.extractor == "llm" or (config.extractor == "auto" and chat is not None):
        if chat is None:
            raise GraphError("the graph extractor is set to 'llm' but no LLM is configured (Settings → llm)")
        from core.graph.extract.llm.extract import LLMExtractor

        return LLMExtractor(chat, config, concurrency=lib.settings.llm.concurrency,
                            json_mode=chat.name.startswith("embedded"), venue_of=lambda doc_id: _venue(lib, doc_id))
    from core.content.pages import load_items
    from core.graph.extract.spacy.extract import SpacyExtractor

    # The parsed items say which paragraphs are a title, a byline or references: no entities from those.
    return SpacyExtractor(config, items_of=lambda doc_id: load_items(lib, doc_id),
                          venue_of=lambda doc_id: _venue(lib, doc_id))


def _venue(lib: Library, doc_id: str) -> str:
    """A paper's venue from its metadata (the field of its graph depends on it, core/graph/fields.py)."""
    record = lib.metadata.get(doc_id)
    return record.venue if record else ""


def extract_document(lib: Library, doc_id: str, extractor: Extractor, progress: GraphProgress | None = None,
                     stop: threading.Event | None = None) -> ExtractOutcome:
    chunks, todo = chunks_to_extract(lib, doc_id, extractor, progress, stop)
    outcome = ExtractOutcome(extractor=extractor.name, chunks=len(chunks))
    by_id = {c.id: c for c in todo}
    started = time.perf_counter()
    finished = len(chunks) - len(todo)
    if progress:
        progress(f"extracting entities: {finished}/{len(chunks)} chunks", finished / max(len(chunks), 1))
    for extraction in extractor.extract(todo):
        chunk = by_id[extraction.chunk_id]
        extraction = with_media_entity(lib, chunk, extraction)
        if extraction.failed:
            outcome.failed += 1
            outcome.errors.extend(extraction.errors[:1])
        else:
            lib.graph_sources.put_extraction(doc_id, chunk.index, text_sha(chunk.text), extraction)
            outcome.extracted_now += 1
        finished += 1
        if progress:
            elapsed = time.perf_counter() - started
            done_now = outcome.extracted_now + outcome.failed
            left = elapsed / done_now * (len(chunks) - finished) if done_now else 0
            eta = f" (about {_duration(left)} left)" if left >= 2 else ""
            progress(f"extracting entities: {finished}/{len(chunks)} chunks{eta}", finished / max(len(chunks), 1))
        if stop is not None and stop.is_set():
            raise Interrupted()
    outcome.seconds = time.perf_counter() - started
    return outcome


def chunks_to_extract(lib: Library, doc_id: str, extractor: Extractor, progress: GraphProgress | None = None,
                      stop: threading.Event | None = None) -> tuple[list[Chunk], list[Chunk]]:
    """A paper's chunks, and those the extractor has not read yet (or whose text changed since), after a VLM
    describes its tables and figures (so extraction reads its descriptions)."""
    if describe_document_media(lib, doc_id, progress, stop).interrupted:
        raise Interrupted()
    chunks = lib.chunks.by_doc(doc_id)
    lib.graph_sources.forget_extractions(doc_id, keep_chunk_ids=[c.id for c in chunks])
    done = lib.graph_sources.extracted(doc_id, extractor.name)
    return chunks, [c for c in chunks if done.get(c.id) != text_sha(c.text)]


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def _chunk_sources(doc_id: str, ord_: int, extraction: ChunkExtraction, aliases: dict[str, str]
                   ) -> tuple[list[EntitySource], list[RelationSource]]:
    def key_of(name: str) -> str:
        key = normalize_key(name)
        return aliases.get(key, key)

    entities: dict[str, EntitySource] = {}
    for e in extraction.entities:
        key = key_of(e.name)
        if not key:
            continue
        known = entities.get(key)
        if known is None:
            entities[key] = EntitySource(key=key, doc_id=doc_id, chunk_id=extraction.chunk_id, ord=ord_,
                                         name=e.name.strip(), type=e.type or "concept",
                                         description=e.description.strip(), extractor=extraction.extractor)
        else:  # two spellings of one entity in one chunk: one contribution
            if known.type == "concept" and e.type:
                known.type = e.type
            if e.description.strip() and e.description.strip() not in known.description:
                known.description = f"{known.description}\n{e.description.strip()}".strip()
    relations: dict[tuple[str, str], RelationSource] = {}
    for r in extraction.relations:
        a, b = key_of(r.source), key_of(r.target)
        if not a or not b or a == b:
            continue
        for key, name in ((a, r.source), (b, r.target)):
            if key not in entities:  # an edge never points at a node with no contribution of its own
                entities[key] = EntitySource(key=key, doc_id=doc_id, chunk_id=extraction.chunk_id, ord=ord_,
                                             name=name.strip(), type="concept", description=r.description.strip(),
                                             extractor=extraction.extractor)
        lo, hi = sorted((a, b))
        known_rel = relations.get((lo, hi))
        if known_rel is None:
            relations[(lo, hi)] = RelationSource(source=lo, target=hi, doc_id=doc_id, chunk_id=extraction.chunk_id,
                                                 ord=ord_, keywords=r.keywords, description=r.description.strip(),
                                                 strength=float(r.strength), extractor=extraction.extractor)
        else:
            known_rel.strength += float(r.strength)
            if r.description.strip() and r.description.strip() not in known_rel.description:
                known_rel.description = f"{known_rel.description}\n{r.description.strip()}".strip()
    return list(entities.values()), list(relations.values())


def commit_document(lib: Library, doc_id: str, title: str, items: list[ContentItem], outcome: ExtractOutcome,
                    timings: dict[str, float] | None = None) -> PaperRecord:
    """Replace the paper's contributions with what its stored extractions say, in one transaction."""
    aliases = lib.graph_sources.aliases()
    entities: list[EntitySource] = []
    relations: list[RelationSource] = []
    phrases: list[tuple[str, str]] = []  # (chunk id, phrase key): retrieval's phrase layer, never shown
    dropped = llm_calls = 0
    extractors: set[str] = set()
    for ord_, extraction in lib.graph_sources.extractions(doc_id):
        ents, rels = _chunk_sources(doc_id, ord_, extraction, aliases)
        entities += ents
        relations += rels
        # In the merge's key space (normalize_key and merge aliases), as entity keys: retrieval drops a chunk's
        # phrase that is one of its entities, and matches the question's keywords the same way.
        phrases += [(extraction.chunk_id, aliases.get(k, k)) for p in extraction.phrases if (k := normalize_key(p))]
        dropped += extraction.dropped
        llm_calls += extraction.llm_calls
        extractors.add(extraction.extractor)
    paper = PaperRecord(doc_id=doc_id, title=title, year=publication_year(items),
                        extractor=", ".join(sorted(extractors)) or outcome.extractor,
                        entity_count=len({e.key for e in entities}),
                        relation_count=len({(r.source, r.target) for r in relations}), dropped=dropped,
                        failed_chunks=outcome.failed, llm_calls=llm_calls, timings=dict(timings or {}))
    lib.graph_sources.replace_doc(doc_id, entities, relations, paper, bibliography(doc_id, items), phrases)
    return paper


def remove_document(lib: Library, doc_id: str) -> None:
    """Take a paper's contributions out of the graph; nodes and edges left without a source disappear. Under the
    graph lock: a worker committing this paper finishes first, or finds it gone (core.pipeline.graph.stage)."""
    with graph_lock(lib):
        lib.graph_sources.replace_doc(doc_id, [], [], None)
        lib.graph_sources.forget_extractions(doc_id)
        rebuild_dirty(lib)


def clear_graph(lib: Library, keep_extractions: bool = False) -> None:
    """Empty the graph, its provenance and its vectors; ready papers go back to graph-pending. With
    `keep_extractions` the rebuild reuses every chunk's stored extraction (no extractor, no LLM call)."""
    lib.graph_sources.clear(keep_extractions)
    lib.graph.clear()
    for store in (lib.entity_vectors, lib.relation_vectors):
        store.delete(store.all_ids())
    for doc in lib.documents.ready_papers():
        lib.documents.set_graph_status(doc.id, GraphStatus.PENDING, detail="queued")


def llm_summarizer(lib: Library) -> Summarizer | None:
    chat = lib.chat_model()
    if chat is None:
        return None
    from core.models.llm.base import LLMError
    from core.prompts import PROMPTS

    config = lib.settings.graph

    def summarize(what: str, name: str, descriptions: list[str]) -> str:
        shown, used = [], 0
        for d in descriptions:  # a hub entity can have thousands of passages: the first ones, within budget
            used += approx_tokens(d)
            if shown and used > 3000:
                break
            shown.append(f"- {d}")
        prompt = PROMPTS["summarize_descriptions"].format(
            what=what, name=name, language=config.language, max_words=int(config.description_token_budget * 0.6),
            descriptions="\n".join(shown))
        try:
            return chat.chat([{"role": "user", "content": prompt}], purpose="summarise",
                             max_tokens=config.description_token_budget * 2).text
        except LLMError as exc:
            log.warning("description summary for %r failed, keeping the joined text: %s", name, exc)
            return ""

    return summarize


@dataclass
class RebuildStats:
    nodes_upserted: int = 0
    nodes_deleted: int = 0
    edges_upserted: int = 0
    edges_deleted: int = 0
    merge_s: float = 0.0
    store_s: float = 0.0
    vectors_s: float = 0.0  # reading, embedding and writing entity/relation vectors
    embed_s: float = 0.0  # of which computing embeddings


_rebuilding = threading.local()
_MAX_ROUNDS = 5


def rebuild_dirty(lib: Library, progress: GraphProgress | None = None) -> RebuildStats:
    """Merge every dirty node and edge again, until nothing is dirty. One rebuild at a time (graph_lock); one
    asked for while this thread is rebuilding (a delete from a progress callback) returns at once, and the
    rebuild under way does its part in its next round: a mark made after a round read the sources stays."""
    total = RebuildStats()
    if getattr(_rebuilding, "active", False):
        return total
    with graph_lock(lib):
        _rebuilding.active = True
        try:
            for _ in range(_MAX_ROUNDS):
                upto = int(lib.graph_sources.meta("version", "0") or 0)  # read before the marks and sources
                stats = _rebuild_once(lib, progress, upto)
                for name, value in vars(stats).items():
                    setattr(total, name, getattr(total, name) + value)
                if not any(lib.graph_sources.dirty()):
                    break
        finally:
            _rebuilding.active = False
    return total


def _rebuild_once(lib: Library, progress: GraphProgress | None, upto: int) -> RebuildStats:
    stats = RebuildStats()
    dirty_nodes, dirty_edges = lib.graph_sources.dirty()
    if not dirty_nodes and not dirty_edges:
        return stats
    t = time.perf_counter()
    if progress:
        progress(f"merging {len(dirty_nodes)} nodes and {len(dirty_edges)} edges", 0.0)
    summarize = llm_summarizer(lib)
    budget = lib.settings.graph.description_token_budget
    paper_ids = {k[len(PAPER_PREFIX):] for k in dirty_nodes if k.startswith(PAPER_PREFIX)}
    paper_ids |= {p[1][len(PAPER_PREFIX):] for p in dirty_edges if p[1].startswith(PAPER_PREFIX)}
    papers = lib.graph_sources.papers(paper_ids)  # those this round touches: a read of all grew with the collection
    existing = lib.graph.get_nodes(dirty_nodes)
    overrides = GraphOverrides.of(lib.graph_sources.overrides())  # user edits win over what papers say

    upsert_nodes: dict[str, GraphNode] = {}
    delete_nodes: list[str] = []
    entity_keys = [k for k in dirty_nodes if not k.startswith(PAPER_PREFIX)]
    sources = lib.graph_sources.entity_sources(entity_keys)
    for key in entity_keys:
        if sources.get(key) and not overrides.node_deleted(key):
            node = overrides.apply(merge_entity(key, sources[key], budget, summarize))
            node.community = existing[key].community if key in existing else None
            upsert_nodes[key] = node
        elif key in existing:
            delete_nodes.append(key)
    for key in (k for k in dirty_nodes if k.startswith(PAPER_PREFIX)):
        paper = papers.get(key[len(PAPER_PREFIX):])
        if paper:
            upsert_nodes[key] = GraphNode(key=key, name=paper.title, type="paper",
                                          description=paper.title + (f" ({paper.year})" if paper.year else ""),
                                          doc_ids=[paper.doc_id], extractors=paper.extractor.split(", "),
                                          year=paper.year)
        elif key in existing:
            delete_nodes.append(key)

    # An edge is kept only if both its ends exist after this batch.
    deleted = set(delete_nodes)
    outside = {k for pair in dirty_edges for k in pair} - set(upsert_nodes) - deleted
    alive = set(upsert_nodes) | set(lib.graph.get_nodes(outside))
    names = {k: n.name for k, n in upsert_nodes.items()}
    related = [p for p in dirty_edges if not p[1].startswith(PAPER_PREFIX)]
    mentions = [p for p in dirty_edges if p[1].startswith(PAPER_PREFIX)]
    upsert_edges: list[GraphEdge] = []
    drop_edges: list[tuple[str, str]] = []
    rel_sources = lib.graph_sources.relation_sources(related)
    missing_names = {k for p in related for k in p if k not in names and k in alive}
    names.update({k: n.name for k, n in lib.graph.get_nodes(missing_names).items()})
    for pair in related:
        if rel_sources.get(pair) and pair[0] in alive and pair[1] in alive and not overrides.edge_deleted(pair):
            upsert_edges.append(merge_relation(*pair, rel_sources[pair], (names[pair[0]], names[pair[1]]),
                                               budget, summarize))
        else:
            drop_edges.append(pair)
    chunk_ids = lib.graph_sources.mentions((k, p[len(PAPER_PREFIX):]) for k, p in mentions)
    for key, pkey in mentions:
        doc_id = pkey[len(PAPER_PREFIX):]
        ids = chunk_ids.get((key, doc_id))
        if ids and key in alive and pkey in alive:
            upsert_edges.append(paper_edge(mention_edge(key, pkey, doc_id, ids, papers[doc_id].year),
                                           upsert_nodes.get(key) or existing.get(key)))
        else:
            drop_edges.append((key, pkey))
    # Edges that vanish with a deleted node also lose their vectors.
    dropped_with_nodes = [e.pair for k in delete_nodes for e in lib.graph.node_edges(k) if e.relation == RELATED]
    stats.merge_s = time.perf_counter() - t

    t = time.perf_counter()
    if progress:
        progress("writing the graph", 0.5)
    lib.graph.apply(list(upsert_nodes.values()), upsert_edges, delete_nodes, drop_edges)
    if papers_written := [k[len(PAPER_PREFIX):] for k in upsert_nodes if k.startswith(PAPER_PREFIX)]:
        sync_citation_edges(lib, papers_written, drop_stale=False)  # a paper node made: its CITES edges can be drawn
    stats.store_s = time.perf_counter() - t

    t = time.perf_counter()
    if progress:
        progress(f"embedding {len(upsert_nodes)} entities and {len(upsert_edges)} relations", 0.6)
    stats.embed_s = sync_vectors(lib, [n for n in upsert_nodes.values() if not n.is_paper], delete_nodes,
                                 [e for e in upsert_edges if e.relation == RELATED], drop_edges + dropped_with_nodes,
                                 names)
    stats.vectors_s = time.perf_counter() - t
    lib.graph_sources.clear_dirty(dirty_nodes, dirty_edges, upto=upto)
    stats.nodes_upserted, stats.nodes_deleted = len(upsert_nodes), len(delete_nodes)
    stats.edges_upserted, stats.edges_deleted = len(upsert_edges), len(drop_edges)
    return stats
