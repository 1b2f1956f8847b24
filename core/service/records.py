"""What the service layer returns: plain dataclasses of JSON values (`to_dict`), the same for every face.

Pages are 1-based here, as a person and a citation count them; boxes are the parser's 0-1000 page coordinates
(x0, y0, x1, y1)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


class Record:
    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]


@dataclass
class Citation(Record):
    """One citable passage: the paper, its page, the region on the page and a short quote."""
    n: int  # the [n] marker in an answer; the rank in a search
    paper_id: str
    paper: str  # title
    page: int | None  # 1-based; None for a chunk without a page
    box: list[float] | None
    quote: str
    chunk_id: str = ""
    kind: str = "text"
    section: str = ""


@dataclass
class PaperInfo(Record):
    id: str
    title: str
    file: str
    pages: int
    status: str  # queued / parsing / indexing / ready / failed
    message: str = ""
    graph_status: str = ""
    year: int | None = None
    chunks: int = 0
    size_bytes: int = 0
    stage: str = ""  # while queued or being processed: what is being done ("parsing page 3/12")
    fraction: float | None = None  # of that work done, 0-1


@dataclass
class SearchResult(Record):
    query: str
    citations: list[Citation]
    scores: list[float] = field(default_factory=list)  # one per citation, cosine similarity


@dataclass
class AskResult(Record):
    question: str
    mode: str
    answer: str  # the answer's text with its [n] markers
    citations: list[Citation]  # the passages the answer cites ([n] → citations with that n)
    short_answer: str = ""
    abstained: bool = False
    extractive: bool = True  # True: sentences picked from the passages, no LLM wrote it
    confidence: float | None = None
    model: str = ""
    sources: int = 0  # passages in the context (the cited ones are in `citations`)
    reader: str = "extractive"  # which reader answered: extractive / select / write (core.schema.modes.Reader)
    notes: list[str] = field(default_factory=list)


@dataclass
class PassageItem(Record):
    type: str
    text: str
    box: list[float] | None


@dataclass
class Passage(Record):
    paper_id: str
    paper: str
    page: int  # 1-based
    text: str
    items: list[PassageItem]
    citations: list[Citation]  # one: the passage itself, as every result carries its citations


@dataclass
class Neighbour(Record):
    key: str
    name: str
    type: str
    relation: str
    weight: float
    description: str = ""


@dataclass
class Neighbourhood(Record):
    key: str
    name: str
    type: str
    description: str
    papers: list[dict[str, str]]  # {"id", "title"}
    neighbours: list[Neighbour]
    citations: list[Citation]
    more_neighbours: int = 0


@dataclass
class Hop(Record):
    source: str
    target: str
    relation_description: str
    citation: int | None  # n of the citation (in GraphPaths.citations) of the passage stating this link


@dataclass
class GraphPaths(Record):
    source: str  # names as the graph spells them
    target: str
    paths: list[list[Hop]]  # shortest first; empty when the two are not connected
    citations: list[Citation]


@dataclass
class UploadResult(Record):
    paper_id: str
    file: str
    outcome: str  # added | duplicate
    message: str
    status: str


@dataclass
class Status(Record):
    workspace: str  # the folder's name only: a client learns nothing of the server's paths
    papers: int
    by_status: dict[str, int]
    graph: dict[str, int]  # nodes, edges
    modes: list[str]
    default_mode: str
    llm: str  # "" when none is configured
    ingesting: bool


@dataclass
class MetricMean(Record):
    """One metric of one mode over a run: the mean where it could be computed, how many that was, how many not."""
    mean: float | None
    n: int
    missing: int  # no reference to score against, a judge reply that could not be read…: left out of the mean


@dataclass
class EvalRunInfo(Record):
    """A saved evaluation run, as the Evaluate page lists it."""
    id: str
    name: str  # what the page calls it: its label and when it started
    label: str
    question_set: str  # the set's name (kept with the run: the set itself may have been deleted since)
    question_set_id: str
    created: str  # ISO 8601, UTC
    created_at: float  # the same, in seconds since the epoch
    status: str  # running / done / cancelled / failed / interrupted (running on paper, nothing moved for minutes)
    modes: list[str]
    done: int  # answers scored (questions × modes)
    total: int
    message: str
    options: dict[str, Any]  # as the run was started: k, use_llm, ragas, answer_style…
    summary: dict[str, dict[str, MetricMean]]  # mode → metric (reading order, `seconds` last) → its mean


@dataclass
class EvalRow(Record):
    """One question through one mode in a run, as stored."""
    question_id: str
    question: str  # "" when the run's question set has been deleted
    references: list[str]  # the reference answers
    mode: str
    answer: str
    short_answer: str
    scores: dict[str, float | None]  # None: not computed, `missing` says why
    missing: dict[str, str]
    seconds: float
    llm_calls: int
    error: str
    retrieved_chunk_ids: list[str]
    evidence_matches: list[dict[str, Any]]  # per reference passage: its rank in the retrieval, the rule that found it
    contexts: list[str] | None = None  # the passages the answer was given; only when asked for (they are long)


@dataclass
class EvalRunDetail(Record):
    run: EvalRunInfo
    rows: list[EvalRow]


@dataclass
class ResultRow(Record):
    """One number a paper reports (core.schema.results.ResultRecord), cited to its table cell."""
    rank: int  # in its leaderboard, by the metric's direction (1 = best)
    method: str
    value: float
    value_text: str  # the cell as printed: "80.0", "85.3 ± 0.2"
    unit: str
    setting: str  # "test", "zero-shot"… where stated
    dataset: str
    metric: str
    paper_id: str
    paper: str  # title
    year: int | None
    page: int  # 1-based
    box: list[float] | None  # the table's box, 0-1000 page coordinates
    table: str  # "Table 1"
    cell: str  # "Table 1, row 3, column 2"
    item_index: int  # the table's item in the paper's content list
    row: int  # 0-based, in the span-expanded grid
    col: int
    best: bool  # marked best by the paper


@dataclass
class Leaderboard(Record):
    """Every record of one dataset and metric across the library, best first."""
    dataset: str  # the name most papers print
    dataset_key: str
    metric: str
    metric_key: str
    direction: str  # higher / lower / "" (unknown: ranked as higher-is-better)
    rows: list[ResultRow]
    more_rows: int = 0  # rows past the limit


@dataclass
class ResultsView(Record):
    boards: list[Leaderboard]
    note: str = ""  # why nothing matched, or how a name was read
    more_boards: int = 0


@dataclass
class ResultName(Record):
    """A dataset, metric or method the records name, for pickers."""
    key: str
    name: str
    records: int
    papers: int
