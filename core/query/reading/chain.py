"""Two-hop extractive answers: a compositional question ("who directed the film that was shot in Leland?") is
answered by chaining two passages through the entity they share.

The first hop is the reader's best sentence that says the question's own words; the bridge is a name that
sentence (or its passage's title) gives and the question does not; the second hop is the best sentence of a
passage of another paper that is about the bridge (its title names it, or the sentence starts with it) and, for a
typed question, holds an answer of the expected type. The answer shows both sentences, one after the other, with
their citations and names the bridge; the second sentence shares few words with the question, which is why the
one-passage reader never picks it. No LLM: the reader's candidate scores
(core.query.reading.extractive) decide each hop.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from core.query.reading import answer_types as T
from core.query.reading.features import rarity

# A clause inside the question that describes the thing asked about: "the film that …", "a musician whose …",
# "X's first novel was published by …", "the director of …".
_COMPOSITIONAL = re.compile(r"\w[^?]*\b(that|which|who|whose|whom|where)\b|'s\b|\b(of|by) the\b", re.I)
# A name: capitalised words, possibly joined by of/de/the ("University of Oslo", "The Exies").
_NAME = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:(?:of|de|the|and|von|van|la|le)\s+)?[A-Z][\w'’.-]*)*")
_GENERIC = {"The", "A", "An", "It", "He", "She", "They", "In", "On", "At", "This", "That", "His", "Her", "Its"}
MAX_FIRST = 3  # first-hop candidates tried, best first
CAPITALISED_FUNCTION_RARITY = 1.5  # "For", "In" (wordfreq Zipf 6.5 and above): never a name's first word
START_RARITY = 3.0  # "further", "finally", "each" (Zipf 5 and above): alone at a sentence's start, not a name


@dataclass
class Chain:
    first: object  # reader Candidate: the sentence that says the question's words
    second: object  # reader Candidate: the sentence of another passage about the bridge
    bridge: str


def compositional(question: str) -> bool:
    return bool(_COMPOSITIONAL.search(question.strip()))


def _names(text: str) -> list[str]:
    out = []
    for m in _NAME.finditer(text):
        name = m.group().strip(" .'’")
        words = name.split()
        at_start = not text[:m.start()].strip(" \"'“(")
        # A function word capitalised ("For SGC", "In Oslo"), not the name.
        while words and (words[0] in _GENERIC or rarity(words[0].lower()) <= CAPITALISED_FUNCTION_RARITY):
            words.pop(0)
            at_start = False
        # "However, …", "Further, …", "Finally the …": a word that starts the sentence only because it is common
        # there (a comma after it, or as common as "finally" in general English), not a name.
        if len(words) == 1 and at_start and (text[m.end():m.end() + 1] == "," or
                                             rarity(words[0].lower()) <= START_RARITY):
            continue
        if words and len(" ".join(words)) > 2:
            out.append(" ".join(words))
    return list(dict.fromkeys(out))


def bridges(sentence: str, title: str, question: str) -> list[str]:
    """Names the first hop gives that the question does not: what the second hop must be about."""
    q = question.lower()
    found = []
    for name in _names(sentence) + ([title] if title else []):
        parts = [p for p in re.findall(r"\w+", name.lower()) if len(p) > 2]
        if parts and not all(p in q for p in parts):
            found.append(name)
    return list(dict.fromkeys(found))


def about(name: str, sentence: str, title: str) -> bool:
    """The passage is about the name: its title names it, or the sentence starts with it (its subject)."""
    name = name.lower()
    return name in title.lower() or re.sub(r"^(the|a|an)\s+", "", sentence.lower()).startswith(name)


def find_chain(question: str, kind: str, fit: list, ranked: list, source_of) -> Chain | None:
    """The best two-passage chain, or None. The first hop is among `fit` (the reader's candidates that cover the
    question's distinctive words), the second among all `ranked` candidates (it names the bridge instead) of
    another paper. `source_of(n)` is the context's source [n] (its title says what the passage is about)."""
    qwords = T.words(question)
    firsts = [c for c in fit if len(T.words(c.text) & qwords) >= 2][:MAX_FIRST]
    for first in firsts:
        source = source_of(first.n)
        title = source.doc_title if source is not None else ""
        for bridge in bridges(first.text, title, question):
            seconds = []
            for c in ranked:
                other = source_of(c.n)
                if c.n == first.n or other is None or source is None or other.doc_id == source.doc_id:
                    continue
                if about(bridge, c.text, other.doc_title) and (kind == T.OTHER or c.typed > 0):
                    seconds.append(c)
            if seconds:
                return Chain(first, max(seconds, key=lambda c: c.p), bridge)
    return None
