"""What a whole paper says about each candidate entity of the spaCy extractor (core/graph/extract/spacy/extract.py):
its mentions, spellings, type votes and support, and the paper-wide rules read from them (footnote marks glued to a
name, acronyms whose long form is common words, names only table cells give)."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from core.graph.extract.entity_types import known_type
from core.graph.extract.spacy import words as W
from core.graph.extract.spacy.records import Mention, entity_key
from core.graph.extract.terms import rarity

# A reference number glued to a name: "GraphLIME87", "MACCS138" (names of four letters or more: not "BM25").
_REFERENCE_NUMBER = re.compile(r"([A-Za-z][\w-]*[A-Za-z])(\d{2,3})")
_ACRONYM = re.compile(r"[A-Z][A-Z\d]{1,4}")
_NOT_A_LONG_FORM = {"to", "similar", "et", "al", "al.", "see", "e.g.", "i.e.", "e.g", "i.e", "cf.", "as", "is", "are"}


@dataclass
class Paper:
    """What the whole paper says about each candidate key: the evidence the term filter and the typing weigh."""

    aliases: dict[str, str] = field(default_factory=dict)  # acronym key → its long form
    long_to_short: dict[str, str] = field(default_factory=dict)  # entity key of a long form → its acronym's key
    acronym_names: dict[str, str] = field(default_factory=dict)
    counts: Counter = field(default_factory=Counter)  # mentions outside figures' inner text
    prose: Counter = field(default_factory=Counter)  # mentions in sentences (captions too), not table cells
    decapitalised: dict[str, bool] = field(default_factory=dict)  # only ever seen lower-cased from a capital
    row_labels: set[str] = field(default_factory=set)  # in a table row's first cell
    spellings: dict[str, Counter] = field(default_factory=dict)
    votes: dict[str, list[str]] = field(default_factory=dict)
    words: dict[str, list[str]] = field(default_factory=dict)
    named: dict[str, bool] = field(default_factory=dict)
    shaped: dict[str, bool] = field(default_factory=dict)
    adjective_led: dict[str, bool] = field(default_factory=dict)
    highlighted: set[str] = field(default_factory=set)
    in_text: set[str] = field(default_factory=set)  # named outside reference entries
    terms: dict[str, str] = field(default_factory=dict)  # kept key → its type
    names: dict[str, str] = field(default_factory=dict)  # kept key → display name
    field: object = None  # the paper's core.graph.fields.Field (None: computer science)


def footnoted(counts: Counter, mentions: list[Mention]) -> dict[str, tuple[str, str]]:
    """Keys of names written with a footnote number glued on ("SCIDOCS3", "SPECTER2" where the paper says SPECTER
    far more often) → the key and name without it. A hyphen ("GPT-3") or a rarer stem keeps the number, unless the
    paper glues its reference numbers to names ("GraphLIME87", "CF-GNNExplainer104", "SELFIES106 molecular
    representation": three names or more end in a two- or three-digit number), where any such number goes."""
    out = {}
    for m in mentions:
        found = re.fullmatch(r"([A-Za-z][\w-]*[A-Za-z])(\d{1,3})", m.name)
        if found and m.key not in out:
            stem = entity_key(found.group(1))
            if counts.get(stem, 0) >= (2 if len(found.group(2)) == 1 else 1) * counts[m.key]:
                out[m.key] = (stem, found.group(1))
    glued = {m.key: m.name for m in mentions if any(_glued_number(w) for w in m.name.split())}
    if len(glued) >= 3:
        for key, name in glued.items():
            bare = " ".join(_glued_number(w) or w for w in name.split())
            out[key] = (entity_key(bare), bare)
    return out


def _glued_number(word: str) -> str:
    """The name without the reference number glued to it, or ""."""
    found = _REFERENCE_NUMBER.fullmatch(word)
    return found.group(1) if found and sum(c.isalpha() for c in found.group(1)) >= 4 else ""


def readable(key: str, name: str, paper: Paper) -> bool:
    """Whether what the paper wrote is enough to tell a name. Table cells and header fragments ("Crawler Actions",
    "oBERT", "Type ofhuman evaluation") are not prose: a name only they have needs the shape of one (an acronym,
    CamelCase, digits) and to label a row (a model's results) or to be in the lexicon. One word
    only ever seen capitalised at a sentence's start ("Albert" of "Albert Szent-Györgyi" → "albert") cannot be
    told from a common word, nor matched to the lexicon (ALBERT), unless its word says what it is ("Accuracy"). An
    acronym the paper never defines needs two sentences."""
    if paper.decapitalised.get(key) and " " not in name and not W.type_of_phrase(paper.words[key]):
        return False  # "Accuracy" at a caption's start is still a metric
    if paper.prose[key] == 0 and key not in paper.aliases:
        # Two capitals only in a table ("LG" of "cs.LG", "RM") are a column's or a category's code.
        return paper.shaped[key] and (key in paper.row_labels and len(key) > 2 or bool(known_type(key)))
    if _ACRONYM.fullmatch(name) and key not in paper.aliases and not known_type(key):
        # An acronym the paper never spells out, written once in a sentence: a table's column ("USR: User
        # activity", "REL"), a unit ("USD"), or a name the paper does not talk about; unless its field knows the
        # name ("ELISA", "XRD").
        return paper.prose[key] >= 2 or paper.field is not None and bool(paper.field.name_type(name))
    return True


def defined(key: str, paper: Paper) -> bool:
    """An acronym whose long form is a term. "RQ (research questions)" and "FT (full text)" abbreviate common words
    only: the acronym is a shorthand of the paper, not a term to look up."""
    if key not in paper.aliases:
        return False
    words = paper.aliases[key].lower().split()
    if not words or any(w in _NOT_A_LONG_FORM for w in words):
        return False  # "SAT (similar to Zhang et al.)": a remark in brackets, not a definition
    words[-1] = W.singular(words[-1])
    field_type = paper.field.cue_type(words) if paper.field is not None else ""
    return bool(W.type_of_phrase(words) or field_type) or known_type(key) != "" or rarity(words) < 4.5


def fall_back_to_name(m: Mention, terms: dict[str, str]) -> None:
    """A phrase that is no term but starts with one ("RoBERTa match" where the tagger read "matches" as a noun,
    "BERT code", "TABLEFORMER cannot") is a mention of that term."""
    words = m.name.split()
    for n in range(len(words) - 1, 0, -1):
        key = entity_key(" ".join(words[:n]))
        if key in terms:
            m.key, m.name = key, " ".join(words[:n])
            return


def name_quality(name: str) -> int:
    """Among spellings seen equally often: "RoBERTa" over "ROBERTA" (a heading in capitals) over "roberta"."""
    return 2 if any(c.islower() for c in name) and any(c.isupper() for c in name) else int(name.isupper())
