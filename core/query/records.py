"""Records of one query: its parameters, what each step retrieved, the context, the answer and its citations."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, make_dataclass
from typing import Any

from core.schema.modes import Mode
from core.schema.records import SearchHit
from core.settings.config import QueryConfig

# The workspace's query settings a single query may override; the rest of QueryConfig (reranker, answer length)
# stays the workspace's.
QUERY_KNOBS = ("mode", "top_k", "chunk_top_k", "max_entity_tokens", "max_relation_tokens", "max_chunk_tokens",
               "max_passage_tokens", "bm25", "rerank")
# Those knobs as fields: QueryConfig's own (type, default, label and help), so the two cannot disagree.
QueryKnobs = make_dataclass("QueryKnobs", [
    (f.name, f.type, field(default=f.default, default_factory=f.default_factory, metadata=f.metadata))
    for f in fields(QueryConfig) if f.name in QUERY_KNOBS])


@dataclass
class QueryParams(QueryKnobs):
    """One query's knobs: the QUERY_KNOBS (QueryConfig's defaults; `from_config`: the workspace's values) and
    those that only make sense per question."""

    doc_ids: list[str] = field(default_factory=list)  # papers to search; empty = every ready paper
    context_only: bool = False  # assemble the context and stop, as LightRAG's only_need_context
    use_llm: bool = True  # False: the LLM-free path even when an LLM is configured
    community_top: int = 5  # community mode: reports mapped over
    # RAG-Anything's VLM-enhanced query: when a VLM is set and the context holds tables or figures, their images
    # go to the VLM with the question, which then writes the answer.
    vlm_images: bool = False
    answer_style: str = "paragraphs"  # or "short": see core.query.answer.ANSWER_STYLES
    reader: str = ""  # a core.schema.modes.Reader for this question; "": the workspace's QueryConfig.reader
    # The Ask page's: on_token gets the extractive answer at once while a model reads (select), replaced by the
    # model's. Off for the API's streams, whose clients append what streams.
    preview: bool = False
    # A yes/no or numeric question reads a paper's results and conclusions first: a passage from such a section
    # (a structured abstract's RESULTS / CONCLUSIONS, a paper's "Results") moves up this many places among the
    # retrieved passages (core/query/context.results_first); 0 keeps retrieval's order.
    results_first: int = 2

    def __post_init__(self) -> None:
        self.mode = Mode(self.mode)  # an unknown mode fails here, with the modes to choose from

    @classmethod
    def from_config(cls, config: QueryConfig, **overrides: Any) -> QueryParams:
        """The workspace's knobs, with the overrides that are not None (a flag or a field left unset)."""
        values = {name: getattr(config, name) for name in QUERY_KNOBS}
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


@dataclass
class Keywords:
    high: list[str]  # themes: what global mode searches relations with
    low: list[str]  # specific entities: what local mode searches entities with
    source: str  # "llm:<model>" or "spacy"
    llm_calls: int = 0


@dataclass
class RetrievedEntity:
    key: str
    name: str
    type: str
    description: str
    score: float
    degree: int = 0
    source_chunks: list[str] = field(default_factory=list)


@dataclass
class RetrievedRelation:
    source: str
    target: str
    source_name: str
    target_name: str
    keywords: str
    description: str
    weight: float
    score: float
    source_chunks: list[str] = field(default_factory=list)

    @property
    def pair(self) -> tuple[str, str]:
        return self.source, self.target


@dataclass
class RetrievedChunk:
    hit: SearchHit  # the chunk, its best window, page and box: what a citation shows
    score: float  # the ranking score of the mode (after rerank when on)
    via: list[str] = field(default_factory=list)  # vector / bm25 / entity / relation
    # (chunk id, name): a second hop returned for the name it shares with that passage (core.query.second_hop)
    bridge: tuple[str, str] | None = None

    @property
    def id(self) -> str:
        return self.hit.chunk.id


@dataclass
class Retrieval:
    mode: Mode
    keywords: Keywords | None
    entities: list[RetrievedEntity] = field(default_factory=list)
    relations: list[RetrievedRelation] = field(default_factory=list)
    chunks: list[RetrievedChunk] = field(default_factory=list)
    reports: list[dict] = field(default_factory=list)  # community mode
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass
class Routed:
    """What a mode's route hands the engine (core.query.routes): the retrieval, any section the context gets
    besides entities, relations and passages, the LLM calls the route made and its steps that ran without one."""

    retrieval: Retrieval
    sections: list[tuple[str, str]] = field(default_factory=list)  # (title, text)
    llm_calls: int = 0
    llm_free: list[str] = field(default_factory=list)


@dataclass
class Source:
    """One citable item of the context: `[n]` in the answer points here."""

    n: int
    chunk_id: str
    doc_id: str
    doc_title: str
    page: int  # 0-based
    bbox: list[float] | None
    kind: str  # text / table / image / equation
    section: str
    text: str  # the passage as given to the model
    item_indices: list[int] = field(default_factory=list)
    # A second hop (core.query.second_hop): the source [bridge_from] it continues and the name they share.
    bridge_from: int = 0
    bridge_name: str = ""


@dataclass
class Context:
    text: str  # what the model reads
    sources: list[Source]
    tokens: dict[str, int]  # per section: entities / relations / chunks / reports
    dropped: dict[str, int]  # items left out by the token budget, per section

    def source(self, n: int) -> Source | None:
        return next((s for s in self.sources if s.n == n), None)


# How an LLM answer's sentence stands against the passages (core.query.reading.grounding sets it).
CITED, MATCHED, UNSUPPORTED = "cited", "matched", "unsupported"


@dataclass
class AnswerSentence:
    text: str
    citations: list[int]
    # An LLM answer's sentence checked against the passages (core.query.reading.grounding): "cited" (its marker's
    # passage
    # supports it), "matched" (the model cited none; PaperGraph found the passage that says it), "unsupported".
    support: str = ""

    @property
    def cited(self) -> bool:
        return bool(self.citations)


@dataclass
class Answer:
    text: str
    sentences: list[AnswerSentence]
    extractive: bool  # True: sentences picked from the passages, no LLM wrote it
    model: str = ""
    unknown_citations: list[int] = field(default_factory=list)  # [n] markers that match no source
    # The answer itself, for a factual question: the number, name, year or phrase ("37M"), found in sentence
    # `short_answer_sentence` at characters `short_answer_span` of its text (extractive), or the model's
    # "Short answer:" line. Empty when there is none (abstained, or the model gave no such line).
    short_answer: str = ""
    short_answer_sentence: int = -1
    short_answer_span: list[int] | None = None
    abstained: bool = False  # True: no passage answers it; the sentences are the closest passages, not an answer
    answer_type: str = ""  # what the question expects: number / year / name / definition / other (extractive)
    score: float = 0.0  # the extractive reader's probability that its best sentence holds the answer
    # The extractive reader's calibrated probability that the answer it states (or would state) is right: it
    # abstains below its threshold (core.query.reading.scores). None for an LLM's answer.
    confidence: float | None = None
    # An extractive abstention's P(its best sentence is right), what a risk–coverage curve sweeps (its confidence
    # is the chance that abstaining is right). None elsewhere: a stated answer's is its confidence.
    best_confidence: float | None = None
    # A two-hop extractive answer: the entity its two passages share (the first sentence names it, the second is
    # about it). Empty for a one-passage answer.
    bridge: str = ""
    # Which reader answered (core.schema.modes.Reader: extractive / select / write), named on every answer.
    reader: str = "extractive"
    # select: the model's own odds at its decision (before calibration), kept for bench/select_calibrate.py.
    model_odds: float | None = None

    @property
    def uncited(self) -> list[AnswerSentence]:
        return [s for s in self.sentences if not s.cited]

    @property
    def off_the_passages(self) -> bool:
        """A model's answer of which no sentence is cited or found in the passages, and at least one says what
        none of them does (core.query.reading.grounding):
        written from the model's own knowledge, not from the papers."""
        checked = [s.support for s in self.sentences if s.support]
        return not self.extractive and bool(checked) and all(x == UNSUPPORTED for x in checked)


@dataclass
class QueryResult:
    question: str
    params: QueryParams
    retrieval: Retrieval
    context: Context
    answer: Answer | None  # None when context_only
    timings: dict[str, float] = field(default_factory=dict)  # retrieve_s, generate_s, total_s
    llm_calls: int = 0  # calls made (cache hits excluded)
    llm_cached: int = 0
    tokens: dict[str, int] = field(default_factory=dict)  # prompt / completion
    llm_free: list[str] = field(default_factory=list)  # which steps ran without an LLM, for the UI
    error: str = ""

    @property
    def mode(self) -> Mode:
        return self.params.mode

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
