"""The LLM-free reader: the answer sentence of the retrieved passages, its short answer, or an honest abstention.

Only body text may answer. What parsing knows about each item decides it: a paper's title, its author and
affiliation block (the first page's front matter before the abstract), headings, reference-list entries (list
items of sub_type reference, or anything under a References section) and page furniture never answer; a footnote
answers after the body ("We use the cld2 tool for language detection …" is only said there); a table answers with
its rows, by the cell of the column the question names; a caption only when the question is about a figure or
table.

Abstention is question-specific too (core.query.coverage): near misses score like answers, so the thing a number
question counts or measures must be in the answer sentence, the question's rare named words (document frequency
from the FTS5 index) in its passage, section or paper title or what its paper is about, and a table row must be a
row of something the question names; else "No passage answers this directly."

Scoring is cheap because retrieval already did the expensive part: each candidate sentence inherits the
similarity of the stored embedding window it sits in (no re-embedding of passages); the candidates are ranked by
that prior, BM25-style overlap with the question and whether they hold an answer of the expected type (a number
for "how many", a name for "which model" … core.query.answer_types). Embedding the best few sentences (one
batch) is possible (EMBED_TOP) but off: it cost more than the whole rest of the question on a busy machine.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core.pipeline.chunking import item_text
from core.pipeline.graph.item_roles import BODY, item_roles
from core.pipeline.graph.item_roles import NEVER as NEVER  # re-exported: the reader's tests import it here
from core.pipeline.pages import load_items
from core.query import answer_types as T
from core.query.chain import Chain, compositional, find_chain
from core.query.coverage import ROW, covered, distinctive, paper_text, row_about, subject_of, term_bag
from core.query.records import Answer, AnswerSentence, Context, Retrieval, Source
from core.schema.ids import window_ids
from core.schema.records import ContentItem

NO_ANSWER = "No passage answers this directly."
CLOSEST = "Closest passages:"
# Calibrated on the dev split of bench/papers_qa.jsonl (bench/reader_calibrate.py): below it, the best
# sentence is more often a near miss than an answer.
ABSTAIN_BELOW = 0.47
SOURCES_READ = 8  # passages whose sentences compete; the evidence is in the top 8 for nearly every question
SHOWN = 16  # candidates an answer or an abstention picks its sentences from
# Candidates embedded (one batch) after the cheap ranking. 0: on a busy 2-core machine embedding even 16 sentences
# cost 0.3-2 s, and the stored window vectors' similarity ranks nearly as well (see the report's numbers).
EMBED_TOP = 0
MAX_SENTENCE_CHARS = 600
CAPTION, NOTE = "caption", "note"  # and ROW (core.query.coverage)
MUST_HOLD = {T.NUMBER, T.YEAR}  # answer types whose answer sentence must contain one (else: abstain)

# A reference entry: a year closed by "." or ")" ("Turing, A. 2019. …", "(2019).") and then a venue; a body
# sentence saying "between June 2018 and September 2022 … (PubMed / arXiv)" is not one.
_REFERENCE_LIKE = re.compile(r"(\b(19|20)\d\d[a-z]?[.)].*\b(In Proceedings|Proc\.|arXiv|Journal|Conference|"
                             r"Transactions|Association for|pp\.|vol\.|pages \d)|^\s*\[\d+\]\s+[A-Z][a-z]+,? [A-Z])")
_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[\[(\"'“A-Z0-9])|(?<=[a-z][.!?])\d{1,2}\s+(?=[A-Z])")
_ABBREVIATIONS = ("e.g.", "i.e.", "et al.", "etc.", "vs.", "Fig.", "fig.", "Eq.", "eq.", "Sec.", "Tab.", "No.",
                  "approx.", "cf.", "resp.")
_NOTE_MARK = re.compile(r"^\d{1,2}(?=[A-Z])")  # "14We use the cld2 tool …": the footnote's number
_MEDIA_LABEL = re.compile(r"^\s*(table|figure|fig\.|equation)\s*\d*", re.I)


@dataclass
class Candidate:
    n: int  # the source it cites
    text: str
    role: str  # body / row / caption
    prior: float = 0.0  # similarity of its embedding window to the question
    lexical: float = 0.0
    typed: float = 0.0  # fit of its best answer span of the expected type (0 = none)
    focus: float = 0.0  # share of the words of the counted or measured thing ("unique paper nodes") it says
    sim: float | None = None
    score: float = 0.0


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


def _norm(text: str) -> str:
    return " ".join(text.split())


def split_sentences(text: str) -> list[str]:
    protected = _norm(text)
    for abbr in _ABBREVIATIONS:
        protected = protected.replace(abbr, abbr.replace(".", "\x00"))
    return [p.replace("\x00", ".").strip() for p in _SPLIT.split(protected) if p.strip()]


def _sentence_ok(sentence: str) -> bool:
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
        _SPLITS[key] = [(c.text, c.role) for c in _split_source(source, items, question)]
    return [Candidate(source.n, text, role) for text, role in _SPLITS[key]]


def _split_source(source: Source, items: list[ContentItem], question: str) -> list[Candidate]:
    by_index = {i.index: i for i in items}
    if source.kind != "text":
        lines = [_norm(line) for line in source.text.split("\n") if line.strip()]
        out = []
        for k, line in enumerate(lines):
            caption = k == 0 and (_MEDIA_LABEL.match(line) or source.kind != "table")
            if caption and T.about_media(question):
                out.extend(Candidate(source.n, s, CAPTION) for s in split_sentences(line) if _sentence_ok(s))
            elif not caption and source.kind == "table" and len(line) <= MAX_SENTENCE_CHARS:
                out.append(Candidate(source.n, line, ROW))
        return out
    roles = _roles_of(items, source.doc_id)
    texts = [(i, _norm(item_text(by_index[i]))) for i in source.item_indices if i in by_index]
    runs: list[list[str]] = [[]]  # consecutive body items: a sentence may run across a column or page break
    notes: list[str] = []
    at = 0
    for segment in source.text.split("\n\n"):
        segment = _norm(segment)
        if not segment:
            continue
        role = BODY
        for k in range(at, len(texts)):  # items come in order; the first may be cut by the chunk's overlap
            index, text = texts[k]
            if segment[:60] in text or text[:60] in segment:
                role, at = roles.get(index, BODY), k + 1
                break
        if role == BODY:
            runs[-1].append(segment)
            continue
        if role == "footnote":
            notes.append(_NOTE_MARK.sub("", segment))
        if runs[-1]:
            runs.append([])
    return ([Candidate(source.n, s, BODY) for run in runs for s in split_sentences(" ".join(run)) if _sentence_ok(s)]
            + [Candidate(source.n, s, NOTE) for note in notes for s in split_sentences(note) if _sentence_ok(s)])


# ---------------------------------------------------------------------------------------------- scoring
# A chunk's embedding windows (texts and stored vectors) by workspace, model, chunk id and text: fetched from Chroma
# once per process.
_WINDOWS: dict[tuple, tuple[list[str], np.ndarray]] = {}


def _window_priors(lib, sources: list[Source], qvec: np.ndarray) -> dict[int, list[tuple[str, float]]]:
    """Per source: its embedding windows' texts with their similarity to the question (stored vectors)."""
    cs = lib.settings.chunking
    stride = max(cs.window_tokens - cs.window_overlap, 1)
    chunks = lib.chunks.get_many([s.chunk_id for s in sources])
    space = (str(lib.workspace.root), lib.settings.embedding.model)  # another workspace or model: other vectors
    keys = {c.id: (*space, c.id, hash(c.text)) for c in chunks.values()}
    missing = [s.chunk_id for s in sources if s.chunk_id in chunks and keys[s.chunk_id] not in _WINDOWS]
    ids = [w for c in dict.fromkeys(missing)
           for w in window_ids(c, max(chunks[c].tokens - cs.window_overlap, 1) // stride + 3)]
    fetched: dict[str, list] = {}
    for match, vector in (lib.windows.fetch(ids) if ids else []):
        fetched.setdefault(match.metadata.get("chunk_id", ""), []).append((_norm(match.document), vector))
    if len(_WINDOWS) > 2048:
        _WINDOWS.clear()
    for chunk_id, found in fetched.items():  # windows not embedded yet are fetched again next time
        if chunk_id in keys:
            _WINDOWS[keys[chunk_id]] = ([t for t, _ in found], np.stack([v for _, v in found]).astype(np.float32))
    q = np.asarray(qvec, dtype=np.float32)
    out: dict[int, list[tuple[str, float]]] = {}
    for s in sources:
        held = _WINDOWS.get(keys.get(s.chunk_id))
        out[s.n] = list(zip(held[0], (held[1] @ q).tolist())) if held else []
    return out


def _prior(text: str, windows: list[tuple[str, float]], fallback: float) -> float:
    head, tail = text[:40], text[-40:]
    sims = [sim for window, sim in windows if head in window or tail in window]
    return max(sims) if sims else fallback


def _lexical(candidates: list[Candidate], question: str) -> None:
    """BM25 over the candidate pool (its own document frequencies) of stemmed words, scaled to 0..1 by the
    question's weight."""
    terms = set(T.stems(question))
    if not terms or not candidates:
        return
    bags = [term_bag(c.text, terms) for c in candidates]
    avg = sum(sum(b.values()) for b in bags) / len(bags) or 1.0
    n = len(bags)
    idf = {t: math.log(1 + (n - sum(t in b for b in bags) + 0.5) / (sum(t in b for b in bags) + 0.5)) for t in terms}
    total = sum(idf.values()) or 1.0
    for c, bag in zip(candidates, bags):
        length = sum(bag.values()) or 1
        s = sum(idf[t] * bag[t] * 2.2 / (bag[t] + 1.2 * (0.25 + 0.75 * length / avg)) for t in terms if bag[t])
        c.lexical = min(s / total, 1.0)


# Weights fitted on the dev split (see ABSTAIN_BELOW): embedding similarity of the sentence and of its window,
# term overlap, and the expected answer type, which decides between sentences that are all "about" the question.
W_SIM, W_PRIOR, W_LEXICAL, W_TYPED, W_UNTYPED, W_RANK = 0.45, 0.2, 0.35, 0.15, -0.12, 0.004
# A footnote's sentence may answer ("We use the cld2 tool for language detection …"), after the body's.
W_NOTE = -0.05
# A number question names what it counts ("unique paper nodes"): a sentence that names only part of it ("12M nodes
# of this type") loses a little. Neutral on the dev split at 0.05, worse above 0.1.
W_FOCUS = 0.05


def _score(c: Candidate, kind: str) -> float:
    sim = c.sim if c.sim is not None else c.prior
    typed = 0.0
    if kind != T.OTHER:
        # A definition is often phrased without "X is" ("MMPs, pairs of molecules that …"): no penalty there.
        typed = (W_TYPED * (1 + min(c.typed, 2.0) / 2) if c.typed > 0
                 else W_UNTYPED * (kind not in (T.DEFINITION, T.MANNER)))
    note = W_NOTE if c.role == NOTE else 0.0
    return (W_SIM * sim + W_PRIOR * c.prior + W_LEXICAL * c.lexical + W_FOCUS * (c.focus - 1) + typed + note
            - W_RANK * c.n)


def rank(question: str, context: Context, retrieval: Retrieval | None, lib,
         embed_many: Callable[[list[str]], np.ndarray], qvec: np.ndarray) -> tuple[str, list[Candidate]]:
    """The answer type and the candidates, best first."""
    kind = T.answer_type(question)
    sources = context.sources[:SOURCES_READ]
    hit_score = {c.id: c.hit.score for c in (retrieval.chunks if retrieval else [])}
    windows = _window_priors(lib, sources, qvec) if lib is not None else {}
    candidates: list[Candidate] = []
    for source in sources:
        items = load_items(lib, source.doc_id) if lib is not None else []
        found = source_candidates(source, items, question)
        for c in found:
            c.prior = _prior(c.text, windows.get(source.n, []), hit_score.get(source.chunk_id, 0.3) - 0.1)
        candidates.extend(found)
    seen: set[str] = set()
    candidates = [c for c in candidates if not (c.text in seen or seen.add(c.text))]
    if not candidates:
        return kind, []
    _lexical(candidates, question)
    focus = T.focus_words(question) if kind == T.NUMBER else []
    for c in candidates:
        if focus:
            low = c.text.lower()
            c.focus = sum(T.mentions(low, w) for w in focus) / len(focus)
        else:
            c.focus = 1.0
        best = T.spans(c.text, kind, question) if kind != T.OTHER else []
        c.typed = max(best[0].score, 0.01) if best and best[0].score > -1 else 0.0
        c.score = _score(c, kind)
    candidates.sort(key=lambda c: -c.score)
    if EMBED_TOP:
        top = candidates[:EMBED_TOP]
        sims = embed_many([c.text for c in top]) @ np.asarray(qvec, dtype=np.float32)
        for c, sim in zip(top, sims):
            c.sim = float(sim)
            c.score = _score(c, kind)
        top.sort(key=lambda c: -c.score)
        candidates = top + candidates[EMBED_TOP:]
    return kind, candidates


def short_answer(sentence: str, kind: str, question: str) -> tuple[str, tuple[int, int]]:
    """The answer-bearing span of the chosen sentence and where it is; the whole sentence when no span of the
    expected type exists (an "other" question is answered by its sentence)."""
    found = T.spans(sentence, kind, question) if kind != T.OTHER else []
    if found:
        s = found[0]
        return s.text, (s.start, s.end)
    cell = T.row_cell(sentence, question)  # a table row answers with the cell of the column the question names
    if cell is not None:
        return cell.text, (cell.start, cell.end)
    body = sentence.rstrip()
    return body, (0, len(body))


def read(question: str, context: Context, retrieval: Retrieval | None, lib,
         embed_many: Callable[[list[str]], np.ndarray], qvec: np.ndarray, sentences: int = 4,
         per_source: int = 2) -> Answer:
    kind, ranked = rank(question, context, retrieval, lib, embed_many, qvec)
    focus = T.focus_words(question) if kind == T.NUMBER else []
    named = distinctive(question, lib)
    docs = {s.doc_id for s in context.sources[:SOURCES_READ]} if named and lib is not None else set()
    subjects = {d: frozenset(w for w in named if subject_of(paper_text(lib, d), w)) for d in docs}
    # Only candidates that cover the question's distinctive words may answer; all remain "closest passages".
    fit = [c for c in ranked if (c.role != ROW or row_about(c.text, question))
           and (not (focus or named) or covered(c, (source := context.source(c.n)), focus, named,
                                                  subjects.get(source.doc_id if source else "", frozenset())))]
    if kind in MUST_HOLD:  # a number or year question is answered by a sentence that states one, or not at all
        fit = [c for c in fit if c.typed > 0] + [c for c in fit if c.typed <= 0]
        best = fit[0] if fit and fit[0].typed > 0 else None
    else:
        best = fit[0] if fit else None
    if best is None or best.score < ABSTAIN_BELOW:
        return _abstain(context, ranked, kind)
    picked: list[Candidate] = []
    per: Counter = Counter()
    for c in fit[:SHOWN]:
        if c.score < max(ABSTAIN_BELOW, best.score - 0.2) or per[c.n] >= per_source:
            continue
        picked.append(c)
        per[c.n] += 1
        if len(picked) == sentences:
            break
    chain = find_chain(question, kind, fit[:SHOWN], ranked, context.source) if compositional(question) else None
    if chain is not None:
        return _chained(chain, picked, kind, question)
    out = [AnswerSentence(text=f"{c.text} [{c.n}]", citations=[c.n]) for c in picked]
    short, span = short_answer(best.text, kind, question)
    return Answer(text=" ".join(s.text for s in out), sentences=out, extractive=True, model="extractive (no LLM)",
                  short_answer=short, short_answer_sentence=0, short_answer_span=list(span), answer_type=kind,
                  score=round(best.score, 4))


def _chained(chain: Chain, picked: list[Candidate], kind: str, question: str) -> Answer:
    """The first hop, then the second (another paper's passage about the bridge entity), then the other picked
    sentences; the short answer is the second hop's (what the question asks about is what the bridge leads to)."""
    first, second = chain.first, chain.second
    order = [first, second] + [c for c in picked if c is not first and c is not second]
    out = [AnswerSentence(text=f"{c.text} [{c.n}]", citations=[c.n]) for c in order]
    short, span = short_answer(second.text, kind, question)
    return Answer(text=" ".join(s.text for s in out), sentences=out, extractive=True,
                  model="extractive (no LLM), two passages", short_answer=short, short_answer_sentence=1,
                  short_answer_span=list(span), answer_type=kind, score=round(first.score, 4), bridge=chain.bridge)


def _abstain(context: Context, ranked: list[Candidate], kind: str) -> Answer:
    """Say so, then the closest passages (one sentence each, from different sources), not a padded answer."""
    out = [AnswerSentence(NO_ANSWER, [])]
    shown: set[int] = set()
    for c in ranked[:SHOWN]:
        if c.n not in shown:
            shown.add(c.n)
            out.append(AnswerSentence(f"{CLOSEST if len(shown) == 1 else ''} {c.text} [{c.n}]".strip(), [c.n]))
        if len(shown) == 3:
            break
    if not ranked:
        out += [AnswerSentence(f"{CLOSEST if k == 0 else ''} {s.text[:200].strip()} … [{s.n}]".strip(), [s.n])
                for k, s in enumerate(context.sources[:3])]
    return Answer(text=" ".join(s.text for s in out), sentences=out, extractive=True, model="extractive (no LLM)",
                  abstained=True, answer_type=kind, score=round(ranked[0].score, 4) if ranked else 0.0)
