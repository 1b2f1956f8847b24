"""Citing passages from the library's citation graph: a question about what other papers do with a paper ("Which
papers build on SPECTER?", "What do other papers say about S2ORC?", "Who cites the Semantic Scholar literature graph
paper?") gets the sentences in which the library's papers cite it, as passages placed first among its sources.

The mechanism is a lookup, not a walk: the question is recognised by its cue phrases (core/query/data/
citation_cues.json), the paper it names is resolved against the library's metadata (its short name before a colon,
"Author et al.", or most of its title's words), and each citation link of an entry resolved to that paper (lib.
references: citing paper, page, sentence) is mapped to the chunk holding the sentence and to the window holding it.
A one-step walk over CITES edges is all such a question asks; ppr's walk over entities would dilute it.

It runs after a mode's fusion and rerank (core.query.routes: naive, mix and ppr), so for any other question the
sources are untouched: no cue, no named paper cited in the library, nothing changes. The reader never knows.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from core.library import Library
from core.query.records import QueryParams, Retrieval, RetrievedChunk
from core.query.retrieve import chunk_window_ids
from core.query.search import _parse_bbox
from core.query.sources import Scope, scope_of
from core.schema.metadata import PaperMetadata
from core.schema.records import Chunk, SearchHit
from core.schema.references import CitationLink

CUES_PATH = Path(__file__).with_name("data") / "citation_cues.json"
VIA = "cites"  # the `via` of a citing passage: why it is among the sources
_STOP = frozenset("a an and the of for in on to with by from using via its their our as at or is are be paper "
                  "papers work study".split())
_WORD = re.compile(r"[a-z0-9]+")
_ET_AL = re.compile(r"\b([A-Z][\w'’-]+)\s+et\s+al\b\.?(?:,?\s*\(?((?:19|20)\d\d))?")


@dataclass(frozen=True)
class Cues:
    strong: tuple[str, ...]
    weak: tuple[str, ...]
    passive: tuple[str, ...]
    asker: tuple[str, ...]
    title_share: float
    max_passages: int
    max_gap_words: int


@lru_cache(maxsize=1)
def cues() -> Cues:
    data = json.loads(CUES_PATH.read_text(encoding="utf-8"))
    return Cues(tuple(data["strong"]), tuple(data["weak"]), tuple(data.get("passive", ())), tuple(data["asker"]),
                float(data["title_share"]), int(data["max_passages"]), int(data["max_gap_words"]))


def _find(phrases: tuple[str, ...], text: str) -> list[tuple[int, int]]:
    """(start, end) of every phrase found in the lower-cased text as whole words."""
    return [(m.start(), m.end()) for p in phrases for m in re.finditer(r"\b" + re.escape(p) + r"\b", text)]


def asked_part(question: str) -> str:
    """The question's last sentence: what is asked ('The X paper cites SPECTER. What does SPECTER pretrain on?')."""
    parts = [p for p in re.split(r"(?<=[.!?])\s+(?=[A-Z])", question.strip()) if p.strip()]
    return parts[-1] if parts else question


def cue_spans(question: str) -> tuple[list[int], list[int]]:
    """Where the named paper may start: after a strong cue, or after a weak one when an asker is present
    ('which papers use …'); and where it may end: before a passive cue ('… cited by other papers'). Positions in
    the question's last sentence (asked_part)."""
    text, c = asked_part(question).lower(), cues()
    after = [end for _, end in _find(c.strong, text)]
    before: list[int] = []
    if _find(c.asker, text):
        after += [end for _, end in _find(c.weak, text)]
        before = [start for start, _ in _find(c.passive, text)]
    return after, before


def near_cue(question: str, at: int, after: list[int], before: list[int]) -> bool:
    """A mention at `at` names the paper a cue asks about: it starts within max_gap_words words after a cue's end,
    or ends its words within them before a passive cue's start (the mention's own words not counted)."""
    gap = cues().max_gap_words
    return (any(at >= end and len(question[end:at].split()) <= gap for end in after)
            or any(at < start for start in before))


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _short_name(title: str) -> str:
    """"SPECTER" of "SPECTER: Document-level …": a head of one to three words before a colon."""
    head, sep, _ = title.partition(":")
    return head.strip() if sep and 1 <= len(head.split()) <= 3 and len(head.strip()) >= 3 else ""


def mentions(question: str, meta: PaperMetadata) -> list[tuple[int, float]]:
    """(position, strength) of each way the question names this paper: its short name (1.0), "Author et al." with
    the year when given (0.8, 0.9 with the year), or at least `title_share` of its title's content words (their
    share)."""
    found: list[tuple[int, float]] = []
    if name := _short_name(meta.title):
        found += [(m.start(), 1.0) for m in re.finditer(r"\b" + re.escape(name) + r"\b", question, re.IGNORECASE)]
    family = meta.first_author_family().lower()
    for m in _ET_AL.finditer(question):
        if family and m.group(1).lower() == family:
            year = m.group(2)
            if year is None or meta.year is None or int(year) == meta.year:
                found.append((m.start(), 0.9 if year else 0.8))
    title = {w for w in _words(meta.title) if w not in _STOP and len(w) > 2}
    if len(title) >= 2:
        lower = question.lower()
        spots = {w: m.start() for w in title if (m := re.search(r"\b" + re.escape(w) + r"\b", lower))}
        share = len(spots) / len(title)
        if len(spots) >= 2 and share >= cues().title_share:
            found.append((min(spots.values()), share * 0.95))
    return found


def named_paper(lib: Library, question: str, scope: Scope) -> str | None:
    """The library paper the question asks about, named after a cue (or before a passive one), or None."""
    after, before = cue_spans(question)
    if not after and not before:
        return None
    question = asked_part(question)
    metadata = lib.metadata.get_many(scope.doc_ids)
    best, best_score = None, 0.0
    for doc_id in scope.doc_ids:
        meta = metadata.get(doc_id) or PaperMetadata(doc_id=doc_id, title=scope.titles.get(doc_id, ""))
        if not meta.title:
            meta.title = scope.titles.get(doc_id, "")
        for at, strength in mentions(question, meta):
            if near_cue(question, at, after, before):
                if strength > best_score:
                    best, best_score = doc_id, strength
    return best


def _norm(text: str) -> str:
    return " ".join(_words(text))


def _holding(chunks: list[Chunk], link: CitationLink) -> Chunk | None:
    """The chunk that holds the citing sentence: its text contains the sentence's start; else, on its page, the
    chunk sharing most of its words."""
    needle = _norm(link.sentence)[:80]
    if not needle:
        return None
    holding = [c for c in chunks if needle in _norm(c.text)]
    if holding:
        return next((c for c in holding if link.page in c.pages), holding[0])
    words = set(needle.split())
    on_page = [c for c in chunks if link.page in c.pages]
    best = max(on_page, key=lambda c: len(words & set(_words(c.text))), default=None)
    return best if best is not None and len(words & set(_words(best.text))) >= len(words) // 2 else None


def citing_links(lib: Library, doc_id: str, scope: Scope) -> list[CitationLink]:
    """The citation links of every entry of another in-scope paper resolved to this one, in citing-paper order."""
    out: list[CitationLink] = []
    by_doc: dict[str, list[CitationLink]] = {}
    for ref in lib.references.cited_by(doc_id):
        if ref.doc_id == doc_id or not scope.allows_doc(ref.doc_id):
            continue
        if ref.doc_id not in by_doc:
            by_doc[ref.doc_id] = lib.references.links(ref.doc_id)
        out += [link for link in by_doc[ref.doc_id] if link.ref_idx == ref.idx]
    return out


def _hit(lib: Library, chunk: Chunk, link: CitationLink, qvec: np.ndarray, title: str) -> SearchHit:
    """The chunk as a source, with the window that holds the citing sentence (else its first window)."""
    needle = _norm(link.sentence)[:80]
    records = lib.windows.fetch(chunk_window_ids(chunk.id, chunk.tokens, lib))
    chosen = next((r for r in records if needle in _norm(r[0].document)), records[0] if records else None)
    if chosen is None:
        return SearchHit(chunk=chunk, score=0.0, window_text=link.sentence, page=link.page, bbox=link.bbox,
                         doc_title=title)
    match, vec = chosen
    return SearchHit(chunk=chunk, score=float(np.asarray(vec, dtype=np.float32) @ np.asarray(qvec, np.float32)),
                     window_text=match.document, page=int(match.metadata.get("page", link.page)),
                     bbox=_parse_bbox(match.metadata.get("bbox")) or link.bbox, doc_title=title)


def citing_passages(lib: Library, doc_id: str, scope: Scope, qvec: np.ndarray, limit: int) -> list[RetrievedChunk]:
    """At most `limit` passages holding a sentence that cites the paper, one per citing paper in turn."""
    rounds: dict[str, list[tuple[Chunk, CitationLink]]] = {}
    seen: set[str] = set()
    chunks_of: dict[str, list[Chunk]] = {}
    for link in citing_links(lib, doc_id, scope):
        chunks = chunks_of.setdefault(link.doc_id, lib.chunks.by_doc(link.doc_id))
        chunk = _holding(chunks, link)
        if chunk is not None and chunk.id not in seen:
            seen.add(chunk.id)
            rounds.setdefault(link.doc_id, []).append((chunk, link))
    ordered = [pair for i in range(max((len(v) for v in rounds.values()), default=0))
               for pairs in rounds.values() if i < len(pairs) for pair in [pairs[i]]][:limit]
    return [RetrievedChunk(hit=_hit(lib, chunk, link, qvec, scope.titles.get(chunk.doc_id, "")), score=1.0,
                           via=[VIA]) for chunk, link in ordered]


def add_citing(lib: Library, question: str, params: QueryParams, retrieval: Retrieval, qvec: np.ndarray) -> None:
    """Put the passages citing the paper the question asks about first among the retrieval's chunks (the rest keep
    their order, the whole cut to chunk_top_k) and say so in its notes; nothing when the question is not about
    what cites a paper of the library."""
    scope = scope_of(lib, params)
    doc_id = named_paper(lib, question, scope)
    if doc_id is None:
        return
    title = scope.titles.get(doc_id, doc_id[:12])
    found = citing_passages(lib, doc_id, scope, qvec, min(cues().max_passages, params.chunk_top_k))
    if not found:
        retrieval.notes.append(f"no paper of the library cites “{title}” (its citation graph: `python -m core refs "
                               "graph`)")
        return
    ids = {c.id for c in found}
    for chunk in retrieval.chunks:
        if chunk.id in ids:  # already retrieved: keep its reasons too
            next(c for c in found if c.id == chunk.id).via[:0] = chunk.via
    retrieval.chunks = (found + [c for c in retrieval.chunks if c.id not in ids])[:params.chunk_top_k]
    retrieval.notes.append(f"added {len(found)} citing passage{'s' if len(found) != 1 else ''} from the library's "
                           f"citation graph (papers citing “{title}”)")
