"""Composed LLM-free answers to questions that compare two things: "Which band was formed first, A or B?" (pick the
option from the two facts), "Are A and B both film directors?", "Are A and B in the same province?" (yes or no from
what each one's passage says), "What do A and B have in common?" / "Both A and B were released by what label?" (the
words both sides' passages say). Each answer cites the passage of each side; when a side's fact is not found, nothing
is composed and the reader answers (or abstains) as for any question.

Each side's evidence is the reader's most probable candidates that name it (in the sentence or in its passage's
title): the learned sentence model still decides which sentences speak for a side; this module only reads what
they say (a year, a number, the words of a predicate, the name next to "province"). The comparative words live in
core/query/reading/data/comparatives.json.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from core.query.reading import answer_types as T
from core.query.reading.candidates import Candidate
from core.query.reading.coverage import term_bag
from core.query.reading.features import QuestionView, rarity
from core.query.records import Answer, AnswerSentence

COMPARATIVES_PATH = Path(__file__).with_name("data") / "comparatives.json"
PER_SIDE = 4  # a side's most probable candidates read for its fact
_NAME = re.compile(r"[A-Z0-9][\w'’.\"-]*(?:\s+(?:(?:of|de|the|and|von|van|la|le|from|for)\s+)?[A-Z0-9][\w'’.\"-]*)*")
_LEAD = re.compile(r"^(?:the|a|an)\s+", re.I)
_OPTIONS = re.compile(r"(?P<a>[^,?]+?)\s*,?\s+or\s+(?P<b>[^,?]+?)\s*\??\s*$", re.I)
# "Are A and B both P?", "Were A and B members of the same band?": the two sides, then what is asked of them.
_BOTH = re.compile(r"^\s*(?:are|were|is|was|do|does|did|have|has)\s+(?P<sides>.+?\s+and\s+.+?)\s+"
                   r"(?:both\s+(?P<pred>[^?]+?)|(?P<same>(?:[\w-]+\s+){0,3}?(?:of\s+|in\s+)?the\s+same\s+[^?]+?))"
                   r"\s*\??\s*$", re.I)
_SAME = re.compile(r"\bsame\s+(?P<attr>[a-z]+)", re.I)
_LEADING_BOTH = re.compile(r"^\s*(?P<aux>are|were|is|was)\s+both\s+[\w\s'-]{1,40}?,\s*(?:the\s+)?"
                           r"(?P<sides>[^,]+?\s+and\s+[^,]+?),\s*(?P<pred>[^?]+?)\s*\??\s*$", re.I)
_TOKEN = re.compile(r"[A-Za-z0-9]+")
_BREAK = re.compile(r"[,;:()\[\]\"“”]|\.\s")  # a shared phrase does not run across a clause or a sentence
_ASKED = re.compile(r"\b(?:which|what)\s+([a-z]+)\b", re.I)  # "released by what label?" → label
MAX_SHARED = 4  # words in a shared phrase ("Walt Disney Pictures", "19th century")
# A phrase does not start or end on a word as common as "the", "was", "his" or "by" (Zipf frequency 6 and above in
# general English: rarity 2 and below), which every two passages share.
FUNCTION_RARITY = 2.0
_GENERIC = {"The", "A", "An", "It", "He", "She", "They", "In", "On", "At", "This", "That", "His", "Her", "Its", "Which",
            "Who", "What", "Are", "Is", "Were", "Was", "Both", "Between"}


@lru_cache(maxsize=1)
def _words() -> dict:
    return json.loads(COMPARATIVES_PATH.read_text(encoding="utf-8"))


@dataclass
class Side:
    name: str
    evidence: list[Candidate]


def two_sided(question: str) -> bool:
    """A yes/no question about two things at once ("Are A and B both …?"): one side's sentence cannot answer it."""
    return bool(_BOTH.match(_both_first(question.strip())))


def _both_first(text: str) -> str:
    """"Are both magazines, A and B, British?" read as "Are A and B both British?"."""
    m = _LEADING_BOTH.match(text)
    return f"{m.group('aux')} {m.group('sides')} both {m.group('pred')}" if m else text


def compare(q: QuestionView, ranked: list[Candidate], source_of, papers=None) -> Answer | None:
    """A composed answer, or None when the question compares nothing or a side's fact is missing. `papers` gives a
    library paper's bibliographic record by its id (None without a library): a side that names a paper of the
    library is compared by the paper's year, and two papers' shared authors answer "who wrote both"."""
    text = _both_first(q.text.strip())
    if q.yes_no and (m := _BOTH.match(text)):
        a, _, b = m.group("sides").rpartition(" and ")
        sides = _sides(_last_name(a), _first_name(b), ranked, source_of)
        if sides is None:
            return None
        same = _SAME.search(m.group("same") or m.group("pred") or "")
        return _same(sides, same.group("attr").lower()) if same else _both(sides, m.group("pred"))
    if not q.yes_no and re.match(r"^\s*(which|who|what)\b", text, re.I) and (m := _OPTIONS.search(text)):
        sides = _sides(_last_name(m.group("a")), _first_name(m.group("b")), ranked, source_of)
        if sides is None:
            return None
        segments = (m.group("a"), m.group("b"))
        return _choose(sides, text, _papers_of(sides, segments, ranked, source_of, papers))
    asked = _last_sentence(text)
    if not q.yes_no and _asks_shared(asked) and (pair := _pair(asked)):
        sides = _sides(*pair, ranked, source_of)
        if sides is None:
            return None
        before, _, after = asked.partition(" and ")
        found = _papers_of(sides, (before, after), ranked, source_of, papers)
        return (_shared_authors(sides, found) if found and _asks_person(asked) else None) or _shared(sides, asked)
    return None


def _last_sentence(question: str) -> str:
    """The sentence that asks: "A and B were founded within a year of each other. Which was first?" asks the
    second."""
    parts = re.split(r"(?<=[a-z0-9)]{2}[.?!])\s+(?=[A-Z])", question.strip())  # not after an initial ("E. B.")
    return parts[-1] if parts else question


def _asks_shared(question: str) -> bool:
    """A wh-question about what two named things have in common: "What do A and B have in common?", "A and B are
    both breeds developed in which century?"."""
    low = f" {question.lower()} "
    return bool(re.search(r"\b(?:which|what|who|when|where)\b", low)) and \
        any(re.search(rf"\b{re.escape(cue)}\b", low) for cue in _words()["shared_cues"])


# ---------------------------------------------------------------------------------------------- sides
def _last_name(text: str) -> str:
    names = _names(text)
    return names[-1] if names else _LEAD.sub("", text.strip())


def _first_name(text: str) -> str:
    names = _names(text)
    return names[0] if names else _LEAD.sub("", text.strip())


def _pair(question: str) -> tuple[str, str] | None:
    """The two things joined by the question's first "and": the name just before it ("Which base LLM were PaSa's
    Selector and Crawler …" → PaSa's Selector) or, past an appositive, the first name ("The Blue Lacy, official
    breed of Texas, and Chesapeake Bay Retriever" → Blue Lacy); and the first name after it."""
    before, sep, after = question.partition(" and ")
    a, b = _names(before), _names(after)
    if not (sep and a and b):
        return None
    return (a[0] if before.rstrip().endswith(",") else a[-1]), b[0]


def _names(text: str) -> list[str]:
    out = []
    for m in _NAME.finditer(text):
        words = m.group().strip(" .,'’\"").split()
        while words and words[0] in _GENERIC:
            words.pop(0)
        if words:
            out.append(" ".join(words))
    return out


def _names_it(c: Candidate, name: str, source_of) -> bool:
    source = source_of(c.n)
    title = (source.doc_title if source else "").lower()
    low = name.lower()
    return low in c.text.lower() or (bool(title) and (low in title or title.split(" (")[0] in low))


def _sides(a: str, b: str, ranked: list[Candidate], source_of) -> tuple[Side, Side] | None:
    if not a or not b or a.lower() == b.lower():
        return None
    sides = []
    for name in (a, b):
        found = [c for c in ranked if _names_it(c, name, source_of)][:PER_SIDE]
        if not found:
            return None
        sides.append(Side(name, found))
    return sides[0], sides[1]


# ---------------------------------------------------------------------------------------------- answers
def _choose(sides: tuple[Side, Side], question: str, papers: list | None = None) -> Answer | None:
    low = f" {question.lower()} "
    words = _words()
    direction = next((d for d in ("earlier", "later", "larger", "smaller")
                      if any(re.search(rf"\b{re.escape(w)}\b", low) for w in words[d])), "")
    if direction in ("earlier", "later") and papers and all(meta.year for meta, _ in papers):
        # Two papers of the library: their years, not a year their sentences mention (mostly others' work).
        values = [(float(meta.year), c) for meta, c in papers]
    elif direction in ("earlier", "later"):
        values = [_first_value(s, T._YEAR, lambda t: int(re.findall(r"\d{4}", t)[0])) for s in sides]
    elif direction:
        values = [_first_value(s, T._NUMBER, _number) for s in sides]
    else:  # "Which singer is American, A or B?": the side whose evidence says the question's other words
        values = [_support(s, _predicate_terms(question, sides)) for s in sides]
        if values[0][0] == values[1][0]:
            return None
        direction = "larger"
    if values[0] is None or values[1] is None or values[0][0] == values[1][0]:
        return None
    pick = {"earlier": min, "smaller": min}.get(direction, max)
    k = 0 if pick(values[0][0], values[1][0]) == values[0][0] else 1
    winner, cites = sides[k], [values[0][1], values[1][1]]
    numbers = list(dict.fromkeys(c.n for c in cites))
    first = AnswerSentence(f"{winner.name} [{', '.join(map(str, numbers))}].", numbers)
    return _composed(first, cites, winner.name)


def _both(sides: tuple[Side, Side], predicate: str) -> Answer | None:
    terms = set(T.stems(predicate)) - {"both"}
    if not terms:
        return None
    support = [_support(s, terms) for s in sides]
    if any(v is None for v in support):
        return None
    held = [v[0] >= 1.0 for v in support]
    cites = [v[1] for v in support]
    if all(held):
        first = AnswerSentence(f"Yes: both are {predicate.strip()} [{cites[0].n}, {cites[1].n}].",
                               [cites[0].n, cites[1].n])
        return _composed(first, cites, "yes")
    lacking = sides[held.index(False)]
    c = cites[held.index(False)]
    first = AnswerSentence(f"No: what is said of {lacking.name} does not make it {predicate.strip()} [{c.n}].", [c.n])
    return _composed(first, cites, "no")


def _same(sides: tuple[Side, Side], attribute: str) -> Answer | None:
    kinds = _words()["attribute_synonyms"].get(attribute, [attribute])
    place = _words()["address_positions"].get(attribute)
    values = [_next_to(s, kinds) or (_in_address(s, place) if place is not None else None) for s in sides]
    if any(v is None for v in values):
        return None
    cites = [v[1] for v in values]
    same = values[0][0].lower() == values[1][0].lower()
    first = AnswerSentence(f"{'Yes' if same else 'No'}: {sides[0].name} — {values[0][0]}; {sides[1].name} — "
                           f"{values[1][0]} [{cites[0].n}, {cites[1].n}].", [cites[0].n, cites[1].n])
    return _composed(first, cites, "yes" if same else "no")


def _shared(sides: tuple[Side, Side], question: str) -> Answer | None:
    """The phrase both sides' evidence says that the question does not: the asked-for noun's phrase first ("19th
    century" for "which century"), then the rarest words (general English frequency), then the longer phrase."""
    asked_words = set(T.stems(question))
    asked_noun = {T.stem(m.lower()) for m in _ASKED.findall(question)}
    names = {w.lower() for s in sides for w in _TOKEN.findall(s.name)}
    phrases = [_phrases(s, names) for s in sides]
    best: tuple | None = None
    for key in phrases[0].keys() & phrases[1].keys():
        new = [w for w in key if T.stem(w) not in asked_words]
        if not new:
            continue
        rank = (any(T.stem(w) in asked_noun for w in key), round(sum(rarity(w) for w in new), 3), len(key))
        if best is None or rank > best[0]:
            best = (rank, key)
    if best is None:
        return None
    surface, cite_a = phrases[0][best[1]]
    cite_b = phrases[1][best[1]][1]
    numbers = list(dict.fromkeys([cite_a.n, cite_b.n]))
    first = AnswerSentence(f"{surface} [{', '.join(map(str, numbers))}].", numbers)
    return _composed(first, [cite_a, cite_b], surface)


def _phrases(side: Side, names: set[str]) -> dict[tuple[str, ...], tuple[str, Candidate]]:
    """Every phrase of up to MAX_SHARED words a side's evidence says (its most probable sentence first), without the
    compared names, not starting or ending on a function word."""
    out: dict[tuple[str, ...], tuple[str, Candidate]] = {}
    for c in side.evidence:
        for part in _BREAK.split(c.text):
            tokens = _TOKEN.findall(part)
            for n in range(1, MAX_SHARED + 1):
                for k in range(len(tokens) - n + 1):
                    gram = tokens[k:k + n]
                    key = tuple(w.lower() for w in gram)
                    if rarity(key[0]) <= FUNCTION_RARITY or rarity(key[-1]) <= FUNCTION_RARITY \
                            or names & set(key) or len(key[-1]) < 2 or key in out or _cuts_a_name(tokens, k, n):
                        continue
                    out[key] = (" ".join(gram), c)
    return out


def _papers_of(sides: tuple[Side, Side], segments: tuple[str, str], ranked: list[Candidate], source_of,
               papers) -> list | None:
    """The library paper each side names, with its most probable sentence to cite, or None unless both do. A side
    names a paper when its name is in the paper's title; of several such papers, the one whose title shares most
    words with what the question says around the name ("the Semantic Scholar literature graph paper")."""
    if papers is None:
        return None
    found = []
    for side, segment in zip(sides, segments):
        words, best, seen = set(T.stems(segment)), None, set()
        for c in ranked:
            source = source_of(c.n)
            if source is None or source.doc_id in seen:
                continue
            seen.add(source.doc_id)
            meta = papers(source.doc_id)
            title = (meta.title if meta is not None and meta.title else source.doc_title or "").lower()
            if meta is None or not re.search(rf"(?<![\w-]){re.escape(side.name.lower())}(?![\w-])", title):
                continue
            score = len(words & set(T.stems(title)))
            if best is None or score > best[0]:
                best = (score, meta, c)
        if best is None:
            return None
        found.append((best[1], best[2]))
    return found if found[0][0].doc_id != found[1][0].doc_id else None


def _asks_person(question: str) -> bool:
    low = question.lower()
    return bool(re.match(r"^\s*who\b", low)) or any(
        re.search(rf"\b(?:which|what)\s+{re.escape(w)}\b", low) for w in _words()["person_words"])


def _shared_authors(sides: tuple[Side, Side], papers: list) -> Answer | None:
    """Who wrote both papers: the authors their records share (as printed, compared without case and spacing)."""
    def key(name: str) -> str:
        return " ".join(name.lower().replace(".", " ").split())
    second = {key(a) for a in papers[1][0].authors}
    both = [a for a in papers[0][0].authors if key(a) in second]
    if not both:
        return None
    cites = [papers[0][1], papers[1][1]]
    numbers = list(dict.fromkeys(c.n for c in cites))
    names = ", ".join(both)
    titles = [meta.title or side.name for (meta, _), side in zip(papers, sides)]
    first = AnswerSentence(f"{names}: an author of both “{titles[0]}” and “{titles[1]}” (their bibliographic "
                           f"records) [{', '.join(map(str, numbers))}].", numbers)
    return _composed(first, cites, names)


def _cuts_a_name(tokens: list[str], k: int, n: int) -> bool:
    """tokens[k:k+n] starts or ends inside a capitalised name ("chain in the United" of "the United States")."""
    def capital(i: int) -> bool:  # a capitalised word other than a sentence's "The" or "In"
        return 0 <= i < len(tokens) and tokens[i][:1].isupper() and rarity(tokens[i].lower()) > FUNCTION_RARITY
    return (capital(k) and capital(k - 1)) or (capital(k + n - 1) and capital(k + n))


def _composed(first: AnswerSentence, cites: list[Candidate], short: str) -> Answer:
    distinct = [c for k, c in enumerate(cites) if all(c is not d for d in cites[:k])]
    out = [first] + [AnswerSentence(f"{c.text} [{c.n}]", [c.n]) for c in distinct]
    return Answer(text=" ".join(s.text for s in out), sentences=out, extractive=True,
                  model="extractive (no LLM), compared", short_answer=short, short_answer_sentence=0,
                  short_answer_span=[0, len(short)], answer_type="comparison",
                  score=round(min(c.p for c in cites), 4), confidence=round(min(c.p for c in cites), 4))


# ---------------------------------------------------------------------------------------------- facts
def _first_value(side: Side, pattern: re.Pattern, value) -> tuple[float, Candidate] | None:
    for c in side.evidence:
        for m in pattern.finditer(c.text):
            try:
                return float(value(m.group())), c
            except (ValueError, IndexError):
                continue
    return None


def _number(text: str) -> float:
    digits = re.sub(r"[^\d.]", "", text.replace(",", ""))
    scale = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "b": 1e9, "billion": 1e9}
    unit = next((v for k, v in scale.items() if re.search(rf"\d\s?{k}\b", text.lower())), 1.0)
    return float(digits) * unit


def _predicate_terms(question: str, sides: tuple[Side, Side]) -> set[str]:
    """The question's words before its options, without the options' names and the asked-for category
    ("which singer"): what one option is and the other is not."""
    names = set(T.stems(" ".join(s.name for s in sides)))
    head = re.sub(r"^\s*(?:which|who|what)(?:\s+(?:one|of these))?(?:\s+[a-z]+(?=\s+(?:is|was|are|were|has|had)\b))?",
                  "", re.split(r",|\bor\b", question)[0], flags=re.I)
    return set(T.stems(head)) - names


def _support(side: Side, terms: set[str]) -> tuple[float, Candidate] | None:
    """The share of the predicate's words a side's evidence says (best sentence), with that sentence."""
    if not terms:
        return None
    best = max(side.evidence, key=lambda c: (len(terms & term_bag(c.text, terms).keys()), c.p))
    return len(terms & term_bag(best.text, terms).keys()) / len(terms), best


_ADDRESS = re.compile(r"\b(?:in|of|at|near)\s+((?:[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*){0,3})"
                      r"(?:,\s+[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*){0,3})+)")


def _in_address(side: Side, position: int) -> tuple[str, Candidate] | None:
    """The part of a written address a place question asks for, when no word names it ("located in Jefferson
    County, New York, United States": a state is the part before the country, a country the last, a city the
    first); an address of two parts ("in Alexandria, Louisiana") has no country, so its last part is the state."""
    for c in side.evidence:
        for m in _ADDRESS.finditer(c.text):
            parts = [p.strip().rstrip(".") for p in m.group(1).split(",")]
            k = position if len(parts) > 2 or position >= 0 else -1
            name = parts[k]
            if name and name.lower() not in side.name.lower():
                return name, c
    return None


def _next_to(side: Side, kinds: list[str]) -> tuple[str, Candidate] | None:
    """The name beside the attribute's word in a side's evidence: "Jiangsu province", "the band Alphaville"."""
    for c in side.evidence:
        for kind in kinds:
            before = re.search(rf"((?:[A-Z][\w-]+\s+){{1,3}}){kind}s?\b", c.text)
            after = re.search(rf"\b{kind}s?\s+(?:of\s+|called\s+|named\s+)?((?:[A-Z][\w-]+\s*){{1,3}})", c.text)
            for m in (before, after):
                if m:
                    name = " ".join(w for w in m.group(1).split() if w not in _GENERIC)
                    if name and name.lower() not in side.name.lower():
                        return name, c
    return None
