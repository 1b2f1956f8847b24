"""The second hop after the reranker, without an LLM (the idea of IRCoT's and MDR's second retrieval, read from
the graph): the passage that shares the rarest name with one of the reranker's top passages is returned even when
the reranker put it below the passages returned.

A reranker scores each passage alone against the question, so the passage of a two-hop question's second hop, which
shares no word with the question, falls below passages that repeat the question's words. But the first hop's
passage names the bridge ("Dick Humbert played for the Philadelphia Eagles"), and the second hop names it too.
Which passage names which entity and phrase is in memory already (core.graph.mention_index): a name only a few
passages share ties two passages; a name many share (a country, "national football league") ties a topic. Rare is
what local calls rare for a phrase (core.query.walks.RARE_PHRASE_SHARE and RARE_PHRASE_PASSAGES); a name the question
says is what it asks about, not a bridge (as core.query.reading.chain.bridges).

A bridge takes one of the last places of the passages returned: the passages above, which a one-passage question
reads first, stay where the reranker put them. Measured on ppr: see its route in core.query.routes.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from core.graph.mention_index import PHRASE, MentionIndex, mention_index
from core.graph.merge import normalize_key
from core.library import Library
from core.query.records import RetrievedChunk
from core.query.walks import RARE_PHRASE_PASSAGES, RARE_PHRASE_SHARE


def rare_limit(index: MentionIndex) -> int:
    """A name in at most this many passages ties them (local's rule for a rare phrase)."""
    return max(2, min(RARE_PHRASE_PASSAGES, int(index.n_passages * RARE_PHRASE_SHARE)))


def question_words(question: str) -> set[str]:
    """The question's words as names are keyed (core.graph.merge.normalize_key)."""
    return {key for word in question.split() if (key := normalize_key(word))}


def asked(key: str, words: set[str]) -> bool:
    """The question says every word of this name: it names what is asked about, not a bridge."""
    return all(normalize_key(word) in words for word in key.removeprefix(PHRASE).split())


def _bridging_names(index: MentionIndex, passage: str, words: set[str]) -> dict[str, float]:
    """The rare names this passage says and the question (its `words`) does not, by specificity."""
    rare = rare_limit(index)
    return {key: index.idf(key) for key in index.entities_of.get(passage, ())
            if len(index.passages_of.get(key, ())) <= rare and not asked(key, words)}


def bridge_of(index: MentionIndex, passage: str, candidates: Sequence[str], words: set[str]) -> str | None:
    """The candidate that shares with this passage the rarest name the question (its `words`) does not say (by
    specificity; ties: the candidates' order), or None when it shares no such name with any."""
    names = _bridging_names(index, passage, words)
    best, best_score = None, 0.0
    for cid in candidates:
        score = max((names[key] for key in index.entities_of.get(cid, ()) if key in names), default=0.0)
        if score > best_score:
            best, best_score = cid, score
    return best


def shared_name(index: MentionIndex, passage: str, bridge: str, words: set[str], text: str) -> str:
    """The name that ties the bridge to the passage (the rarest they share), as the bridge's text writes it: what the
    researcher is shown beside the passage ('shares "Miriam Castellane" with [1]')."""
    names = _bridging_names(index, passage, words)
    key = max((k for k in index.entities_of.get(bridge, ()) if k in names), key=lambda k: names[k], default="")
    plain = key.removeprefix(PHRASE)
    if not plain:
        return ""
    written = re.search(r"\b" + r"\W+".join(re.escape(w) for w in plain.split()) + r"\b", text, re.IGNORECASE)
    return written.group(0) if written else plain


def second_hop(index: MentionIndex, question: str, ranked: Sequence[RetrievedChunk], kept: int,
               top_k: int) -> list[RetrievedChunk]:
    """The reranker's order, except that the bridge of each of its top `kept` passages that ranked below `top_k`
    (the passages returned) takes one of the last places of the top `top_k`, pushing the passages ranked there down
    by one, and is marked `bridge` in its `via`. The passages above stay where the reranker put them; each chunk keeps
    the reranker's score."""
    ids, words = [c.id for c in ranked], question_words(question)
    lifted: dict[str, str] = {}  # bridge → the passage it continues
    for passage in ids[:kept]:
        cid = bridge_of(index, passage, [c for c in ids[kept:] if c not in lifted], words)
        if cid is not None:
            lifted[cid] = passage
    below = set(ids[top_k:])
    moved = [cid for cid in lifted if cid in below][:max(top_k - kept, 0)]
    if not moved:
        return list(ranked)
    by_id = {c.id: c for c in ranked}
    for cid in moved:
        chunk = by_id[cid]
        chunk.via.append("bridge")  # why a passage the reranker put lower is returned
        chunk.bridge = (lifted[cid], shared_name(index, lifted[cid], cid, words, chunk.hit.chunk.text))
    others = [c for c in ranked if c.id not in moved]
    at = top_k - len(moved)
    return others[:at] + [by_id[cid] for cid in moved] + others[at:]


class SecondHopReranker:
    """A reranker followed by the second hop (core.query.routes: ppr's route)."""

    def __init__(self, inner, lib: Library, kept: int, top_k: int):
        self.inner, self.lib, self.kept, self.top_k = inner, lib, kept, top_k
        self.name = f"{inner.name} + second hop"

    @property
    def calls(self) -> int:  # the LLM calls of the reranker inside (core.query.engine counts them)
        return getattr(self.inner, "calls", 0)

    def rerank(self, question, qvec, chunks):
        ranked = self.inner.rerank(question, qvec, chunks)
        return second_hop(mention_index(self.lib), question, ranked, self.kept, self.top_k)
