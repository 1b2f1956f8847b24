"""Merging: entity keys, and the merged node or edge as a pure function of its per-chunk contributions.

Because a merged record depends only on its sources (ordered by document and chunk, never by arrival), deleting
a paper and adding it back yields the same graph, and a crash mid-rebuild is repaired by rebuilding again.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence

from core.schema.graph import MENTIONED_IN, RELATED, EntitySource, GraphEdge, GraphNode, RelationSource
from core.schema.ids import chunk_order
from core.text.tokens import approx_tokens

DESCRIPTION_SEP = "\n"
MAX_KEY_CHARS = 120
# (what, name, descriptions) → one description; set when an LLM is configured.
Summarizer = Callable[[str, str, list[str]], str]

_HYPHENS = re.compile(r"(?<=\w)[\-\u2010\u2011\u2012\u2013\u2212](?=\w)")
_NON_WORD = re.compile(r"[^\w]+")
_ARTICLES = {"the", "a", "an"}
# Words ending in s that are not plurals of a shorter word.
_KEEP_S = ("ss", "us", "is", "as", "os", "ys", "ics")  # "physics", "linguistics"


def _singular(word: str) -> str:
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "iases")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(_KEEP_S):
        return word[:-1]
    return word


# A footnote or affiliation mark left on a name: "SPECTER,2", "Hearstβ", "Weld∗".
_TRAILING_MARK = re.compile(r"(?<=[A-Za-z])(?:[,.;:]\s?\d{1,2}|[α-ωΑ-Ω†‡∗*§¶♠♣♡♢⋄□]+)$")
_MARKS = re.compile(r"(?<=[a-z])[α-ω†‡∗§¶♠♣♡♢⋄□]+(?=\s|$)")
# A person as "Last, First" or with middle initials: "Cohan, Arman" and "Daniel S. Weld" → "arman cohan", "daniel weld".
_LAST_FIRST = re.compile(r"([A-Z][\w'’-]+),\s+([A-Z][a-z][\w'’-]*(?:\s+[A-Z]\.)*)")
_PERSON = re.compile(r"[A-Z][a-z][\w'’-]*(?:\s+[A-Z]\.(?:-?[A-Z]\.)?)+\s+[A-Z][a-z][\w'’-]*")


def _person_form(name: str) -> str:
    found = _LAST_FIRST.fullmatch(name)
    if found:
        name = f"{found.group(2)} {found.group(1)}"
    if _PERSON.fullmatch(name):
        words = name.split()
        name = f"{words[0]} {words[-1]}"  # persons merge only within one form: first and last name kept
    return name


def normalize_key(name: str) -> str:
    """Case, whitespace, punctuation, hyphen variants and a simple plural on the last word: "Multi-Head
    Attentions", "multihead attention" and "multi-head  attention." share one key; a footnote mark glued on
    ("SPECTER,2") and a person's middle initials or "Last, First" order do not count. Never contains ':'."""
    name = _person_form(_MARKS.sub("", _TRAILING_MARK.sub("", " ".join(name.split()))))
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _HYPHENS.sub("", text)
    words = [w for w in _NON_WORD.sub(" ", text).replace("_", " ").split() if w]
    while words and words[0] in _ARTICLES and len(words) > 1:
        words = words[1:]
    if words:
        words[-1] = _singular(words[-1])
    return " ".join(words)[:MAX_KEY_CHARS].strip()


def _most_common(values: Sequence[str]) -> str:
    """The most frequent value; ties go to the one seen first (sources are in document order)."""
    counts = Counter(values)
    best = max(counts.values())
    return next(v for v in values if counts[v] == best)


def merge_descriptions(descriptions: Sequence[str], what: str, name: str, budget_tokens: int,
                       summarize: Summarizer | None) -> str:
    unique = list(dict.fromkeys(d.strip() for d in descriptions if d and d.strip()))
    joined = DESCRIPTION_SEP.join(unique)
    if approx_tokens(joined) <= budget_tokens:
        return joined
    if summarize:
        summary = summarize(what, name, unique)
        if summary.strip():
            return summary.strip()
    # Without an LLM keep the first passages whole (in document order) and say how many were left out.
    kept, used = [], 0
    for d in unique:
        cost = approx_tokens(d)
        if kept and used + cost > budget_tokens:
            break
        kept.append(d[:budget_tokens * 4])
        used += cost
    rest = len(unique) - len(kept)
    return DESCRIPTION_SEP.join(kept) + (f"{DESCRIPTION_SEP}(+{rest} more passages)" if rest else "")


def merge_entity(key: str, sources: Sequence[EntitySource], budget_tokens: int,
                 summarize: Summarizer | None = None) -> GraphNode:
    name = _most_common([s.name for s in sources])
    types = [s.type for s in sources]
    specific = [t for t in types if t != "concept"]  # a specific type seen once beats the catch-all
    return GraphNode(
        key=key, name=name, type=_most_common(specific or types),
        description=merge_descriptions([s.description for s in sources], "entity", name, budget_tokens, summarize),
        source_chunks=sorted({s.chunk_id for s in sources}, key=chunk_order),
        doc_ids=sorted({s.doc_id for s in sources}), extractors=sorted({s.extractor for s in sources}))


def merge_relation(source: str, target: str, sources: Sequence[RelationSource], names: tuple[str, str],
                   budget_tokens: int, summarize: Summarizer | None = None) -> GraphEdge:
    keywords: list[str] = []
    for s in sources:
        keywords.extend(k.strip() for k in s.keywords.split(",") if k.strip())
    label = f"{names[0]} — {names[1]}"
    return GraphEdge(
        source=source, target=target, relation=RELATED,
        keywords=", ".join(list(dict.fromkeys(keywords))[:20]),
        description=merge_descriptions([s.description for s in sources], "relation", label, budget_tokens,
                                       summarize),
        weight=round(sum(s.strength for s in sources), 3),
        source_chunks=sorted({s.chunk_id for s in sources}, key=chunk_order),
        doc_ids=sorted({s.doc_id for s in sources}))


def mention_edge(entity_key: str, paper_key: str, doc_id: str, chunk_ids: Sequence[str],
                 year: int | None) -> GraphEdge:
    return GraphEdge(source=entity_key, target=paper_key, relation=MENTIONED_IN, weight=float(len(chunk_ids)),
                     source_chunks=sorted(chunk_ids, key=chunk_order), doc_ids=[doc_id], year=year)

