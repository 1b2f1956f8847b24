"""Paper-wide evidence of the LLM-free extractor (core/graph/extract/spacy/extract.py): a paper's mentions read
together — acronyms and their long forms, footnote marks, counts, where a term is named — and, for each candidate,
its type voted from all its mentions, the lexicon and the words around a name (entity_types.py), outside computer
science from the cues of the paper's field (core/graph/fields.py), and whether it is a term at all
(core/graph/extract/terms.py)."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from core.graph.extract.entity_types import default_type, known_type, looks_like_person, name_type
from core.graph.extract.spacy import words as W
from core.graph.extract.spacy.paper import Paper, defined, fall_back_to_name, footnoted, name_quality, readable
from core.graph.extract.spacy.records import Sentence, entity_key
from core.graph.extract.terms import Evidence, is_term, zipf
from core.graph.fields import CS, Field, field_of
from core.schema.records import Chunk

# Letters of mathematical notation ("ℎ2", "𝑥", "𝜃"): a formula's symbols the PDF's text layer kept, never a term.
# A footnote or citation mark glued to a word: "controversial.5e7", "Asia.1e3".
_GLUED_MARK = re.compile(r"[a-z]\.\d")
_BARE_ACRONYM = re.compile(r"[A-Z]{2,6}s?")
_MATH_LETTERS = re.compile(r"[\u210a-\u2134\U0001d400-\U0001d7ff\u1d2c-\u1d6a\u2070-\u209c]")


def read_paper(chunks: list[Chunk], sentences: list[list[Sentence] | None], field: Field | None = None,
               allowed: Callable[[str, Field], str] | None = None) -> Paper:
    """Paper-wide evidence, read in chunk order (index, then id) so it never depends on the order given. Outside
    computer science, the field's cues vote (core/graph/fields.py) and the computer-science rules' votes become
    the field's (a "model" is a method; an acronym nothing types stays a concept, not a method)."""
    field = field or field_of(CS)
    paper = Paper(field=field)
    order = sorted(range(len(chunks)), key=lambda n: (chunks[n].index, chunks[n].id))
    mentions = [(m, s) for n in order for s in (sentences[n] or []) for m in s.mentions]
    for m, _ in mentions:
        if m.alias and m.key not in paper.aliases:
            paper.aliases[m.key], paper.acronym_names[m.key] = m.alias, m.name
    paper.long_to_short = {entity_key(long): short for short, long in paper.aliases.items()}
    stems = footnoted(Counter(m.key for m, _ in mentions), [m for m, _ in mentions])
    for m, s in mentions:
        if not m.alias and m.key in paper.long_to_short:  # the long form of an acronym the paper defines
            m.key = paper.long_to_short[m.key]
            m.name, m.named, m.name_shaped = paper.acronym_names[m.key], True, True
        elif m.key in stems:  # "SCIDOCS3": SCIDOCS and its footnote mark
            m.key, m.name = stems[m.key]
        if not s.cited:
            paper.in_text.add(m.key)
        if not s.fragments:
            paper.counts[m.key] += 1
            if not s.row:
                paper.prose[m.key] += 1
        if m.start < s.label_end:
            paper.row_labels.add(m.key)
        paper.decapitalised[m.key] = paper.decapitalised.get(m.key, True) and m.decapitalised
        if s.highlighted:
            paper.highlighted.add(m.key)
        paper.spellings.setdefault(m.key, Counter())[m.name] += 1
        paper.votes.setdefault(m.key, []).extend(m.types)
        if not field.is_cs and (cue := field.context_type(m.name, *m.near)):
            paper.votes[m.key].extend([cue] * 2)
        paper.words.setdefault(m.key, m.words or m.key.split())
        paper.named[m.key] = paper.named.get(m.key, False) or m.named
        paper.shaped[m.key] = paper.shaped.get(m.key, False) or m.name_shaped
        paper.adjective_led[m.key] = paper.adjective_led.get(m.key, True) and m.adjective_led
    for key, spellings in paper.spellings.items():
        if not key or key not in paper.counts or key not in paper.in_text:
            continue  # only inside figures (OCR'd words the text never uses) or reference entries
        name = max(spellings, key=lambda n: (spellings[n], name_quality(n), n))
        known = known_type(key) or known_type(entity_key(name))
        lexical = known or ("metric" if key in W.METRIC_WORDS and key not in W.WEAK_METRIC_HEADS
                            else "field" if key in W.FIELDS and (" " in key or paper.named[key]) else "")
        if field.is_plain(paper.words[key]):
            votes = []  # "patient", "participants": people studied, never a method
        elif field.is_cs:
            votes = paper.votes[key] + [known] * 3 + [name_type(name)] * 2
        else:
            # A name's shape says software, dataset or metric in any field ("AqSolDB"); a model only in computer
            # science ("IL-6" has a model's size suffix).
            shape = name_type(name)
            votes = _field_votes(key, name, paper.votes[key] + [known] * 3 + [shape if shape != "model"
                                                                                   else ""] * 2, paper, field)
            lexical = lexical or field.name_type(name)
        kind = W.pick_type(votes)
        if kind == "concept" and not field.is_cs and key not in paper.aliases:
            kind = field.untyped_name(name) or kind  # "Pdc5", "EF-Tu" in a biology paper
        if not readable(key, name, paper) or notation(key, name, paper, bool(lexical)):
            continue
        evidence = Evidence(name=name, words=paper.words[key], named=paper.named[key],
                            name_shaped=paper.shaped[key], typed="" if kind == "concept" else kind,
                            mentions=paper.counts[key], defined=defined(key, paper),
                            highlighted=key in paper.highlighted, known=bool(lexical),
                            adjective_led=paper.adjective_led[key],
                            weak_head=paper.words[key][-1] in W.WEAK_TASK_HEADS)
        if not is_term(evidence):
            continue
        if kind == "concept" and looks_like_person(name, zipf):
            kind = "person"
        elif kind == "concept" and field.is_cs and not _BARE_ACRONYM.fullmatch(name):
            # An acronym nothing types stays a concept: a representation, a format or a measure as often as a
            # method ("LIR", "HTML", "CBR"); a CamelCase or numbered name is most often a system ("TextRunner").
            kind = default_type(paper.named[key], paper.shaped[key])
        paper.terms[key] = allowed(kind, field) if allowed else kind
        paper.names[key] = name
    for m, _ in mentions:
        if m.key not in paper.terms:
            fall_back_to_name(m, paper.terms)
    return paper



def _field_votes(key: str, name: str, votes: list[str], paper: Paper, field: Field) -> list[str]:
    """A paper outside computer science: the computer-science votes as the field reads them (a "model" is a
    method: a mouse model, a regression model), and the field's cues: its heads, suffixes and words on
    the phrase and on an acronym's long form ("AMD (age-related macular degeneration)" → disease), the shape
    of the name (a formula, a binomial, a gene symbol). A word the field never types ("patient") has no vote."""
    words = paper.words[key]
    if field.is_plain(words):
        return []
    # A model's size suffix ("-1", "-2", "-large") in the name voted "model" at each mention: outside computer
    # science that shape says nothing ("LKB-1", "ANOH-2", "IL-6").
    shaped_model = W.MODEL_NAME.search(name) is not None
    mapped = [field.cs_vote(v) for v in votes if not (shaped_model and v == "model")]
    own = [field.cue_type(words), field.name_type(name)]
    if key in paper.aliases:
        long_words = paper.aliases[key].lower().split()
        if long_words:
            long_words[-1] = W.singular(long_words[-1])
            spelled = field.cue_type(long_words)
            if spelled:  # what the paper spells out beats the shape: "SCD (sickle cell disease)" is no gene
                own = [own[0], spelled]
    # The field's own cues outvote the computer-science rules, however often those voted.
    return mapped + [v for v in own if v] * (3 + len(votes))


def notation(key: str, name: str, paper: Paper, known: bool) -> bool:
    """A symbol or a string of symbols, not a term: a formula's letters ("ℎ2", "𝑥"); a reagent string or a
    peak list's slashes ("TFA/anisole/H2O/DCM": three or more parts); a word with a mark glued on
    ("controversial.5e7"); in computer science, a name of one or two
    letters, not both capitals, the paper never defines nor the lexicon knows ("h2", "xN": a variable of its
    equations)."""
    if _MATH_LETTERS.search(name) or name.count("/") >= 2 or _GLUED_MARK.search(name):
        return True
    letters = sum(c.isalpha() for c in name)
    if known or defined(key, paper):
        return False
    if name.isalpha() and name.islower() and letters <= 5 and zipf(name) == 0:
        return True  # "qvol", "ecl": a variable's or a sample's code, no word and no name
    cs = paper.field is None or paper.field.is_cs
    # Two capitals ("OA", "QA") are an acronym more often than a variable in computer science: readable() asks
    # them to come back. Outside it, two letters the paper never spells out are a sample's or a group's code
    # ("CF", "HT", "LO").
    if not cs and letters <= 3 and name[:1].islower() and not name.islower():
        return True  # "tLS": a sample's label
    return letters <= 2 and (not name.isupper() or not cs)
