"""LightRAG's pairwise evaluation: an LLM judge compares two modes' answers to the same question on
comprehensiveness, diversity, empowerment and overall, and names a winner for each.

LLM judges favour a position (often the first answer), so every pair is judged twice, the second time with the
answers swapped; only a mode that wins in both orders wins the criterion, and a split is a tie. A reply that
cannot be read, or a call that fails, is reported as such and never turned into a winner.

The explanations are the model's text (which may quote the papers): escape them wherever they are displayed.
"""
from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from core.models.llm.base import ChatModel, LLMError
from core.prompts import PROMPTS
from core.text.json_reply import excerpt, key_lookup, read_json_object

CRITERIA = ("comprehensiveness", "diversity", "empowerment", "overall")
TIE = "tie"
NEEDS_LLM = "the pairwise judge needs an LLM: set one on the Settings page"
# Consecutive pairs whose calls failed (not unreadable replies) before a run stops: an LLM that is down would
# otherwise cost two timeouts for every remaining pair.
MAX_FAILED_PAIRS_IN_A_ROW = 3
JUDGE_MAX_TOKENS = 1200

ProgressFn = Callable[[int, int], None]  # (pairs judged, pairs in the run)


@dataclass
class CriterionVerdict:
    winner: str  # mode name of the winner, "tie" when the two orders disagree, "" when unreadable
    first_order: str  # winner's mode name when the answers were shown (a, b); "" if unreadable
    swapped_order: str  # winner's mode name when shown (b, a); "" if unreadable
    agreed: bool  # both orders picked the same mode
    explanation: str  # the judge's reasons, with "Answer 1/2" replaced by the modes' names


@dataclass
class PairwiseVerdict:
    question_id: str
    question: str
    mode_a: str
    mode_b: str
    criteria: dict[str, CriterionVerdict]
    error: str = ""  # a call failed or a reply could not be read: say so, never invent a winner


@dataclass
class PairwiseSummary:
    mode_a: str
    mode_b: str
    wins: dict[str, dict[str, int]]  # criterion -> {mode_a: n, mode_b: n, "tie": n}
    disagreements: int  # criterion verdicts whose two orders disagreed (counted as ties)
    unreadable: int  # criterion verdicts with no winner: a call failed or a reply could not be read
    verdicts: list[PairwiseVerdict]
    stopped: str = ""  # why the run ended before its last pair (cancelled, the LLM kept failing); "" if it did not

    def win_rate(self, criterion: str, mode: str) -> float | None:
        """Share of the criterion's decided verdicts (wins and ties, not unreadable ones) that `mode` won;
        None when there is none."""
        counts = self.wins.get(criterion, {})
        decided = sum(counts.values())
        return counts.get(mode, 0) / decided if decided else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> PairwiseSummary:
        verdicts = [PairwiseVerdict(**{**v, "criteria": {c: CriterionVerdict(**cv) for c, cv in v["criteria"].items()}})
                    for v in row.get("verdicts") or []]
        return cls(**{**row, "verdicts": verdicts})


@dataclass
class _Reading:
    """One judge call, in its own order: the answer number (1 or 2) that won each criterion it could read."""

    winners: dict[str, int] = field(default_factory=dict)
    explanations: dict[str, str] = field(default_factory=dict)
    error: str = ""
    call_failed: bool = False


def judge_pair(llm: ChatModel | None, question_id: str, question: str, mode_a: str, answer_a: str, mode_b: str,
               answer_b: str) -> PairwiseVerdict:
    """Two judge calls, (a, b) then (b, a); each criterion's winner is the mode both orders chose."""
    _check(llm, mode_a, mode_b)
    verdict, _ = _judge(llm, question_id, question, mode_a, answer_a, mode_b, answer_b)
    return verdict


def judge_pairs(llm: ChatModel | None, items: Sequence[tuple[str, str, str, str]], mode_a: str, mode_b: str,
                on_progress: ProgressFn | None = None, cancel: threading.Event | Callable[[], bool] | None = None
                ) -> PairwiseSummary:
    """Judge every (question_id, question, answer_a, answer_b) item, one after the other. `cancel` (an Event, or
    a function returning True) ends the run after the pair in progress; the summary holds what was judged."""
    _check(llm, mode_a, mode_b)
    verdicts: list[PairwiseVerdict] = []
    stopped, failed_in_a_row = "", 0
    for done, (question_id, question, answer_a, answer_b) in enumerate(items):
        if _cancelled(cancel):
            stopped = f"cancelled after {done} of {len(items)} pairs"
            break
        verdict, call_failed = _judge(llm, question_id, question, mode_a, answer_a, mode_b, answer_b)
        verdicts.append(verdict)
        failed_in_a_row = failed_in_a_row + 1 if call_failed else 0
        if on_progress:
            on_progress(done + 1, len(items))
        if failed_in_a_row >= MAX_FAILED_PAIRS_IN_A_ROW and done + 1 < len(items):
            stopped = (f"stopped after {done + 1} of {len(items)} pairs: the LLM failed on {failed_in_a_row} pairs "
                       f"in a row ({verdict.error})")
            break
    return summarise(mode_a, mode_b, verdicts, stopped)


def summarise(mode_a: str, mode_b: str, verdicts: list[PairwiseVerdict], stopped: str = "") -> PairwiseSummary:
    wins = {c: {mode_a: 0, mode_b: 0, TIE: 0} for c in CRITERIA}
    disagreements = unreadable = 0
    for verdict in verdicts:
        for criterion, cv in verdict.criteria.items():
            if cv.winner in wins.get(criterion, {}):
                wins[criterion][cv.winner] += 1
            if cv.first_order and cv.swapped_order and not cv.agreed:
                disagreements += 1
            if not cv.winner:
                unreadable += 1
    return PairwiseSummary(mode_a, mode_b, wins, disagreements, unreadable, verdicts, stopped)


def _check(llm: ChatModel | None, mode_a: str, mode_b: str) -> None:
    if llm is None:
        raise ValueError(NEEDS_LLM)
    if not mode_a or not mode_b or mode_a == mode_b:
        raise ValueError(f"the pairwise judge compares two different modes (got {mode_a!r} and {mode_b!r})")
    if TIE in (mode_a, mode_b):
        raise ValueError(f"{TIE!r} cannot be a mode's name: it marks a split verdict")


def _cancelled(cancel: threading.Event | Callable[[], bool] | None) -> bool:
    if cancel is None:
        return False
    is_set = getattr(cancel, "is_set", None)
    return bool(is_set() if is_set is not None else cancel())


def _judge(llm: ChatModel, question_id: str, question: str, mode_a: str, answer_a: str, mode_b: str,
           answer_b: str) -> tuple[PairwiseVerdict, bool]:
    first = _read_once(llm, question, answer_a, answer_b)
    swapped = _read_once(llm, question, answer_b, answer_a)
    criteria: dict[str, CriterionVerdict] = {}
    for criterion in CRITERIA:
        in_first = {1: mode_a, 2: mode_b}.get(first.winners.get(criterion, 0), "")
        in_swapped = {1: mode_b, 2: mode_a}.get(swapped.winners.get(criterion, 0), "")
        if in_first and in_swapped:
            winner = in_first if in_first == in_swapped else TIE
        else:
            winner = ""
        reasons = [(f"({mode_a}, {mode_b})", _with_modes(first.explanations.get(criterion, ""), mode_a, mode_b)),
                   (f"({mode_b}, {mode_a})", _with_modes(swapped.explanations.get(criterion, ""), mode_b, mode_a))]
        if winner and winner != TIE:
            explanation = reasons[0][1] or reasons[1][1]
        else:
            explanation = " / ".join(f"{order}: {text}" for order, text in reasons if text)
        criteria[criterion] = CriterionVerdict(winner, in_first, in_swapped, bool(in_first) and in_first == in_swapped,
                                               explanation)
    errors = [f"order ({mode_a}, {mode_b}): {first.error}" if first.error else "",
              f"order ({mode_b}, {mode_a}): {swapped.error}" if swapped.error else ""]
    verdict = PairwiseVerdict(question_id, question, mode_a, mode_b, criteria, "; ".join(e for e in errors if e))
    return verdict, first.call_failed or swapped.call_failed


def _read_once(llm: ChatModel, question: str, answer1: str, answer2: str) -> _Reading:
    messages = [{"role": "system", "content": PROMPTS["eval_pairwise_system"]},
                {"role": "user", "content": PROMPTS["eval_pairwise_user"].format(
                    question=question.strip(), answer1=(answer1 or "").strip() or "(no answer)",
                    answer2=(answer2 or "").strip() or "(no answer)")}]
    try:
        reply = llm.chat(messages, purpose="eval_pairwise", response_format={"type": "json_object"},
                         max_tokens=JUDGE_MAX_TOKENS, temperature=0.0)
    except LLMError as exc:
        return _Reading(error=f"the judge call failed: {exc}", call_failed=True)
    data = read_json_object(reply.text)
    if data is None:
        return _Reading(error=f"the judge's reply is not JSON: {excerpt(reply.text)!r}")
    if not any(isinstance(key_lookup(data, c), (dict, str)) for c in CRITERIA):
        nested = next((v for v in data.values() if isinstance(v, dict)), None)  # {"evaluation": {...}}
        data = nested if nested is not None else data
    reading = _Reading()
    for criterion in CRITERIA:
        entry = key_lookup(data, criterion)
        winner = key_lookup(entry, "winner", "better", "choice") if isinstance(entry, dict) else entry
        number = _answer_number(winner)
        if number:
            reading.winners[criterion] = number
        if isinstance(entry, dict):
            reading.explanations[criterion] = " ".join(str(key_lookup(entry, "explanation", "reason") or "").split())
    missing = [c for c in CRITERIA if c not in reading.winners]
    if missing:
        reading.error = f"no readable winner for {', '.join(missing)} in the reply {excerpt(reply.text)!r}"
    return reading


_ANSWER_REF = re.compile(r"\banswer\s*#?\s*([12])\b", re.I)


def _answer_number(value: Any) -> int | None:
    """1 or 2 from "Answer 1", "answer 2", "2"...; None for anything else, including "Answer 1 or Answer 2"
    copied from the prompt and "tie" (the judge was asked to pick one)."""
    if isinstance(value, int) and value in (1, 2):
        return value
    if not isinstance(value, str):
        return None
    found = set(_ANSWER_REF.findall(value))
    if not found:
        bare = re.fullmatch(r"\W*([12])\W*", value)
        found = {bare.group(1)} if bare else set()
    return int(found.pop()) if len(found) == 1 else None


def _with_modes(explanation: str, mode_1: str, mode_2: str) -> str:
    """The judge writes "Answer 1"; the reader needs to know which mode that was in this order."""
    return _ANSWER_REF.sub(lambda m: f"the {mode_1 if m.group(1) == '1' else mode_2} answer", explanation)
