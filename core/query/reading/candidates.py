"""The sentences of the retrieved passages that may answer a question: the LLM-free reader's candidates.

Only body text may answer. What parsing knows about each item decides it: a paper's title, its author and
affiliation block, headings, reference-list entries and page furniture never answer (core.graph.item_roles,
shared with the entity extractor); a footnote answers ("We use the cld2 tool for language detection …" is only said
there) but is marked as one; a table answers with its rows; a caption only when the question is about a figure or
table. How likely each candidate is to answer is the reader model's business (core.query.reading.scores), not this
module's.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.content.items import item_text
from core.graph.item_roles import BODY, item_roles
from core.query.reading import answer_types as T
from core.query.records import Source
from core.schema.records import ContentItem

MAX_SENTENCE_CHARS = 600
CAPTION, NOTE, ROW = "caption", "note", "row"

# A reference entry: a year closed by "." or ")" ("Turing, A. 2019. …", "(2019).") and then a venue; a body
# sentence saying "between June 2018 and September 2022 … (PubMed / arXiv)" is not one.
_REFERENCE_LIKE = re.compile(r"(\b(19|20)\d\d[a-z]?[.)].*\b(In Proceedings|Proc\.|arXiv|Journal|Conference|"
                             r"Transactions|Association for|pp\.|vol\.|pages \d)|^\s*\[\d+\]\s+[A-Z][a-z]+,? [A-Z])")
_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[\[(\"'“A-Z0-9])|(?<=[a-z][.!?])\d{1,2}\s+(?=[A-Z])")
_ABBREVIATIONS = ("e.g.", "i.e.", "et al.", "etc.", "vs.", "Fig.", "fig.", "Eq.", "eq.", "Sec.", "Tab.", "No.",
                  "approx.", "cf.", "resp.")
_NOTE_MARK = re.compile(r"^\d{1,2}(?=[A-Z])")  # "14We use the cld2 tool …": the footnote's number
_MEDIA_LABEL = re.compile(r"^\s*(table|figure|fig\.|equation)\s*\d*", re.I)
# A run-in heading that parsing left at the start of a paragraph ("Training Data To train our model, we use …"):
# capitalised words (and the small words of titles), then a word that starts sentences, then a lower-case word.
_RUN_IN = re.compile(r"^(?:[A-Z][\w/-]*)(?:\s+(?:[A-Z][\w/-]*|of|and|for|with|the|in|on|to|from|via|vs\.?|v/s)){0,6}"
                     r"\s+(?=(?:To|We|In|Our|The|This|These|For|While|Although|Since|Given|Here|As|It|Unlike|Each|"
                     r"All|Both|Following|Finally|First|Second|Third|Next|Then|Similarly|However|Overall)\s+[a-z(])")


@dataclass
class Candidate:
    n: int  # the source it cites
    text: str
    role: str  # body / row / caption / note
    position: int = 0  # its place among its passage's candidates (0: the first)
    of: int = 1  # how many candidates its passage has
    prior: float = 0.0  # similarity of its stored embedding window to the question
    typed: float = 0.0  # fit of its best answer span of the expected type (0 = none)
    features: dict[str, float] = field(default_factory=dict)  # core.query.reading.features
    p: float = 0.0  # the reader model's probability that it holds the answer


# ---------------------------------------------------------------------------------------------- item roles
_ROLES: dict[tuple[str, int], dict[int, str]] = {}


def _roles_of(items: list[ContentItem], doc_id: str) -> dict[int, str]:
    # load_items hands out the same cached item objects until the paper is parsed again: key on the first one.
    key = (doc_id, id(items[0]) if items else 0)
    if key not in _ROLES:
        if len(_ROLES) > 64:
            _ROLES.clear()
        _ROLES[key] = item_roles(items)
    return _ROLES[key]


def norm(text: str) -> str:
    return " ".join(text.split())


def split_sentences(text: str) -> list[str]:
    protected = norm(text)
    for abbr in _ABBREVIATIONS:
        protected = protected.replace(abbr, abbr.replace(".", "\x00"))
    return [p.replace("\x00", ".").strip() for p in _SPLIT.split(protected) if p.strip()]


def sentence_ok(sentence: str) -> bool:
    return (15 <= len(sentence) <= MAX_SENTENCE_CHARS and sum(map(str.isalpha, sentence)) > 10
            and not _REFERENCE_LIKE.search(sentence))


# A passage's sentences and roles do not depend on the question (but for captions): the same top passages come
# back question after question, so they are split once per process.
_SPLITS: dict[tuple, list[tuple[str, str]]] = {}


def source_candidates(source: Source, items: list[ContentItem], question: str) -> list[Candidate]:
    """The sentences (table rows, captions when asked about) of one passage that may answer."""
    key = (source.chunk_id, hash(source.text), source.kind, T.about_media(question), id(items[0]) if items else 0)
    if key not in _SPLITS:
        if len(_SPLITS) > 4096:
            _SPLITS.clear()
        _SPLITS[key] = _split_source(source, items, question)
    found = _SPLITS[key]
    return [Candidate(source.n, text, role, position=k, of=len(found)) for k, (text, role) in enumerate(found)]


def _split_source(source: Source, items: list[ContentItem], question: str) -> list[tuple[str, str]]:
    by_index = {i.index: i for i in items}
    if source.kind != "text":
        lines = [norm(line) for line in source.text.split("\n") if line.strip()]
        out = []
        for k, line in enumerate(lines):
            caption = k == 0 and (_MEDIA_LABEL.match(line) or source.kind != "table")
            if caption and T.about_media(question):
                out.extend((s, CAPTION) for s in split_sentences(line) if sentence_ok(s))
            elif not caption and source.kind == "table" and len(line) <= MAX_SENTENCE_CHARS:
                out.append((line, ROW))
        return out
    roles = _roles_of(items, source.doc_id)
    texts = [(i, norm(item_text(by_index[i]))) for i in source.item_indices if i in by_index]
    runs: list[list[str]] = [[]]  # consecutive body items: a sentence may run across a column or page break
    notes: list[str] = []
    at = 0
    for segment in source.text.split("\n\n"):
        segment = norm(segment)
        if not segment:
            continue
        role = BODY
        for k in range(at, len(texts)):  # items come in order; the first may be cut by the chunk's overlap
            index, text = texts[k]
            if segment[:60] in text or text[:60] in segment:
                role, at = roles.get(index, BODY), k + 1
                break
        if role == BODY:
            heading = _RUN_IN.match(segment)
            if heading:  # a new paragraph under its own heading: nothing before it runs on into it
                segment = segment[heading.end():]
                if runs[-1]:
                    runs.append([])
            runs[-1].append(segment)
            continue
        if role == "footnote":
            notes.append(_NOTE_MARK.sub("", segment))
        if runs[-1]:
            runs.append([])
    return ([(s, BODY) for run in runs for s in split_sentences(" ".join(run)) if sentence_ok(s)]
            + [(s, NOTE) for note in notes for s in split_sentences(note) if sentence_ok(s)])
