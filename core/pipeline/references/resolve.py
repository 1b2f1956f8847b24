"""The library's citation graph: each paper's entries resolved to the library's own papers, kept in the references
store, and drawn as CITES edges between paper nodes in the graph store.

An entry is a library paper when they share a DOI or an arXiv id, or when the paper's normalised title is the
entry's title (or is found inside the entry's text, for entries whose title the parser cut wrong) and their years
agree within `year_tolerance` (a preprint is often cited a year before its venue's year) or either has none. A paper
never resolves to itself.

Order does not matter: a paper added later finds the older entries that name it (the store looks them up by DOI,
arXiv id and title), and a deleted paper's resolutions are cleared by the store. The graph's CITES edges follow the
store whenever either changes: after an ingest, a delete, `core refs refresh`, and when the graph (re)creates a
paper node (core/pipeline/graph/build.py), since an edge needs both paper nodes."""
from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.content.pages import load_items
from core.graph.lock import graph_lock
from core.library import Library
from core.pipeline.metadata.extract import norm_text
from core.pipeline.references.entries import parse_references
from core.pipeline.references.llm_read import StopAfterError, llm_read
from core.pipeline.references.markers import link_markers
from core.pipeline.references.rules import ref_rules
from core.schema.graph import PAPER_PREFIX, GraphEdge
from core.schema.references import CITES, ParsedReference

log = logging.getLogger(__name__)


@dataclass
class LibraryPaper:
    doc_id: str
    title_key: str
    year: int | None
    doi: str
    arxiv: str


def entry_keys(ref: ParsedReference) -> tuple[str, str]:
    return norm_text(ref.title), norm_text(ref.text)


def library_papers(lib: Library) -> list[LibraryPaper]:
    docs = {d.id: d for d in lib.documents.list()}
    metas = lib.metadata.get_many(docs)
    papers = []
    for doc_id, doc in docs.items():
        meta = metas.get(doc_id)
        title = (meta.title if meta and meta.title else doc.title) or ""
        papers.append(LibraryPaper(doc_id, norm_text(title), meta.year if meta else None, meta.doi if meta else "",
                                   meta.arxiv if meta else ""))
    return papers


def is_paper(ref: ParsedReference, keys: tuple[str, str], paper: LibraryPaper) -> bool:
    if ref.doc_id == paper.doc_id:
        return False
    if ref.doi and ref.doi == paper.doi or ref.arxiv and ref.arxiv == paper.arxiv:
        return True
    rules = ref_rules()
    title_key, text_key = keys
    if len(paper.title_key) < rules["title_min_chars"]:
        return False
    named = title_key == paper.title_key or paper.title_key in text_key or (
        len(title_key) >= rules["title_min_chars"] and paper.title_key.startswith(title_key))
    years_agree = ref.year is None or paper.year is None or abs(ref.year - paper.year) <= rules["year_tolerance"]
    return named and years_agree


def resolve(ref: ParsedReference, papers: Sequence[LibraryPaper]) -> str:
    keys = entry_keys(ref)
    return next((p.doc_id for p in papers if is_paper(ref, keys, p)), "")


_WORKSPACE_LLM = object()  # store_references' default: the workspace's LLM, if one is configured


def store_references(lib: Library, doc_id: str, items=None, papers: Sequence[LibraryPaper] | None = None,
                     sync: bool = True, chat_model=_WORKSPACE_LLM) -> tuple[int, int]:
    """Parse, link and resolve one paper's references and store them; older papers' entries that name this paper
    resolve to it now. Returns (entries, links)."""
    items = load_items(lib, doc_id) if items is None else items
    refs = parse_references(doc_id, items)
    chat_model = _chat_model(lib) if chat_model is _WORKSPACE_LLM else chat_model
    llm_read(chat_model, refs, doc_id)  # what the rules missed, when an LLM is configured
    links, _seen, _linked = link_markers(items, refs)
    papers = library_papers(lib) if papers is None else papers
    for ref in refs:
        ref.cited_doc_id = resolve(ref, papers)
    lib.references.replace_doc(doc_id, refs, [entry_keys(r) for r in refs], links)
    named_by = resolve_towards(lib, next((p for p in papers if p.doc_id == doc_id), None))
    if sync:
        sync_citation_edges(lib, [doc_id, *{r.cited_doc_id for r in refs if r.cited_doc_id}, *named_by])
    return len(refs), len(links)


def _chat_model(lib: Library):
    try:
        return lib.chat_model()
    except Exception as exc:  # an LLM that cannot even be built (embedded not installed): the rules' records stand
        log.warning("no LLM pass over references: %s", exc)
        return None


def resolve_towards(lib: Library, paper: LibraryPaper | None) -> set[str]:
    """Other papers' unresolved entries that name this paper, resolved to it; returns the citing papers."""
    if paper is None:
        return set()
    found = lib.references.candidates(paper.doi, paper.arxiv, paper.title_key, ref_rules()["title_min_chars"])
    hits = [r for r in found if not r.cited_doc_id and is_paper(r, entry_keys(r), paper)]
    lib.references.set_cited((r.doc_id, r.idx, paper.doc_id) for r in hits)
    return {r.doc_id for r in hits}


def refresh_references(lib: Library, doc_ids: Iterable[str] | None = None) -> dict[str, tuple[int, int]]:
    """Parse every paper's references again (or these papers'): `python -m core refs refresh`."""
    papers = library_papers(lib)
    wanted = list(doc_ids) if doc_ids is not None else [p.doc_id for p in papers]
    model = _chat_model(lib)
    model = StopAfterError(model) if model is not None else None  # a dead endpoint is not tried once per paper
    done = {doc_id: store_references(lib, doc_id, papers=papers, sync=False, chat_model=model) for doc_id in wanted}
    sync_citation_edges(lib, None if doc_ids is None else wanted)
    return done


def forget_references(lib: Library, doc_id: str) -> None:
    """A deleted paper: its entries and links go, entries elsewhere that named it are unresolved again, and its
    CITES edges leave the graph (the graph drops them with its node too; this covers a paper without one)."""
    lib.references.delete_doc(doc_id)
    sync_citation_edges(lib, [doc_id])


def citation_edges(lib: Library, doc_ids: Iterable[str] | None = None) -> list[GraphEdge]:
    """CITES edges the store says there are (those touching doc_ids, or all), each with its citing sentences."""
    by_pair: dict[tuple[str, str], list[ParsedReference]] = {}
    for ref in lib.references.resolved(doc_ids):
        by_pair.setdefault((ref.doc_id, ref.cited_doc_id), []).append(ref)
    links_of = {citing: lib.references.links(citing) for citing, _ in by_pair}
    edges = []
    for (citing, cited), refs in by_pair.items():
        idx = {r.idx for r in refs}
        links = [x for x in links_of[citing] if x.ref_idx in idx]
        lines = list(dict.fromkeys(f"p. {x.page + 1}: {x.sentence}" for x in links))
        description = "\n".join(lines) or "Listed in its references: " + refs[0].text[:300]
        edges.append(GraphEdge(source=PAPER_PREFIX + citing, target=PAPER_PREFIX + cited, relation=CITES,
                               keywords="cites", description=description, weight=float(max(1, len(lines))),
                               doc_ids=[citing, cited], year=refs[0].year))
    return edges


def sync_citation_edges(lib: Library, doc_ids: Iterable[str] | None = None, drop_stale: bool = True
                        ) -> tuple[int, int]:
    """Make the graph's CITES edges (touching doc_ids, or all) what the store says, where both paper nodes exist.
    Without drop_stale only missing edges are written: a graph rebuild remaking paper nodes need not read every
    edge of those papers (hundreds of MENTIONED_IN each) to find CITES edges that the store no longer has; the
    store's own changes (ingest, delete, refresh) drop those. Returns (edges written, edges dropped)."""
    ids = None if doc_ids is None else list(dict.fromkeys(doc_ids))
    with graph_lock(lib):
        wanted = {e.pair: e for e in citation_edges(lib, ids)}
        if not drop_stale:
            existing: set[tuple[str, str]] = set()
        elif ids is None:
            existing = {(s, t) for s, t, relation, _ in lib.graph.edge_outline() if relation == CITES}
        else:
            existing = {e.pair for e in lib.graph.edges_of(PAPER_PREFIX + d for d in ids) if e.relation == CITES}
        alive = set(lib.graph.get_nodes({k for pair in wanted for k in pair}))
        write = [e for pair, e in wanted.items() if pair[0] in alive and pair[1] in alive]
        drop = sorted(existing - {e.pair for e in write})
        if write or drop:
            lib.graph.apply(upsert_edges=write, delete_edges=drop)
    return len(write), len(drop)
