"""The entity mentions of a sentence, for the spaCy extractor (core/graph/extract/spacy/extract.py). They are
- noun phrases found from part-of-speech tags, cleaned of determiners, "our", "such", numbers and citations;
- acronyms with their definitions, both ways round: "Bidirectional Encoder Representations from Transformers
  (BERT)" is one mention named BERT (the name later chunks use) whose alias is the long form;
- in a paper's first chunk only, the people and organisations of its byline (spaCy's NER is slow and its labels are
  wrong on science: MultiNLI → PERSON; elsewhere it is not run).
Filters drop paper boilerplate ("this paper", "the results"), figure and section references, URLs, e-mails, maths,
variables, over-long phrases, cited authors ("Saier and Färber") and abbreviations that are none (spacy_abbrev.py).
Each mention carries type votes from rules on its head word (core/graph/extract/spacy/words.py); the verbs between
mentions become the relations' keywords."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.graph.extract.acronyms import definitions, singular_acronym
from core.graph.extract.entity_types import context_type
from core.graph.extract.spacy import words as W
from core.graph.extract.spacy.abbrev import one_word_shorthand, spelled_by
from core.graph.extract.spacy.byline import byline_mentions
from core.graph.extract.spacy.records import Mention, entity_key
from core.graph.extract.spacy.spans import broken_or_cited, species_name
from core.graph.extract.spacy.text import PROSE, letter_count
from core.graph.extract.terms import RARE, zipf
from core.models.nlp import Lexicon

MAX_PHRASE_WORDS = 6
MAX_PHRASE_CHARS = 80

_PUNCT_BREAK = set(".,;:!?()[]{}\"'“”‘’«»")
_JOINERS = set("-–/@+")
_MATH = set("\\^_{}=<>|$~∑∏∫√±×÷≤≥≈∈∀∃∂∇")
_VERSION = re.compile(r"v\d+(\.\d+)*[a-z]?", re.I)
_PHRASE_POS = {"NOUN", "PROPN", "ADJ", "X"}
_CONNECTORS = {"of", "for", "on", "and", "in", "de"}
_TRAILING_NOISE = {"etc", "etc.", "cannot", "can", "not"}
# Words a phrase never starts with: numbers, sizes and section numbers ("12M node", "B.1 Fine-grained evaluation").
_LEADING_NUMBER = re.compile(r"[\d.,]+[kmbt%x]?|\d+(st|nd|rd|th)|[A-Z]\.(\d+(\.\d+)*)?|[ivx]+\.", re.I)
# A unit a number left behind ("µg/mL streptomycin", "mM EDTA", "U/mL penicillin"): a prefixed unit, a ratio of units.
_PER_UNIT = r"/(?:[µμnmk]?(?:g|l|L|m|s)|kg|h|min|day|well)"
_LEADING_UNIT = re.compile(rf"(?:[µμnmkp](?:g|l|L|M|mol|m|s)|U|IU)(?:{_PER_UNIT})*"
                           rf"|[µμnmkp]?(?:g|l|L|M|mol)(?:{_PER_UNIT})+")


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


def _title_case(words: list[_Word]) -> bool:
    """A heading or title: most words Capitalised, so a capital says nothing about a name."""
    alpha = [w.text for w in words if letter_count(w.text) >= 3]
    return len(alpha) >= 2 and sum(w[0].isupper() for w in alpha) >= 0.7 * len(alpha)


# ---------------------------------------------------------------------------------------------- mentions


class SentenceReader:
    """The entity mentions of one sentence."""

    def __init__(self, lex: Lexicon, doc, start: int, end: int, mode: str):
        self.lex, self.doc, self.start, self.end = lex, doc, start, end
        self.words = _words(doc, start, end)
        self.title = mode != PROSE or _title_case(self.words)
        alpha = [w.text for w in self.words if letter_count(w.text) >= 3]
        self.capitals = len(alpha) >= 2 and sum(w.isupper() for w in alpha) >= 0.6 * len(alpha)  # "1 INTRODUCTION"

    def mentions(self, byline: Sequence) -> list[Mention]:
        taken: set[int] = set()
        out: list[Mention] = []

        def add(mention: Mention | None) -> None:
            if mention and not taken.intersection(range(mention.start, mention.end)):
                out.append(mention)
                taken.update(range(mention.start, mention.end))

        for first, last, short, long in definitions(self.doc, self.start, self.end):
            if not spelled_by(short, long):
                continue  # "self-attention module (SO)": letters found inside words, not an abbreviation
            long_words = [w.lower() for w in long.split()]
            long_words[-1] = W.singular(long_words[-1])
            types = [W.type_of_phrase(long_words), self._name_type(short)]
            after = self.doc[last].lower_ if last < self.end else ""
            if W.REDUCIBLE_HEADS.get(W.singular(after)):  # "... Evaluation (GLUE) benchmark"
                types.append(W.REDUCIBLE_HEADS[W.singular(after)])
                last += 1
            add(Mention(key=entity_key(short), name=short, start=first, end=last, alias=long, types=types,
                        words=[short.lower()], named=True, name_shaped=True))
        for ent in byline:
            if ent.start >= self.start and ent.end <= self.end:
                for mention in byline_mentions(ent):
                    add(mention)
        for run in self._runs():
            for mention in self._phrase_mentions(run):
                add(mention)
        out.sort(key=lambda m: m.start)
        self._dataset_cues(out)
        return out

    def verbs(self, mentions: list[Mention]) -> list[tuple[int, str]]:
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
        """Tokens that never belong to an entity: URLs, maths, the authors of "Devlin et al." and "Saier and
        Färber", and the shorthand of one word ("relation (REL)", "all sequences (SEQ)")."""
        out: set[int] = set()
        words = self.words
        for n, w in enumerate(words):
            tokens = self.doc[w.start:w.end]
            if any(t.like_url or t.like_email or set(t.text) & _MATH for t in tokens):
                out.update(range(w.start, w.end))
            if n + 1 < len(words) and words[n + 1].lower in ("et", "et al", "et al."):
                out.update(range(w.start, w.end))
            if (n + 2 < len(words) and words[n + 1].lower == "and" and self._surname(w)
                    and self._surname(words[n + 2])):
                out.update(range(w.start, w.end))
                out.update(range(words[n + 2].start, words[n + 2].end))
            if (0 < n < len(words) - 2 and words[n - 1].text == "(" and words[n + 1].text == ")" and n >= 2
                    and w.text.isupper() and one_word_shorthand(w.lower, words[n - 2].lower)):
                out.update(range(w.start, w.end))
        return out

    def _surname(self, w: _Word) -> bool:
        """A cited author's surname: capitalised, not all capitals, no digits, not a dictionary word."""
        return (w.text[:1].isupper() and not w.text.isupper() and not is_name_shaped(w.text) and w.text.isalpha()
                and not self.lex.is_common(w.text))

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
        if letter_count(w.text) == 0 or self.lex.is_adverb(w.text):
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

    def _phrase_mentions(self, run: list[_Word]) -> list[Mention]:
        binomial = species_name(self.doc, self.start, run)
        if binomial:
            return [binomial]
        words = list(run)
        while words and (words[0].lower in W.LEADING_NOISE and not self._is_name(words[0])
                         or words[0].lower in W.AFTER_IN and words[0].start > self.start  # "in vitro"
                         and self.doc[words[0].start - 1].lower_ == "in"
                         or words[0].tag in ("JJR", "JJS") or letter_count(words[0].text) == 0
                         or _LEADING_NUMBER.fullmatch(words[0].text)
                         or len(words) > 1 and _LEADING_UNIT.fullmatch(words[0].text)
                         or words[0].tag == "VBG" and words[0].lower not in W.GERUND_NOUNS and not words[0].hyphenated
                         or words[0].lower in _CONNECTORS
                         # "long-form summarization dataset", "model-agnostic method": a kind of, not a name
                         or len(words) > 1 and W.ADJECTIVE_SUFFIX.search(words[0].text) is not None
                         or words[0].tag == "VBG" and self._after_auxiliary(words[0])  # "is not learning X"
                         or self._after_citation(words[0])):  # "Yin et al. leveraged row encoder"
            words.pop(0)
        while words and (words[-1].pos == "ADJ" and not self._is_name(words[-1]) or letter_count(words[-1].text) == 0
                         or W.ADJECTIVE_SUFFIX.search(words[-1].text) or words[-1].lower in _CONNECTORS
                         or words[-1].lower in _TRAILING_NOISE or re.fullmatch(r"(19|20)\d\d[a-z]?", words[-1].text)):
            words.pop()
        if not words:
            return []
        names = [self._is_name(w) for w in words]
        shaped = [is_name_shaped(w.text) for w in words]
        if self.title and any(shaped) and not all(shaped):
            # A cited title or a heading ("Fine-Tuning LLaMA for Multi-Stage Text Retrieval"): its capitals say
            # nothing, its acronyms and CamelCase names do.
            first, last = shaped.index(True), len(shaped) - shaped[::-1].index(True)
            words, names = words[first:last], names[first:last]
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
        # "ACL IDs", "GROBID PDFs": a generic word's acronym in the plural after a name.
        plural_generic = bool(re.fullmatch(r"[A-Z]{2,}s", words[-1].text)) and words[-1].text[:-1].lower() in W.GENERIC
        if (len(words) >= 2 and all(names[:-1]) and (not names[-1] or plural_generic)
                and (head in W.REDUCIBLE_HEADS or head in W.GENERIC or plural_generic)):
            # "<name> <head>": the GLUE benchmark → GLUE (a dataset), PaSa's performance → PaSa.
            hint = W.REDUCIBLE_HEADS.get(head, "")
            if head == "score" and " ".join(w.lower for w in words[:-1]) in W.METRIC_WORDS:
                hint = "metric"  # "BLEU score" is a metric; "GLUE score" is a score on a benchmark
            words, names = words[:-1], names[:-1]
        elif (len(words) >= 2 and all(is_name_shaped(w.text) for w in words[:-1]) and not names[-1]
              and not any(p.islower() for w in words[:-1] for p in re.split(r"[-–/]", w.text))
              and not W.type_of_phrase(self._lower_words(words)) and len(head) >= 3 and zipf(head) > RARE):
            # "MACCS descriptors", "LATEX parse", "S2ORC citation contexts": a use of the name; the name is the
            # entity ("BBB permeability", whose noun is rare, stays a phrase).
            words, names = words[:-1], names[:-1]
        elif len(words) >= 2 and all(names[:-1]) and head in W.METRIC_WORDS:
            # "MultiNLI accuracy", "SQuAD F1": the benchmark and the metric, two entities.
            return self._mention(words[:-1], names[:-1], "") + self._mention(words[-1:], names[-1:], "")
        return self._mention(words, names, hint)

    def _after_citation(self, w: _Word) -> bool:
        """The verb slot after "et al." (the tagger reads "leveraged" there as a name)."""
        return (w.text.islower() and w.start - 2 >= self.start and self.doc[w.start - 1].text == "."
                and self.doc[w.start - 2].lower_ == "al")

    def _after_auxiliary(self, w: _Word) -> bool:
        return w.start > self.start and self.doc[w.start - 1].pos_ in ("AUX", "PART")

    def _lower_words(self, words: list[_Word]) -> list[str]:
        """Lower-case words of a phrase, the last one singular, for the typing rules and keys."""
        out = [w.lower for w in words]
        last = words[-1]
        if last.tag in ("NNS", "NNPS") and not last.hyphenated:
            out[-1] = self.lex.lemma(self.doc[last.end - 1])
        else:
            out[-1] = W.singular(out[-1])
        return out

    def _mention(self, words: list[_Word], names: list[bool], hint: str) -> list[Mention]:
        if not words or len(words) > MAX_PHRASE_WORDS:
            return []
        first, last = words[0].start, words[-1].end
        institution = words[-1].lower in W.INSTITUTION_WORDS or any(
            a.lower in W.INSTITUTION_WORDS and b.lower in ("of", "for") for a, b in zip(words, words[1:]))
        if institution and len(words) >= 2 and all(w.text[:1].isupper() or w.lower in _CONNECTORS for w in words):
            # "Allen Institute for AI", "University of Washington": capitals kept even in a heading.
            name = " ".join(w.text for w in words)
            return [Mention(key=entity_key(name), name=name, start=first, end=last, types=["organization"] * 3,
                            words=[w.lower for w in words], named=True)]
        display = [w.text if is_name or (w.pos == "PROPN" and not self.title and not w.sent_start) else w.lower
                   for w, is_name in zip(words, names)]
        if not names[-1] and words[-1].tag == "NNS" and not words[-1].hyphenated:
            lemma = self.lex.lemma(self.doc[words[-1].end - 1])
            if len(lemma) >= 3 and lemma not in ("datum", "medium") and not words[-1].lower.endswith("ics"):
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
        return [Mention(key=entity_key(name), name=name, start=first, end=last, types=types,
                        plain=len(words) == 1 and not names[0], words=self._lower_words(words), named=any(names),
                        name_shaped=any(is_name_shaped(w.text) for w in words),
                        adjective_led=len(words) > 1 and words[0].pos == "ADJ" and not names[0]
                        and not words[0].hyphenated,
                        decapitalised=any(w.text[:1].isupper() and d[:1].islower() for w, d in zip(words, display)))]

    @staticmethod
    def _acceptable(name: str, words: list[_Word], names: list[bool]) -> bool:
        lower = name.lower()
        if not 2 <= len(name) <= MAX_PHRASE_CHARS or letter_count(name) < (1 if any(names) else 2):
            return False
        if letter_count(name) < 0.5 * len(name.replace(" ", "")):
            return False  # numbers and symbols, not words
        if W.REFERENCE.match(lower) or entity_key(lower) in W.STOP_PHRASES or lower in W.STOP_PHRASES:
            return False
        if any(len(w.text) == 1 and w.text.isalpha() for w in words):
            return False  # a variable (x, k, i)
        if any(ch in name for ch in "()[]{}|,;") or re.search(r"[A-Za-z]\.[^\W\d_]|[Α-Ωα-ω]", name):
            return False  # brackets, or maths read as text ("LSTM.ŒgkI")
        if broken_or_cited([w.text for w in words]):
            return False  # "Rev. Lett", "veried": a reference's journal, or text the PDF broke
        if not any(names) and all(w.lower in W.LEADING_NOISE or W.singular(w.lower) in W.GENERIC
                                  or w.lower in W.GENERIC for w in words):
            return False  # "the results", "our approach", "this paper", "previous work"
        if len(words) == 1 and not is_name_shaped(name) and (W.singular(lower) in W.GENERIC or len(name) < 3):
            return False  # "Dataset", "Results": a capital is not enough to make a generic word a name
        return True

    @staticmethod
    def _name_type(name: str) -> str:
        return "model" if is_name_shaped(name) and W.MODEL_NAME.search(name) else ""

    def _dataset_cues(self, mentions: list[Mention]) -> None:
        """A name after "trained on", "results on", "collected from" is most likely a dataset; "we propose X",
        "X outperforms", "the X library" say what X is too (core/graph/extract/entity_types.py)."""
        for m in mentions:
            if m.named and len(m.words) == 1:
                before = [t.lower_ for t in self.doc[max(self.start, m.start - 2):m.start]]
                after = [t.lower_ for t in self.doc[m.end:min(self.end, m.end + 1)]]
                cue = context_type(before, after)
                if cue:
                    m.types.append(cue)
                m.near = (before, [t.lower_ for t in self.doc[m.end:min(self.end, m.end + 2)]])
            if m.start - 1 < self.start or not any(c.isupper() for c in m.name):
                continue
            if self.doc[m.start - 1].lower_ not in ("on", "from"):
                continue
            before = self.doc[max(self.start, m.start - 6):m.start - 1]
            if any(t.lower_.startswith(W.DATASET_CUES) for t in before):
                m.types.append("dataset")
