"""Records of evaluation: the questions asked, each mode's scores per question, and a run that holds them."""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

# A run's status; CANCELLED is also the reason given for a score a cancelled run never computed.
RUNNING, DONE, CANCELLED, FAILED = "running", "done", "cancelled", "failed"


@dataclass
class EvalQuestion:
    """One row of a question set: what is asked, what a right answer says, and which passages support it."""

    id: str  # stable within its set ("q1", or the id column of the file)
    question: str
    answers: list[str]  # one or more reference answers; any of them counts as right
    evidence: list[str] = field(default_factory=list)  # reference passages (text), for the retrieval metrics
    doc_id: str = ""  # optional: the paper the question is about

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> EvalQuestion:
        return cls(id=str(row["id"]), question=row["question"], answers=list(row.get("answers") or []),
                   evidence=list(row.get("evidence") or []), doc_id=row.get("doc_id") or "")


@dataclass
class Score:
    """One metric's value for one answer. `value` is None when it could not be computed (no evidence to
    measure against, a judge reply that could not be read): then `error` says why, and averages skip it
    rather than counting it as 0."""

    value: float | None
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.value is not None


@dataclass
class QuestionResult:
    """One question through one mode: the answer, what the mode retrieved, and every score."""

    question_id: str
    mode: str
    answer: str
    contexts: list[str]  # the passages the answer was given, in context order
    retrieved_chunk_ids: list[str]  # the mode's ranking, best first
    scores: dict[str, Score]
    seconds: float
    llm_calls: int = 0
    llm_free: list[str] = field(default_factory=list)
    error: str = ""
    short_answer: str = ""  # the answer's short form, when the mode gave one: what EM and F1 score
    # Per reference passage: {"retrieved": rank or None, "retrieved_rule": ..., "context_rule": ...}, the rule
    # (core.eval.metrics.MATCH_RULES, "" for none) by which the ranking and the assembled context hold it.
    evidence_matches: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> QuestionResult:
        scores = {name: Score(**s) for name, s in (row.get("scores") or {}).items()}
        return cls(**{**row, "scores": scores})


STALE_AFTER_S = 300.0  # a "running" run that has not written for this long was cut short (crash, restart)


@dataclass
class QuestionSet:
    id: str
    name: str
    source: str
    created_at: float
    questions: list[EvalQuestion]


@dataclass
class RunRecord:
    id: str
    set_id: str
    set_name: str
    label: str
    created_at: float
    updated_at: float
    status: str
    modes: list[str]
    options: dict[str, Any]
    done: int
    total: int
    message: str = ""
    cancel_requested: bool = False

    @property
    def interrupted(self) -> bool:
        """Running on paper, but nothing has moved for a while: the process that ran it is gone."""
        return self.status == RUNNING and time.time() - self.updated_at > STALE_AFTER_S

    @property
    def shown_status(self) -> str:
        return "interrupted" if self.interrupted else self.status


def run_to_dict(run: RunRecord) -> dict[str, Any]:
    return {**asdict(run), "status": run.shown_status}
