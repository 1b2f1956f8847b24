"""The LLM-free reader: the answer sentence of the retrieved passages with its short answer and citation, a
composed answer (yes/no, which of two, a bridge through a second passage), or an honest abstention.

How it decides is learned, not written as rules: each candidate sentence (core.query.reading.candidates) gets features
(core.query.reading.features), a logistic model fitted on the dev split of the question set gives each the
probability that it holds the answer, and a second, calibrated model gives the probability that the best one is
right (core.query.reading.scores). Above the threshold chosen on dev the answer is stated; below it the reader says
it found related passages and shows them with the best sentence first, stating nothing; when even the best
sentence is unlikely, it says the papers do not seem to discuss the question.

Scoring is cheap because retrieval already did the expensive part: each candidate inherits the similarity of the
stored embedding window it sits in (no passage is embedded at query time).
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from core.content.pages import load_items
from core.graph.item_roles import NEVER as NEVER  # re-exported: the reader's tests import it here
from core.graph.item_roles import item_roles as item_roles  # likewise
from core.query.reading import answer_types as T
from core.query.reading.candidates import Candidate, norm, source_candidates
from core.query.reading.candidates import sentence_ok as _sentence_ok  # noqa: F401  (the reader's tests import it here)
from core.query.reading.candidates import split_sentences as split_sentences
from core.query.reading.chain import Chain, compositional, find_chain
from core.query.reading.comparison import compare, two_sided
from core.query.reading.coverage import distinctive
from core.query.reading.features import QuestionView, featurize
from core.query.reading.scores import ReaderModel, load_model
from core.query.reading.yes_no import polarity
from core.query.records import Answer, AnswerSentence, Context, Retrieval, Source
from core.schema.ids import window_ids

NO_ANSWER = "No passage answers this directly."
RELATED = "Related passages (none states the answer with confidence):"
NOT_DISCUSSED = "The papers do not seem to discuss this."
SOURCES_READ = 10  # every passage retrieval keeps (chunk_top_k): the reader reads them whole
SHOWN = 16  # candidates an answer picks its further sentences from
EXTRACTIVE = "extractive (no LLM)"


# ---------------------------------------------------------------------------------------------- priors
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
        fetched.setdefault(match.metadata.get("chunk_id", ""), []).append((norm(match.document), vector))
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


# ---------------------------------------------------------------------------------------------- ranking
def rank(question: str, context: Context, retrieval: Retrieval | None, lib, qvec: np.ndarray,
         model: ReaderModel | None = None) -> tuple[QuestionView, list[Candidate]]:
    """The question as the features see it and the candidates, most probable answer first."""
    model = model or load_model()
    q = QuestionView.of(question, distinctive(question, lib))
    sources = context.sources[:SOURCES_READ]
    hit_score = {c.id: c.hit.score for c in (retrieval.chunks if retrieval else [])}
    windows = _window_priors(lib, sources, qvec) if lib is not None else {}
    candidates: list[Candidate] = []
    seen: set[str] = set()
    for source in sources:
        items = load_items(lib, source.doc_id) if lib is not None else []
        for c in source_candidates(source, items, question):
            if c.text in seen:
                continue
            seen.add(c.text)
            c.prior = _prior(c.text, windows.get(source.n, []), hit_score.get(source.chunk_id, 0.3) - 0.1)
            best = T.spans(c.text, q.kind, question) if q.kind != T.OTHER else []
            c.typed = max(best[0].score, 0.01) if best and best[0].score > -1 else 0.0
            candidates.append(c)
    featurize(q, candidates, context.source)
    model.score(candidates)
    candidates.sort(key=lambda c: -c.p)
    return q, candidates


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


# ---------------------------------------------------------------------------------------------- the answer
def read(question: str, context: Context, retrieval: Retrieval | None, lib, qvec: np.ndarray, sentences: int = 4,
         per_source: int = 2, model: ReaderModel | None = None,
         ranking: tuple[QuestionView, list[Candidate]] | None = None) -> Answer:
    """The extractive answer; `ranking`: rank()'s result when the caller already has it (select reads the same)."""
    model = model or load_model()
    q, ranked = ranking or rank(question, context, retrieval, lib, qvec, model)
    if not ranked:
        return _abstain(context, ranked, q.kind, 0.0, related=False, model=model)
    confidence = model.confidence_of(ranked)
    composed = compare(q, ranked, context.source, lib.metadata.get if lib is not None else None)
    if composed is not None:
        return composed
    if q.yes_no and two_sided(question):  # both sides' facts were not found: one side's sentence cannot answer
        return _abstain(context, ranked, q.kind, confidence, related=_related(q, ranked, model), model=model)
    chain = find_chain(question, q.kind, ranked[:SHOWN], ranked, context.source) if compositional(question) else None
    # A chain is its own evidence (the first hop says the question's words, the second is about the bridge it
    # names): the single-sentence confidence measures neither hop, so only the floor of relatedness applies.
    if chain is not None and (_related(q, ranked, model) or _names_all(question, chain.first.text)):
        return _chained(chain, ranked, q.kind, question, confidence)
    if confidence < model.threshold:
        return _abstain(context, ranked, q.kind, confidence, related=_related(q, ranked, model), model=model)
    best = ranked[0]
    picked: list[Candidate] = []
    per: Counter = Counter()
    for c in ranked[:SHOWN]:
        if per[c.n] >= per_source or (picked and c.p < best.p / 3):
            continue
        picked.append(c)
        per[c.n] += 1
        if len(picked) == sentences:
            break
    out = [AnswerSentence(text=f"{c.text} [{c.n}]", citations=[c.n]) for c in picked]
    if q.yes_no:  # "No: <the sentence that says so> [n]": the verdict first, then its evidence
        verdict = polarity(question, best.text)
        out[0] = AnswerSentence(text=f"{verdict.capitalize()}: {out[0].text}", citations=[best.n])
        return Answer(text=" ".join(s.text for s in out), sentences=out, extractive=True, model=EXTRACTIVE,
                      short_answer=verdict, short_answer_sentence=0, short_answer_span=[0, len(verdict)],
                      answer_type="yes/no", score=round(best.p, 4), confidence=round(confidence, 4))
    short, span = short_answer(best.text, q.kind, question)
    return Answer(text=" ".join(s.text for s in out), sentences=out, extractive=True, model=EXTRACTIVE,
                  short_answer=short, short_answer_sentence=0, short_answer_span=list(span), answer_type=q.kind,
                  score=round(best.p, 4), confidence=round(confidence, 4))


def _related(q: QuestionView, ranked: list[Candidate], model: ReaderModel) -> bool:
    """Whether the passages are about the question at all: the best sentence is at least plausible, or a passage
    names the question's rare names (papers that name MapReduce do discuss it, whatever a sentence scores)."""
    if ranked[0].p >= model.related:
        return True
    return bool(q.named) and any(c.features.get("named_passage", 0.0) > 0.0 for c in ranked[:SHOWN])


def _names_all(question: str, sentence: str) -> bool:
    """The sentence says every name of the question (however common in the collection): a chain's first hop that
    does is about the question even when no single sentence is a likely answer (the hop holds the bridge, not the
    answer, so its own probability is low by design)."""
    names = T.named_words(question)
    low = sentence.lower()
    return bool(names) and all(T.mentions(low, w) for w in names)


def _chained(chain: Chain, ranked: list[Candidate], kind: str, question: str, confidence: float) -> Answer:
    """The final hop first (it holds what the question asks), then the bridge it was reached through and the first
    hop's sentence, each cited: "X [2] — via Y: … [1]"."""
    first, second = chain.first, chain.second
    out = [AnswerSentence(text=f"{second.text} [{second.n}]", citations=[second.n]),
           AnswerSentence(text=f"Via {chain.bridge}: {first.text} [{first.n}]", citations=[first.n])]
    short, span = short_answer(second.text, kind, question)
    return Answer(text=" ".join(s.text for s in out), sentences=out, extractive=True,
                  model=f"{EXTRACTIVE}, two passages", short_answer=short, short_answer_sentence=0,
                  short_answer_span=list(span), answer_type=kind, score=round(second.p, 4), bridge=chain.bridge,
                  confidence=round(confidence, 4))


def _abstain(context: Context, ranked: list[Candidate], kind: str, confidence: float, related: bool,
             model: ReaderModel | None = None) -> Answer:
    """No answer stated. Related passages (one sentence each, from different sources, the most probable first, so
    the page can highlight it) when the best sentence is at least plausible; else only that nothing matched.
    With the reader's `model`, `confidence` (its best sentence's) becomes the abstention's own: the chance that
    the papers do not answer; without, it is given as it comes (select's, already an abstention's)."""
    if not related:
        out = [AnswerSentence(NO_ANSWER, []), AnswerSentence(NOT_DISCUSSED, [])]
    else:
        out = [AnswerSentence(NO_ANSWER, [])]
        shown: set[int] = set()
        for c in ranked[:SHOWN]:
            if c.n not in shown:
                shown.add(c.n)
                out.append(AnswerSentence(f"{RELATED if len(shown) == 1 else ''} {c.text} [{c.n}]".strip(), [c.n]))
            if len(shown) == 3:
                break
        if not ranked:
            out += [AnswerSentence(f"{RELATED if k == 0 else ''} {s.text[:200].strip()} … [{s.n}]".strip(), [s.n])
                    for k, s in enumerate(context.sources[:3])]
    return Answer(text=" ".join(s.text for s in out), sentences=out, extractive=True, model=EXTRACTIVE,
                  abstained=True, answer_type=kind, score=round(ranked[0].p, 4) if ranked else 0.0,
                  confidence=round(model.abstention_confidence(confidence) if model else confidence, 4),
                  best_confidence=round(confidence, 4) if model else None)
