"""A question's search keywords, as LightRAG splits them: low-level (entities) for local search, high-level
(themes) for global search. One cached LLM call when an LLM is set; otherwise spaCy's parse of the question."""
from __future__ import annotations

import logging

from core.models.llm.base import ChatModel, LLMError
from core.models.nlp import load_pipeline
from core.prompts import PROMPTS
from core.query.records import Keywords
from core.text.json_reply import read_json_object

log = logging.getLogger(__name__)

_QUESTION_WORDS = {"what", "which", "who", "whom", "whose", "when", "where", "why", "how", "is", "are", "was",
                   "were", "do", "does", "did", "can", "could", "should", "would", "the", "a", "an", "this", "that",
                   "these", "those", "it", "its", "they", "their", "there", "both", "either", "paper", "papers"}
_PHRASE_POS = {"NOUN", "PROPN", "ADJ", "X"}


def question_keywords(question: str, llm: ChatModel | None) -> Keywords:
    if llm is not None:
        try:
            return _llm_keywords(question, llm)
        except (LLMError, ValueError) as exc:
            # A keyword call that fails must not fail the query: the parse below is always there.
            log.warning("keyword extraction by the LLM failed, using the LLM-free keywords: %s", exc)
            keywords = spacy_keywords(question)
            keywords.source = f"spacy (the LLM failed: {str(exc)[:120]})"
            return keywords
    return spacy_keywords(question)


def _llm_keywords(question: str, llm: ChatModel) -> Keywords:
    reply = llm.chat([{"role": "user", "content": PROMPTS["keywords_extraction"].format(question=question)}],
                     purpose="keywords", response_format={"type": "json_object"}, max_tokens=200, temperature=0.0)
    data = read_json_object(reply.text)
    if data is None:
        raise ValueError(f"the keyword reply is not JSON: {(reply.text or '')[:80]!r}")
    high, low = _strings(data.get("high_level_keywords")), _strings(data.get("low_level_keywords"))
    if not high and not low:
        raise ValueError("the keyword reply has no keywords")
    return Keywords(high=high or [question], low=low or high, source=f"llm:{llm.name}",
                    llm_calls=0 if reply.cached else 1)


def _strings(value) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return list(dict.fromkeys(" ".join(str(v).split()) for v in value if str(v).strip()))[:12]


def spacy_keywords(question: str) -> Keywords:
    """Low-level: the question's named entities and noun phrases (without question words and articles).
    High-level: the question itself, then its phrases, because a relation's keywords are themes the question's
    own wording matches best."""
    doc = load_pipeline()(question)
    phrases: list[str] = []

    def add(tokens) -> None:
        words = [t.text for t in tokens if t.lower_ not in _QUESTION_WORDS and not t.is_punct]
        while words and words[0].lower() in _QUESTION_WORDS:
            words.pop(0)
        phrase = " ".join(words).strip(" '\"")
        if len(phrase) > 1 and phrase.lower() not in {p.lower() for p in phrases}:
            phrases.append(phrase)

    for ent in doc.ents:
        if ent.label_ not in ("CARDINAL", "ORDINAL"):
            add(ent)
    # The shipped pipeline has no dependency parser (no noun_chunks): phrases are runs of nouns, names and
    # adjectives, as the LLM-free graph extractor builds its entities.
    run: list = []
    for token in list(doc) + [None]:
        if token is not None and token.pos_ in _PHRASE_POS and token.lower_ not in _QUESTION_WORDS:
            run.append(token)
            continue
        if run and any(t.pos_ != "ADJ" for t in run):
            add(run)
            if len(run) > 1:  # the head alone too: "SciDocs benchmark" should also find "SciDocs"
                for t in run:
                    if t.pos_ == "PROPN" or (t.text.isupper() and len(t.text) > 1):
                        add([t])
        run = []
    for token in doc:  # names and acronyms the tagger put outside any phrase ("is BERT pre-trained")
        if token.pos_ == "PROPN" or (token.text.isupper() and len(token.text) > 1 and token.is_alpha):
            add([token])
    low = phrases or [question.strip()]
    high = [question.strip()] + [p for p in phrases if " " in p][:4]
    return Keywords(high=high, low=low[:12], source="spacy")
