"""What the LLM-free reader knows about each candidate sentence, as numbers (one named feature each), for the
reader model (core.query.reading.scores) to weigh. The weights are learned (bench/reader_train.py), never set here.

Every feature is cheap: the question is analysed once, each sentence with regular expressions and set arithmetic;
the only vectors used are the stored embedding windows' similarities retrieval already paid for (`prior`).

Groups:
- relevance: the stored window's similarity (absolute and against the best candidate), BM25 over the pool, the
  share of the question's content stems in the sentence and in its passage (with section and paper title), the
  question's rare named words likewise, the share of the question's words weighted by how rare they are in
  general English (wordfreq), and the same overlaps of the sentences either side (an answer often follows the
  sentence that sets the question's scene);
- answer shape: the expected answer type (core.query.reading.answer_types) and whether the sentence holds a span of it,
  how much it says that the question does not (an answer adds something), cue words of the question's class
  (core/query/reading/data/reader_cues.json: "because" for a why-question), whether it (or a neighbour) says the noun
  the question asks for ("What format …": format), length;
- place: the passage's rank, the sentence's position in it, its role (body / table row / caption / footnote),
  whether a table row is a row of something the question names, the section it sits in.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from core.query.reading import answer_types as T
from core.query.reading.candidates import CAPTION, NOTE, ROW, Candidate
from core.query.reading.coverage import row_about, term_bag
from core.query.records import Source

CUES_PATH = Path(__file__).with_name("data") / "reader_cues.json"
KINDS = (T.NUMBER, T.YEAR, T.NAME, T.DEFINITION, T.TERM, T.MANNER, T.OTHER)
_SECTIONS = {"abstract": "abstract", "introduction": "intro", "conclusion": "conclusion", "result": "results",
             "experiment": "results", "evaluation": "results", "method": "method", "approach": "method",
             "related": "related", "discussion": "conclusion", "limitation": "conclusion"}
SECTION_NAMES = ("abstract", "intro", "method", "results", "conclusion", "related")
_WORD = re.compile(r"[a-z][a-z0-9-]+")

FEATURES = (
    ["prior", "prior_gap", "lexical", "overlap", "overlap_passage", "named", "named_passage", "novel",
     "typed", "typed_fit", "cue", "length", "rank", "first_source", "position", "first_in_passage",
     "row", "row_about", "caption", "note"]
    + [f"kind_{k}" for k in KINDS] + [f"typed_{k}" for k in KINDS]
    + [f"section_{s}" for s in SECTION_NAMES]
    + ["yes_no", "overlap_x_prior", "lexical_gap", "overlap_gap", "new_name", "new_number", "novel_x_overlap"]
    + ["rare_overlap", "rare_gap", "focus", "focus_near", "neighbour_overlap", "neighbour_rare"]
)
# The noun a what/which/how-many question asks for ("What format …" → format, "How many layers …" → layers): a
# sentence that answers tends to say it, or its neighbour does ("… released in JSON. This format …").
_FOCUS_Q = re.compile(r"^\W*(?:(?:in|on|for|from|to|with|by|at|of|under|between)\s+)?(?:what|which)\s+"
                      r"(?:(?:is|are|was|were)\s+(?:the|a|an)\s+)?(?:(?:kind|type|sort|form|version)s?\s+of\s+)?"
                      r"(?P<np>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)", re.I)
_FOCUS_HOW = re.compile(r"^\W*how\s+(?:many|much)\s+(?P<np>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)", re.I)
_NOT_FOCUS = {"is", "are", "was", "were", "do", "does", "did", "can", "could", "has", "have", "had", "will",
              "would", "should", "the", "a", "an", "of", "in", "on", "for", "to", "by", "with", "from", "at", "and",
              "or", "it", "its", "they", "their", "this", "these", "that", "authors", "paper", "main"}
_NAME_TOKEN = re.compile(r"(?<!^)(?<![.!?]\s)\b(?:[A-Z][A-Za-z0-9]*[A-Z0-9][\w-]*|[A-Z][a-z]+)\b")
_NUMBER_TOKEN = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?")


@lru_cache(maxsize=1)
def _cues() -> dict:
    return json.loads(CUES_PATH.read_text(encoding="utf-8"))


def cue_lexicon() -> dict[str, list[str]]:
    """Question class ("why", "how", "purpose", "compare") → words a sentence answering it tends to use."""
    return _cues()["classes"]


def not_negating() -> list[str]:
    """Negation words that negate nothing the evidence claims ("not only", "nor")."""
    return _cues()["not_negating"]


def negation_words() -> list[str]:
    """The words that make a yes/no question's evidence a no (core.query.reading.yes_no)."""
    return _cues()["negation"]


def question_focus(question: str) -> tuple[str, ...]:
    """The stems of the noun a question asks for (at most two words, up to the first function word); none for
    questions of other shapes."""
    m = _FOCUS_Q.match(question) or _FOCUS_HOW.match(question)
    if not m:
        return ()
    out: list[str] = []
    for w in m.group("np").lower().split():
        if w in _NOT_FOCUS:
            if out or w not in {"main", "authors", "paper"}:
                break
            continue
        out.append(T.stem(w))
    return tuple(out)


@lru_cache(maxsize=1 << 14)
def rarity(word: str) -> float:
    """How much a question word says, from its frequency in general English (wordfreq's Zipf scale, 0..8: "the"
    7.7, "format" 4.5, "json" 2.8): rare words decide which sentence is meant, common ones barely."""
    from wordfreq import zipf_frequency

    return max(8.0 - zipf_frequency(word, "en"), 0.5)


def question_class(question: str) -> str:
    q = question.lower().strip()
    if q.startswith("why") or " why " in q or "what is the reason" in q or "motivat" in q:
        return "why"
    if re.search(r"\b(used for|purpose|aim|goal|in order to)\b", q):
        return "purpose"
    if re.search(r"\b(compare|compared|versus|vs\.?|than|differ|difference|better|worse|outperform)\b", q):
        return "compare"
    if q.startswith("how") and not re.match(r"how (many|much|long|large|big|often|old)\b", q):
        return "how"
    return ""


@dataclass
class QuestionView:
    """What the features need of the question, computed once per question."""

    text: str
    kind: str
    stems: frozenset[str]
    named: tuple[str, ...]  # its rare named words (core.query.reading.coverage.distinctive)
    words: frozenset[str]
    cues: tuple[str, ...]
    yes_no: bool
    focus: tuple[str, ...] = ()
    weights: tuple[tuple[str, float], ...] = ()  # content stem → rarity (its rarest surface word)

    @classmethod
    def of(cls, question: str, named: list[str]) -> QuestionView:
        cls_ = question_class(question)
        return cls(text=question, kind=T.answer_type(question), stems=frozenset(T.stems(question)),
                   named=tuple(w.lower() for w in named), words=frozenset(T.words(question)),
                   cues=tuple(cue_lexicon().get(cls_, [])),
                   yes_no=T.yes_no_question(question),
                   focus=question_focus(question), weights=tuple(_stem_weights(question).items()))


def _stem_weights(question: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for w in _WORD.findall(question.lower()):
        st = T.stems(w)
        if st:
            out[st[0]] = max(out.get(st[0], 0.0), rarity(w))
    return out


def _section(source: Source | None) -> str:
    low = (source.section if source else "").lower()
    return next((name for key, name in _SECTIONS.items() if key in low), "")


def _cue(sentence_lower: str, cues: tuple[str, ...]) -> float:
    if not cues:
        return 0.0
    return float(any(re.search(rf"(?<![a-z]){re.escape(c)}", sentence_lower) for c in cues))


# A paper's own name is the head of its title ("SPECTER: Document-level …"); its sentences call it "our model".
_TITLE_NAME = re.compile(r"^\s*([^:]{2,40}?)\s*:\s")
_COINED = re.compile(r"(?<![\w-])(?:[A-Z][a-z]+[A-Z][\w-]*|[A-Z][A-Z0-9]{3,}[\w-]*)(?![\w-])")
_WE = re.compile(r"\b(?:we|our|us)\b", re.I)
_ACRONYM = re.compile(r"(?<![\w-])(?:[A-Z]{2,}[\w-]*|[A-Za-z][a-z]*[A-Z][\w-]*)")  # SGC, SciBERT: another system


@lru_cache(maxsize=1)
def _self_reference() -> re.Pattern:
    """ "our <noun>": how a paper speaks of what it presents (the nouns: reader_cues.json, `self_nouns`)."""
    nouns = "|".join(re.escape(n) for n in _cues()["self_nouns"])
    return re.compile(rf"\bour\s+(?:[\w-]+\s+)?(?:{nouns})s?\b", re.I)


def own_name(title: str, question_lower: str) -> str:
    """The name a paper's title gives it when the question says it; "" otherwise. A title names its paper by
    the part before its colon (one to three words: "SPECTER: Document-level …") or by a coined word in it, one
    with an inner capital or in capitals ("Combating Web Spam with TrustRank")."""
    m = _TITLE_NAME.match(title or "")
    names = [m.group(1)] if m and len(m.group(1).split()) <= 3 else []
    names += _COINED.findall(title or "")
    for name in names:
        if re.search(rf"(?<![\w-]){re.escape(name.lower())}(?![\w-])", question_lower):
            return name
    return ""


def _read_as(c: Candidate, name: str) -> str:
    """The sentence as the overlaps read it: a paper speaking of what it presents ("To train our model, we use …"
    in the SPECTER paper) also says the paper's `name` (own_name: "" when the question does not say it). A "we"
    beside another system's name does not: "For SGC, we remove …" is about a baseline."""
    if not name or not _WE.search(c.text):
        return c.text
    others = [m for m in _ACRONYM.findall(c.text) if m.lower() != name.lower()]
    return f"{c.text} ({name})" if _self_reference().search(c.text) or not others else c.text


def featurize(q: QuestionView, candidates: list[Candidate], source_of) -> None:
    """Fill each candidate's `features` (every name of FEATURES). `source_of(n)` is the context's source [n]."""
    if not candidates:
        return
    q_low = q.text.lower()
    names = {n: own_name(source.doc_title, q_low) if (source := source_of(n)) else ""
             for n in {c.n for c in candidates}}  # once per passage, not per sentence
    read_as = [_read_as(c, names[c.n]) for c in candidates]
    lexical = _bm25(read_as, q.stems)
    best_prior = max(c.prior for c in candidates)
    best_lexical = max(lexical)
    passages: dict[int, str] = {}
    for c, lex, text in zip(candidates, lexical, read_as):
        source = source_of(c.n)
        if c.n not in passages:
            passages[c.n] = (f"{source.text} {source.section} {source.doc_title}".lower() if source else "")
        low = text.lower()
        bag = term_bag(text, set(q.stems))
        overlap = len(q.stems & bag.keys()) / len(q.stems) if q.stems else 0.0
        passage_bag = set(T.stems(passages[c.n])) | bag.keys()
        words = set(T.words(c.text))
        f = dict.fromkeys(FEATURES, 0.0)
        f.update(
            prior=c.prior, prior_gap=c.prior - best_prior, lexical=lex, overlap=overlap,
            overlap_passage=len(q.stems & passage_bag) / len(q.stems) if q.stems else 0.0,
            named=(sum(T.mentions(low, w) for w in q.named) / len(q.named)) if q.named else 1.0,
            named_passage=(sum(T.mentions(passages[c.n] + " " + low, w) for w in q.named) / len(q.named))
            if q.named else 1.0,
            novel=min(len(words - q.words) / 8.0, 1.0),
            typed=float(c.typed > 0), typed_fit=min(c.typed, 2.0) / 2 if c.typed > 0 else 0.0,
            cue=_cue(low, q.cues), length=min(math.log1p(len(c.text)) / math.log1p(600), 1.0),
            rank=1.0 / c.n, first_source=float(c.n == 1),
            position=c.position / max(c.of - 1, 1), first_in_passage=float(c.position == 0),
            row=float(c.role == ROW), row_about=float(c.role == ROW and row_about(c.text, q.text)),
            caption=float(c.role == CAPTION), note=float(c.role == NOTE),
            yes_no=float(q.yes_no), overlap_x_prior=overlap * c.prior, lexical_gap=lex - best_lexical,
            # An answer adds a name or a number the question does not say ("a Samsung Nexus S", "30 nm").
            new_name=float(any(m.group().lower() not in q_low for m in _NAME_TOKEN.finditer(c.text))),
            new_number=float(any(m.group() not in q.text for m in _NUMBER_TOKEN.finditer(c.text))))
        f["novel_x_overlap"] = f["novel"] * overlap
        weight_total = sum(w for _, w in q.weights)
        f["rare_overlap"] = (sum(w for st, w in q.weights if st in bag) / weight_total) if weight_total else 0.0
        f["focus"] = (sum(st in bag for st in q.focus) / len(q.focus)) if q.focus else 0.0
        f[f"kind_{q.kind}"] = 1.0
        f[f"typed_{q.kind}"] = float(c.typed > 0)
        if section := _section(source):
            f[f"section_{section}"] = 1.0
        c.features = f
    best_overlap = max(c.features["overlap"] for c in candidates)
    best_rare = max(c.features["rare_overlap"] for c in candidates)
    at = {(c.n, c.position): c.features for c in candidates}
    for c in candidates:
        f = c.features
        f["overlap_gap"] = f["overlap"] - best_overlap
        f["rare_gap"] = f["rare_overlap"] - best_rare
        # The sentences either side in the same passage: an answer often follows the sentence that sets the
        # question's scene ("S2ORC is a corpus of … papers. Full text is released in JSON").
        around = [at[(c.n, c.position + d)] for d in (-1, 1) if (c.n, c.position + d) in at]
        f["neighbour_overlap"] = max((a["overlap"] for a in around), default=0.0)
        f["neighbour_rare"] = max((a["rare_overlap"] for a in around), default=0.0)
        f["focus_near"] = max([f["focus"]] + [a["focus"] for a in around])


def _bm25(texts: list[str], terms: frozenset[str]) -> list[float]:
    """BM25 over the candidate pool (its own document frequencies) of stemmed words, scaled to 0..1 by the
    question's weight."""
    if not terms:
        return [0.0] * len(texts)
    bags = [term_bag(t, set(terms)) for t in texts]
    avg = sum(sum(b.values()) for b in bags) / len(bags) or 1.0
    n = len(bags)
    df = {t: sum(t in b for b in bags) for t in terms}
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
    total = sum(idf.values()) or 1.0
    out = []
    for bag in bags:
        length = sum(bag.values()) or 1
        s = sum(idf[t] * bag[t] * 2.2 / (bag[t] + 1.2 * (0.25 + 0.75 * length / avg)) for t in terms if bag[t])
        out.append(min(s / total, 1.0))
    return out
