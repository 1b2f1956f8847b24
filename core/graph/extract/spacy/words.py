"""The word lists and typing rules of the spaCy extractor (core/graph/extract/spacy/extract.py), kept apart so
the rules can be read and tuned in one place. Everything here is lower-case."""
from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from core.schema.graph import EntityType as T

LEXICON_PATH = Path(__file__).parents[2] / "data" / "lexicon.json"
_LEXICON = json.loads(LEXICON_PATH.read_text(encoding="utf-8"))


def _words(key: str) -> set[str]:
    return set(_LEXICON[key])


# Words dropped from the start of a phrase: determiners, possessives, quantifiers, and the evaluative or deictic
# adjectives papers put in front of everything ("our novel approach", "such models", "the best results").
LEADING_NOISE = _words("leading_noise")

# Nouns that name nothing on their own in a paper: a phrase made only of these (and noise words) is dropped, and
# "<name> <one of these>" is the name ("PaSa's performance", "the BERT paper" → PaSa, BERT).
GENERIC = _words("generic")

# Multi-word leftovers that are still boilerplate (compared after the last word is made singular).
STOP_PHRASES = _words("stop_phrases")

# Gerunds that name a thing ("machine learning", "a learning rate", "question answering"); other -ing words
# ("using", "including") end a phrase.
GERUND_NOUNS = _words("gerund_nouns")

# Adjectives written as compounds ("Transformer-based", "task-specific"): never a name, never a phrase's end.
ADJECTIVE_SUFFIX = re.compile(r"-(based|like|style|specific|aware|driven|level|wise|free|oriented|related|"
                              r"dependent|independent|agnostic|centric|friendly|enabled|powered|guided|grained|form"
                              r"|length|scale|quality|sized|range)$", re.I)

# A figure, table or section reference: "Table 1", "Fig. 2a", "Section 3.2", "Eq. (4)", "Appendix B".
REFERENCE = re.compile(
    r"^(tab(le)?|fig(ure)?|figs|sec(tion)?|§|appendix|app|eq(uation)?|eqs|alg(orithm)?|line|page|chapter|ch|step"
    r"|row|col(umn)?|theorem|lemma|definition|def|proposition|prop|corollary|example|exp|experiment|setting"
    r"|footnote|part|stage|phase|round|layer|block|case)s?\.?\s*\(?[\dA-Za-z]{0,3}[\d.)]*[a-z]?$", re.I)

# --- entity types from the phrase's words (the last word singular)

DATASET_HEADS = _words("dataset_heads")
METRIC_WORDS = _words("metric_words")
# Heads that make a metric only with a modifier ("F1 score", "test error"; not "score" or "error").
WEAK_METRIC_HEADS = _words("weak_metric_heads")
TASK_HEADS = _words("task_heads")
# Heads that make a task only with a modifier ("natural language inference", not "inference").
WEAK_TASK_HEADS = _words("weak_task_heads")
MODEL_HEADS = _words("model_heads")
METHOD_HEADS = _words("method_heads")
SOFTWARE_HEADS = _words("software_heads")
FIELDS = _words("fields")
FIELD_HEADS = _words("field_heads")
# An organisation is named by one of these as its head, or before "of"/"for" (University of Washington).
INSTITUTION_WORDS = _words("institution_words")
# Words the NER's ORG spans must contain to be believed (it calls GLUE and BERT organisations).
ORG_WORDS = INSTITUTION_WORDS | _words("organisation_words")
# Parts of an institution ("Department of Surgery", "Institute for Biomedical Research"): named alone, the
# affiliation lost its whole; a name of its own needs more than the subject after "of"/"for".
INSTITUTION_UNITS = _words("institution_units")
# Latin words after "in" ("in vitro", "in situ"): a phrase found from them lost its "in".
AFTER_IN = _words("after_in")
# Words of abbreviated journal names ("Phys. Rev. Lett."): a reference's, never a term's.
JOURNAL_ABBREVIATIONS = _words("journal_abbreviations")
# "<name> <head>" is the name, typed by the head when it says something ("the GLUE benchmark" → GLUE, dataset).
REDUCIBLE_HEADS = dict(_LEXICON["reducible_heads"])
# A field's own types (core/graph/fields.py) come first: only its cues vote for them.
TYPE_PRIORITY = tuple(t.value for t in (T.GENE_OR_PROTEIN, T.DISEASE, T.ORGANISM, T.CELL_OR_TISSUE, T.ASSAY,
                                        T.CHEMICAL, T.MATERIAL, T.INSTRUMENT, T.PROPERTY, T.DATASET, T.METRIC,
                                        T.TASK, T.MODEL, T.METHOD, T.SOFTWARE, T.FIELD, T.ORGANIZATION, T.PERSON,
                                        T.CONCEPT))
# Model names often carry a size: GPT-3, BERT-base, Llama-2-7B, T5-large.
MODEL_NAME = re.compile(r"(-|^)(base|large|small|xl|xxl|tiny|mini|medium|\d+(\.\d+)?[bmk])$|-\d+(\.\d+)?[a-z]?$",
                        re.I)
# Words before "on"/"from" that make the name after it a dataset: "trained on X", "results on X".
DATASET_CUES = tuple(_LEXICON["dataset_cues"])

# "<dataset> test set", "<dataset> dev": a split of a dataset is the dataset.
SPLIT_WORDS = _words("split_words")
SPLIT_NOUNS = _words("split_nouns")

LIGHT_VERBS = _words("light_verbs")
ABBREVIATIONS = _words("abbreviations")


def type_of_phrase(words: Sequence[str]) -> str:
    """The entity type a phrase's lower-case words imply (last word singular), or "" when they say nothing."""
    if not words:
        return ""
    full, head = " ".join(words), words[-1]
    if full in FIELDS:
        return "field"
    if (full in METRIC_WORDS or " ".join(words[-2:]) in METRIC_WORDS
            or head in METRIC_WORDS and (head not in WEAK_METRIC_HEADS or len(words) > 1)):
        return "metric"
    if head in DATASET_HEADS or full in DATASET_HEADS:
        return "dataset"
    if head in TASK_HEADS and (head not in WEAK_TASK_HEADS or len(words) > 1):
        return "task"
    if head in MODEL_HEADS:
        return "model"
    if head in METHOD_HEADS or full in METHOD_HEADS:
        return "method"
    if head in SOFTWARE_HEADS:
        return "software"
    if head in FIELD_HEADS and len(words) > 1:
        return "field"
    return ""


def pick_type(votes: Iterable[str]) -> str:
    """The most voted type other than concept; ties go to the more specific type (TYPE_PRIORITY)."""
    counts = Counter(v for v in votes if v and v != "concept")
    if not counts:
        return "concept"
    best = max(counts.values())
    return next(t for t in TYPE_PRIORITY if counts.get(t) == best)


def singular(word: str) -> str:
    """A plain plural rule for keys and typing ("models" → "model", "corpora" stays); names are left alone."""
    w = word
    if len(w) <= 3 or not w.isalpha() or not w.islower():
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "xes", "ches", "shes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us", "is", "as", "os", "ys", "ics")):
        return w[:-1]
    return w
