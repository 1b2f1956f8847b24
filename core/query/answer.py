"""Answers with citations: written by the LLM (streamed, told to cite [n], a "Short answer:" line first on a
factual question) or, without one, extractive —
core.query.reading.extractive's answer sentence, short answer and citation,
or its abstention.

Either way the answer is split into sentences and every [n] is checked against the context's sources, so the
UI can mark a sentence that cites nothing and a marker that points nowhere.
"""
from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np

from core.models.llm.base import ChatModel
from core.models.vlm import image_part, text_part
from core.prompts import PROMPTS
from core.query.reading.extractive import read
from core.query.records import Answer, AnswerSentence, Context, Retrieval

_MARKER = re.compile(r"\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\]")
_ABBREVIATIONS = ("e.g.", "i.e.", "et al.", "etc.", "vs.", "Fig.", "fig.", "Eq.", "eq.", "Sec.", "Tab.", "No.",
                  "approx.", "cf.", "resp.", "Dr.", "Mr.", "Ms.", "St.")
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[\[(\"'“A-Z0-9])")
MAX_SENTENCE_CHARS = 600


def split_sentences(text: str) -> list[str]:
    """Sentences of prose, not splitting after common abbreviations; markers after a full stop stay with the
    sentence they close ("… in 2019. [3]")."""
    text = " ".join((text or "").split())
    if not text:
        return []
    protected = text
    for abbr in _ABBREVIATIONS:
        protected = protected.replace(abbr, abbr.replace(".", "\x00"))
    parts = [p.replace("\x00", ".").strip() for p in _SPLIT.split(protected) if p.strip()]
    out: list[str] = []
    for part in parts:
        lead = re.match(r"^((?:\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\]\s*)+)(.*)$", part)
        if lead and out:
            out[-1] = f"{out[-1]} {lead.group(1).strip()}"
            part = lead.group(2).strip()
        if part:
            out.append(part)
    return out


def citations_in(sentence: str) -> list[int]:
    found: list[int] = []
    for group in _MARKER.findall(sentence):
        for number in re.split(r"\s*[,;]\s*", group):
            if number.isdigit() and int(number) not in found:
                found.append(int(number))
    return found


def parse_answer(text: str, context: Context, *, extractive: bool, model: str = "") -> Answer:
    short, rest = split_short_answer(text) if not extractive else ("", text)
    if short and not rest.strip():  # a small model may write the short answer line alone: it is the answer
        rest = _SHORT_LINE.sub(lambda m: m.group("answer"), text or "").strip()
    text = rest
    known = {s.n for s in context.sources}
    sentences, unknown = [], []
    for paragraph in re.split(r"\n\s*\n", text or ""):
        for sentence in split_sentences(paragraph):
            cited = citations_in(sentence)
            unknown.extend(n for n in cited if n not in known and n not in unknown)
            sentences.append(AnswerSentence(text=sentence, citations=[n for n in cited if n in known]))
    return Answer(text=(text or "").strip(), sentences=sentences, extractive=extractive, model=model,
                  unknown_citations=unknown, short_answer=short)


# LightRAG's response_type: how long an answer the model is asked for. "short" is for scoring against short
# reference answers (EM/F1 on HotpotQA-style sets), where a paragraph can never match exactly.
ANSWER_STYLES = {
    "paragraphs": "a few paragraphs at most",
    "short": "the shortest complete answer: a few words, a name or a number, not a sentence, then its citation",
}


def answer_messages(question: str, context: Context, language: str = "English", style: str = "paragraphs"
                    ) -> list[dict]:
    response_type = ANSWER_STYLES.get(style, ANSWER_STYLES["paragraphs"])
    system = PROMPTS["rag_response_system"].format(context=context.text, language=language,
                                                   response_type=response_type)
    return [{"role": "system", "content": system},
            {"role": "user", "content": PROMPTS["rag_response_user"].format(question=question)}]


MAX_ANSWER_IMAGES = 4  # images cost the VLM far more tokens than text: the strongest few carry the answer


def with_images(messages: list[dict], images: list[tuple[int, bytes]]) -> list[dict]:
    """The answer messages with the images of the context's table/figure sources appended to the question,
    each introduced by the marker of the source it belongs to so the model can cite it."""
    parts = [text_part(messages[-1]["content"])]
    for n, png in images[:MAX_ANSWER_IMAGES]:
        parts += [text_part(f"Image of source [{n}]:"), image_part(png)]
    return messages[:-1] + [{"role": "user", "content": parts}]


def stream_llm_answer(llm: ChatModel, question: str, context: Context, max_tokens: int,
                      language: str = "English", images: list[tuple[int, bytes]] | None = None,
                      style: str = "paragraphs") -> Iterator[str]:
    """The answer's text as it arrives (cached by prompt: the same question on the same context replays)."""
    messages = answer_messages(question, context, language, style)
    if images:
        messages = with_images(messages, images)
    yield from llm.stream(messages, purpose="answer-vlm" if images else "answer", max_tokens=max_tokens,
                          temperature=0.0)


NO_CONTEXT = "Nothing in the papers matched the question, so there is nothing to answer from."


def extractive_answer(question: str, context: Context, qvec: np.ndarray, sentences: int = 4, per_source: int = 2,
                      *, lib=None, retrieval: Retrieval | None = None) -> Answer:
    """The LLM-free answer (core.query.reading.extractive): the body sentence that answers, with its short answer and
    citation, then the next strongest ones; or "No passage answers this directly." and the closest passages.
    `lib` lets the reader see what each passage's items are (title, authors, headings, references) and reuse
    the stored window vectors; without it every passage sentence counts as body text."""
    if not context.sources:
        return Answer(text=NO_CONTEXT, sentences=[AnswerSentence(NO_CONTEXT, [])], extractive=True, abstained=True)
    return read(question, context, retrieval, lib, qvec, sentences=sentences, per_source=per_source)


_SHORT_LINE = re.compile(r"^\s*(?:[*_#>\-]\s*)*short answer\s*[*_]*\s*:\s*[*_]*\s*(?P<answer>.+?)\s*$",
                         re.I | re.M)


def split_short_answer(text: str) -> tuple[str, str]:
    """The model's "Short answer: …" line (asked for first on factual questions) and the rest of its text."""
    m = _SHORT_LINE.search(text or "")
    if not m or m.start() > 200:  # a line deep in the answer is prose that happens to say it
        return "", text
    short = strip_markers(m.group("answer")).strip(" *_.")
    return short, (text[:m.start()] + text[m.end():]).strip()


def strip_markers(text: str) -> str:
    return " ".join(_MARKER.sub("", text).split())

