"""An entity's (or a relation's) description as a researcher reads it on the Graph page.

Without an LLM a merged description is its papers' passages joined (core/graph/merge.py: one passage per chunk that
mentions it, each cut at ~300 characters with "…", then "(+13 more passages)"): a jumble of half sentences from
several papers. Here the contributions are read again from their sources, split into sentences, stripped of markup,
deduplicated, and ranked: a sentence that defines the entity ("S2ORC is …", "we introduce S2ORC, a …") first, then
one that names it, at a readable length. The best one or two are shown, each with its paper; the rest are kept for
a folded list. With an LLM the merged description is a summary: it is shown as it is, above the same sentences.
Plain data; the page only lays it out.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from core.graph.merge import DESCRIPTION_SEP
from core.library import Library
from core.presentation.graph.graph_index import GraphIndex
from core.schema.graph import GraphEdge, GraphNode
from core.text.plain import strip_markup

LEAD = 2  # sentences shown before the fold
MAX_MORE = 40  # folded sentences kept; the rest are counted
TIP_CHARS = 300
# Passages read per description: an entity of a thousand papers has thousands, and comparing their sentences is
# quadratic (2,000 passages: 7 s). Taken in turns from each paper, so many papers speak, not the first one alone.
MAX_PIECES, MAX_TIP_PIECES = 150, 20
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"”’)]?\s+(?=[A-Z0-9\"“‘])")
_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|et al|cf|vs|Fig|Figs|Eq|Sec|Tab|No|approx|resp)\.$", re.IGNORECASE)
_TERMINAL = re.compile(r"[.!?:;][\"”’)]?$")
_MORE_NOTE = re.compile(r"^\(\+\d+ more passages\)$")
_WORDS = re.compile(r"\w+")
# "X is …", "X (Y) denotes …", "X, which is …": the sentence says what X is.
_DEFINES = re.compile(r"\s*(?:\([^)]{1,40}\)\s*)?(?:,?\s*(?:which|that)\s+)?(?:is|are|was|were|refers to|denotes|"
                      r"stands for|consists|contains|provides|comprises)\b")
_PRONOUN_START = re.compile(r"^(?:it|this|these|they|that|those|its|their|such|here|which)\b", re.IGNORECASE)
MIN_CHARS, GOOD_CHARS, MAX_CHARS = 25, 250, 450


@dataclass(frozen=True)
class Sentence:
    text: str
    doc_id: str
    paper: str  # the paper's title, for "— Title"


@dataclass
class Description:
    summary: str = ""  # an LLM's summary of the passages, when the graph was built with one
    lead: list[Sentence] = field(default_factory=list)  # the best one or two sentences
    more: list[Sentence] = field(default_factory=list)  # the rest, deduplicated, in document order
    more_count: int = 0  # sentences beyond `more`

    @property
    def empty(self) -> bool:
        return not (self.summary or self.lead)


def split_sentences(text: str) -> list[str]:
    """A passage's whole sentences: markup stripped; a line broken mid-sentence joined again; a sentence the merge
    cut ("…") or a passage that stops mid-sentence after whole ones dropped."""
    joined = ""
    for line in strip_markup(text).splitlines():
        glue = "\n" if not joined or _TERMINAL.search(joined) else " "
        joined = f"{joined}{glue}{line.strip()}" if joined else line.strip()
    out: list[str] = []
    for line in joined.splitlines():
        pending = ""
        for piece in _SENTENCE_END.split(line):
            pending = f"{pending} {piece}".strip() if pending else piece.strip()
            if _ABBREVIATION.search(pending):  # "et al." / "e.g." ends no sentence
                continue
            out.append(pending)
            pending = ""
        if pending:
            out.append(pending)
        if len(out) > 1 and not _TERMINAL.search(out[-1]):
            out.pop()  # "… based on a Transformer that is pretrained on": the passage's window ended there
    return [s for s in out if s and not s.endswith("…") and not _MORE_NOTE.match(s)]


def _key(sentence: str) -> str:
    return " ".join(_WORDS.findall(sentence.casefold()))


def _mentions(sentence: str, names: Sequence[str]) -> re.Match | None:
    for name in names:
        if name.strip():
            found = re.search(rf"(?<!\w){re.escape(name.strip())}(?!\w)", sentence, re.IGNORECASE)
            if found:
                return found
    return None


def score(sentence: str, names: Sequence[str]) -> float:
    """How well `sentence` describes the entity named `names`: defines it > names it > neither; readable length."""
    found = _mentions(sentence, names)
    value = 0.0
    if found:
        value += 2.0
        after = sentence[found.end():found.end() + 40].lower()
        before = sentence[max(0, found.start() - 30):found.start()].lower()
        if _DEFINES.match(after) or re.match(r"\s*,\s*(?:a|an|the)\b", after):
            value += 3.0  # "X is a …", "X, a large corpus …"
        elif re.search(r"\b(?:introduce|present|propose|release|call|called|named|dub)\w*\s+$", before):
            value += 2.0  # "we introduce X"
        if found.start() < 20:
            value += 0.5  # about it, not in passing
    length = len(sentence)
    if length < MIN_CHARS or length > MAX_CHARS:
        value -= 2.0
    elif length > GOOD_CHARS:
        value -= 0.5
    if not _TERMINAL.search(sentence):
        value -= 1.5  # stops mid-sentence: the passage's window ended there
    if _PRONOUN_START.match(sentence):
        value -= 1.0  # "It is …" means little out of its passage
    return value


def _unique(pieces: Iterable[tuple[str, str]], titles: dict[str, str]) -> list[Sentence]:
    seen: set[str] = set()
    out: list[Sentence] = []
    for doc_id, text in pieces:
        for sentence in split_sentences(text):
            key = _key(sentence)
            if not key or key in seen:
                continue
            seen.add(key)
            out.append(Sentence(sentence, doc_id, titles.get(doc_id, doc_id[:12])))
    # A sentence another one contains whole ("S2ORC is a corpus." in "S2ORC is a corpus. It has …") is dropped.
    keys = [_key(s.text) for s in out]
    return [s for s, k in zip(out, keys) if not any(k != other and k in other for other in keys)]


def spread(pieces: Sequence[tuple[str, str]], limit: int) -> list[tuple[str, str]]:
    """At most `limit` of the (doc id, text) pieces, one from each paper in turn, each paper's in their order."""
    if len(pieces) <= limit:
        return list(pieces)
    by_doc: dict[str, list[tuple[str, str]]] = {}
    for piece in pieces:
        by_doc.setdefault(piece[0], []).append(piece)
    out: list[tuple[str, str]] = []
    for turn in range(max(len(v) for v in by_doc.values())):
        out += [v[turn] for v in by_doc.values() if turn < len(v)]
        if len(out) >= limit:
            break
    return out[:limit]


def _is_summary(merged: str, pieces: Sequence[tuple[str, str]]) -> bool:
    """True when the merged description is not the passages joined (merge.py without an LLM) but a summary."""
    texts = [t.strip() for _, t in pieces if t.strip()]
    for line in (merged or "").split(DESCRIPTION_SEP):
        line = line.strip()
        if line and not _MORE_NOTE.match(line) and not any(t.startswith(line) or line in t for t in texts):
            return True
    return False


def describe(merged: str, pieces: Sequence[tuple[str, str]], names: Sequence[str], titles: dict[str, str],
             lead: int = LEAD, max_pieces: int = MAX_PIECES) -> Description:
    """`merged`: the node's (or edge's) stored description; `pieces`: its sources' (doc id, description) in
    document order; `names`: the entity's name and aliases (both ends' names for a relation); `titles`: papers."""
    sentences = _unique(spread(pieces, max_pieces), titles)
    if not sentences and (merged or "").strip() and not pieces:
        sentences = _unique([("", merged)], titles)  # no sources stored: the merged text is all there is
    # Whole sentences before one the passage's window cut off, however well that one scores.
    ranked = sorted(range(len(sentences)), key=lambda i: (not _TERMINAL.search(sentences[i].text),
                                                          -score(sentences[i].text, names), i))
    chosen = ranked[:lead]  # best first
    rest = [s for i, s in enumerate(sentences) if i not in chosen]
    summary = " ".join(strip_markup(merged).split()) if pieces and _is_summary(merged, pieces) else ""
    return Description(summary=summary, lead=[sentences[i] for i in chosen], more=rest[:MAX_MORE],
                       more_count=max(len(rest) - MAX_MORE, 0))


def tip(description: Description) -> str:
    """One line for a node's tooltip: the summary, else the best sentence."""
    text = description.summary or (description.lead[0].text if description.lead else "")
    return text if len(text) <= TIP_CHARS else text[:TIP_CHARS - 1].rstrip() + "…"


def _names(index: GraphIndex, key: str, name: str) -> list[str]:
    return [name] + [alias for alias, canonical in index.aliases.items() if canonical == key][:5]


def entity_description(lib: Library, index: GraphIndex, node: GraphNode) -> Description:
    sources = lib.graph_sources.entity_sources([node.key]).get(node.key, [])
    return describe(node.description, [(s.doc_id, s.description) for s in sources], _names(index, node.key, node.name),
                    index.paper_titles)


def edge_description(lib: Library, index: GraphIndex, edge: GraphEdge) -> Description:
    pair = tuple(sorted((edge.source, edge.target)))
    sources = lib.graph_sources.relation_sources([pair]).get(pair, [])
    names = [n for k in pair for n in _names(index, k, index.nodes[k].name if k in index.nodes else k)]
    return describe(edge.description, [(s.doc_id, s.description) for s in sources], names, index.paper_titles)


def node_tips(lib: Library, index: GraphIndex, nodes: dict[str, GraphNode]) -> dict[str, str]:
    """Each node's tooltip line, from its sources read in one query."""
    sources = lib.graph_sources.entity_sources(list(nodes))
    out = {}
    for key, node in nodes.items():
        pieces = [(s.doc_id, s.description) for s in sources.get(key, [])]
        out[key] = tip(describe(node.description, pieces, _names(index, key, node.name), index.paper_titles, lead=1,
                                max_pieces=MAX_TIP_PIECES))
    return out
