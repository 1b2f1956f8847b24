"""`select`: the model chooses the evidence, the papers speak.

The extractive reader ranks every sentence of the retrieved passages (core.query.reading.extractive.rank); the model
reads the question and the best few, numbered, and replies in a constrained format — a GBNF grammar for llama.cpp
(the fewest tokens: "684K | 5", "none", "no | 2"), a JSON schema elsewhere — so a reply always parses: the answer's
words copied from a sentence, then that sentence's number; or none; for a yes/no question yes / no with the number,
or not stated. The words come first because a small model finds the answer before it can number it (the 1.5B model
numbered right sentences wrong, and chose a sentence for "What is the capital of France?", when asked for the number
first). Copy, never invent: the copied words must be in a shown sentence — the one the model numbered, else the
best-ranked that says them — or the answer abstains ("Paris | 1" is refused). The answer shown is that sentence
verbatim with its exact citation and the copied words in bold; "none" is an abstention.

A question answered by a clause (how, why: CLAUSE_KINDS) keeps the number the model gave when its words paraphrase
the sentence: the answer is still that sentence verbatim. A yes/no verdict is read from the model's odds of no
against yes at the verdict token with a bias fitted on dev, not from its argmax (which said "not stated" or "yes"
whatever the papers said), even when it replied "not stated": the best-ranked sentence is then its evidence.

How sure: the model's own odds at its first token (answer or "none"), mapped to a calibrated probability with the
extractive reader's probability of the chosen sentence; for a verdict, the calibrated probability of the likelier
of yes and no (core/query/reading/data/select_calibration.json, fitted on dev by bench/select_calibrate.py). Below
the calibrated threshold the answer abstains like a "none".
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from core.models.llm.base import ChatModel
from core.prompts import PROMPTS
from core.query.reading import answer_types as T
from core.query.reading.candidates import Candidate
from core.query.reading.yes_no import NO, polarity
from core.query.records import CITED, Answer, AnswerSentence
from core.text.json_reply import read_json_object

CALIBRATION_PATH = Path(__file__).with_name("data") / "select_calibration.json"
NONE, NOT_STATED = "none", "not stated"
# The reply's form: the answer's words then the sentence's number ("684K | 5"), or a verdict then the number
# ("no | 2").
WORDS, VERDICT = "words", "verdict"
# Questions answered by a clause or a whole sentence (how / why / what does X do): the model paraphrases or cuts the
# clause it copies (21 of 42 dev how/why replies named words no shown sentence says), so its numbered sentence
# stands for them (locate). Asked for the number alone instead, it named sentence 3 for 33 of the 42.
CLAUSE_KINDS = frozenset({T.OTHER, T.MANNER})
SHORT_MAX_CHARS = 80
LINE_CHARS = 360  # ~80 tokens a sentence: prompt tokens are the embedded model's seconds (~20 a second)
REPLY_TOKENS = 24  # a short answer and " | 3": the grammar ends it sooner
_NOTHING = {"none", "not stated", "n/a", "unknown", "no answer", "nothing"}  # words that say no sentence answers
# A sentence that opens by pointing back ("It", "This method", "These results") is shown after the sentence before
# it in its passage: alone it does not say what it is about.
_ANAPHOR = re.compile(r"^(it|its|this|these|those|they|their|such|he|she|here|thus|therefore|the latter|"
                      r"the former|both|each of them)\b", re.I)


@dataclass
class Shown:
    """A candidate as the model sees it: its number (1-based), the sentence, and the one before it if needed."""

    number: int
    candidate: Candidate
    lead: str = ""

    def line(self) -> str:
        text = " ".join((f"{self.lead} {self.candidate.text}" if self.lead else self.candidate.text).split())
        if len(text) > LINE_CHARS:  # a table row or a run-on sentence: its head, where the answer usually sits
            text = text[:LINE_CHARS].rsplit(" ", 1)[0] + " …"
        return f"{self.number}. {text}"


@dataclass
class Choice:
    verdict: str = ""  # yes / no / not stated for a yes/no question, else ""
    numbers: list[int] = field(default_factory=list)  # the chosen sentences (1-based); [] = none
    short: str = ""  # the answer's words as the model copied them
    odds: float | None = None  # the model's probability of its decision among the options, when it gave odds
    margin: float | None = None  # a verdict: log P(no) − log P(yes) at the verdict token (no_margin)

    @property
    def none(self) -> bool:
        return not self.numbers or self.verdict == NOT_STATED


@dataclass
class Calibration:
    """P(right) = sigmoid(a·logit(odds) + b·p_sentence + c) when the model gave odds, else sigmoid(b2·p + c2);
    abstain below `threshold` (chosen on dev for precision).

    A verdict is read from the model's odds at the verdict token, not from its argmax (the 1.5B model's argmax was
    "yes" for every dev question): P(no) = sigmoid(verdict_a·(log P(no) − log P(yes)) + verdict_b·[the chosen
    sentence negates what the question asks, core.query.reading.yes_no] + verdict_c); the verdict is the likelier one,
    its confidence that likelihood, stated from `verdict_threshold` up."""

    a: float = 1.0
    b: float = 0.0
    c: float = 0.0
    b2: float = 4.0
    c2: float = -2.0
    threshold: float = 0.0
    verdict_a: float = 1.0
    verdict_b: float = 0.0
    verdict_c: float = 0.0
    verdict_threshold: float = 0.5

    def probability(self, odds: float | None, p_sentence: float) -> float:
        if odds is not None:
            z = self.a * _logit(odds) + self.b * p_sentence + self.c
        else:
            z = self.b2 * p_sentence + self.c2
        return _sigmoid(z)

    def p_no(self, margin: float, negated: bool) -> float:
        """P(the answer is no) from the model's log-odds of no against yes and the sentence's polarity."""
        return _sigmoid(self.verdict_a * margin + self.verdict_b * float(negated) + self.verdict_c)


def load_calibration() -> Calibration:
    try:
        data = json.loads(CALIBRATION_PATH.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Calibration()
    return Calibration(**{k: float(v) for k, v in data.items() if k in Calibration.__dataclass_fields__})


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


# ---------------------------------------------------------------------------------------------- what the model sees
def shown_candidates(ranked: list[Candidate], k: int) -> list[Shown]:
    """The best k distinct sentences, best first; an anaphoric one led by the sentence before it in its passage."""
    by_place = {(c.n, c.position): c for c in ranked}
    shown: list[Shown] = []
    for c in ranked:
        if len(shown) == k:
            break
        before = by_place.get((c.n, c.position - 1))
        lead = before.text if before is not None and _ANAPHOR.match(c.text.strip()) else ""
        shown.append(Shown(len(shown) + 1, c, lead))
    return shown


def reply_form(yes_no: bool) -> str:
    """The form of reply a question is asked for: a verdict for a yes/no question, else the answer's words."""
    return VERDICT if yes_no else WORDS


_SYSTEM = {WORDS: "select_system", VERDICT: "select_system_yes_no"}


def messages(question: str, shown: list[Shown], form: str) -> list[dict]:
    user = PROMPTS["select_user"].format(question=question, sentences="\n".join(s.line() for s in shown))
    return [{"role": "system", "content": PROMPTS[_SYSTEM[form]]}, {"role": "user", "content": user}]


def grammar(k: int, form: str) -> str:
    """GBNF: the decision first (the answer's words or none; yes / no / not stated), then the sentence's number."""
    numbers = " | ".join(f'"{n}"' for n in range(1, k + 1))
    if form == VERDICT:
        return f'root ::= ("yes" | "no") " | " num | "not stated"\nnum ::= {numbers}\n'
    # The words are bounded (80 characters): a model that starts to explain is made to name its sentence.
    return f'root ::= "none" | short " | " num\nnum ::= {numbers}\nshort ::= [^|\\n] [^|\\n]{{0,79}}\n'


def schema(k: int, form: str) -> dict:
    options = [str(n) for n in range(1, k + 1)]
    sentence = {"type": "string", "enum": options + [NONE]}
    if form == VERDICT:
        properties = {"verdict": {"type": "string", "enum": ["yes", "no", NOT_STATED]}, "sentence": sentence}
    else:  # the answer's words first, as in the grammar
        properties = {"answer": {"type": "string", "maxLength": SHORT_MAX_CHARS}, "sentence": sentence}
    body = {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}
    return {"type": "json_schema", "json_schema": {"name": "select", "strict": True, "schema": body}}


# ---------------------------------------------------------------------------------------------- the reply
def parse_reply(text: str, k: int, form: str) -> Choice | None:
    """The choice in either format; None when the reply says nothing usable (the caller falls back)."""
    text = (text or "").strip()
    obj = read_json_object(text) if text.startswith("{") else None
    yes_no = form == VERDICT
    if obj is not None:
        verdict = str(obj.get("verdict", "")).strip().lower() if yes_no else ""
        number, short = str(obj.get("sentence", "")).strip().lower(), str(obj.get("answer", "")).strip()
    elif yes_no:
        m = re.match(r"^(yes|no|not stated)\s*(?:\|\s*(\d{1,2}))?\s*$", text, re.I)
        if m is None:
            return None
        verdict, number, short = m.group(1).lower(), m.group(2) or "", ""
    else:
        m = re.match(r"^(?:(.*?)\s*\|\s*(\d{1,2})|(none))\s*$", text, re.I | re.S)
        if m is None:
            return None
        verdict, number, short = "", (m.group(2) or NONE).lower(), (m.group(1) or "").strip()
    if yes_no and verdict not in ("yes", "no", NOT_STATED):
        return None
    if number == NONE or verdict == NOT_STATED or (form == WORDS and short.lower().strip(" .") in _NOTHING | {""}):
        return Choice(verdict=verdict)
    if not number.isdigit() or not 1 <= int(number) <= k:
        return None
    return Choice(verdict=verdict, numbers=[int(number)], short=short[:SHORT_MAX_CHARS])


_DECISION_KEY = {WORDS: '"answer":"', VERDICT: '"verdict":"'}


def decision_token(top_logprobs: list[list[list]] | None, form: str) -> list[list] | None:
    """The alternatives at the token where the model decided: the first of the reply (grammar) or of the value after
    "answer" / "verdict" (JSON). None: no odds."""
    if not top_logprobs:
        return None
    key, prefix = _DECISION_KEY[form], ""
    for i, alternatives in enumerate(top_logprobs):
        if i == 0 and not alternatives[0][0].lstrip().startswith("{"):
            return alternatives
        if re.sub(r"\s+", "", prefix).endswith(key):
            return alternatives
        prefix += alternatives[0][0]
    return None


def verdict_masses(alternatives: list[list] | None) -> dict[str, float]:
    """The probability of yes, no and not (stated) at the verdict token, each summed over its spellings."""
    mass: dict[str, float] = {}
    for token, logprob in alternatives or []:
        word = token.strip().lower()
        for option in ("yes", "no", "not"):
            if word and (word == option or (option != "no" and len(word) >= 2 and option.startswith(word))):
                mass[option] = mass.get(option, 0.0) + math.exp(logprob)
                break
    return mass


def no_margin(alternatives: list[list] | None) -> float | None:
    """log P(no) − log P(yes) at the verdict token; an option outside the top alternatives counts as likely as the
    least likely of them (an upper bound). None: neither is among them."""
    mass = verdict_masses(alternatives)
    if not alternatives or not (mass.get("yes") or mass.get("no")):
        return None
    floor = math.exp(min(lp for _, lp in alternatives))
    return max(-10.0, min(10.0, math.log(mass.get("no") or floor) - math.log(mass.get("yes") or floor)))


def decision_odds(top_logprobs: list[list[list]] | None, choice: Choice, k: int, form: str) -> float | None:
    """The model's probability of what it chose at the token where it chose. For a yes/no question, among
    yes / no / not; else answering against "none" (the probability mass on "none" at that token, from the full
    vocabulary's odds). None: no odds."""
    alternatives = decision_token(top_logprobs, form)
    if alternatives is None:
        return None
    if form != VERDICT:
        nothing = sum(math.exp(lp) for token, lp in alternatives
                      if len(token.strip()) >= 3 and "none".startswith(token.strip().lower()))
        nothing = min(nothing, 1.0)
        return nothing if choice.none else 1.0 - nothing
    mass = verdict_masses(alternatives)
    chosen = choice.verdict.split()[0] if choice.verdict else "not"
    total = sum(mass.values())
    if total <= 0 or chosen not in mass:
        return None
    return mass[chosen] / total


def settle_verdict(choice: Choice, shown: list[Shown], question: str, calibration: Calibration) -> float:
    """A yes/no choice's verdict read from the model's odds and its sentence's polarity (Calibration.p_no) instead
    of the model's argmax; returns the probability that the verdict is right. The choice must name a sentence."""
    sentence = shown[choice.numbers[0] - 1].candidate.text
    negated = polarity(question, sentence) == NO
    margin = choice.margin if choice.margin is not None else (2.0 if choice.verdict == "no" else -2.0)
    p_no = calibration.p_no(margin, negated)
    choice.verdict = "no" if p_no >= 0.5 else "yes"
    return max(p_no, 1.0 - p_no)


def locate(choice: Choice, shown: list[Shown], clause: bool = False) -> int | None:
    """The shown sentence (1-based) that holds the copied words: the one the model numbered, else the best-ranked
    one that says them (a small model numbers a right sentence wrong); None when no shown sentence says them — the
    model answered from its own knowledge. A yes/no verdict copies no words: its number stands; so does the number of
    a clause question's reply (`clause`), whose words paraphrase the sentence: the answer is that sentence verbatim,
    the words bold only where it says them."""
    if not choice.numbers:
        return None
    if choice.verdict or not choice.short:  # a verdict (or a "not stated" read from its odds) copies no words
        return choice.numbers[0]
    numbered = shown[choice.numbers[0] - 1]
    if short_span(numbered.candidate.text, choice.short) or short_span(numbered.lead, choice.short):
        return numbered.number
    said = next((s.number for s in shown if short_span(s.candidate.text, choice.short)), None)
    return said if said is not None or not clause else numbered.number


def short_span(sentence: str, short: str) -> tuple[int, int] | None:
    """Where the copied words sit in the sentence (case and spacing aside), or None: words the sentence does not
    contain are never shown as its answer."""
    words = short.strip(" .,;:\"'").split()
    if not words or len(" ".join(words)) > SHORT_MAX_CHARS:
        return None
    pattern = r"\s+".join(re.escape(w) for w in words)
    m = re.search(pattern, sentence, re.I)
    return (m.start(), m.end()) if m else None


# ---------------------------------------------------------------------------------------------- the answer
def choose(llm: ChatModel, question: str, shown: list[Shown], form: str) -> tuple[Choice | None, bool]:
    """One constrained call: the choice, None when the reply cannot be read (the caller keeps the extractive answer),
    and whether the reply came from the prompt cache."""
    k = len(shown)
    ask = messages(question, shown, form)
    if getattr(llm, "accepts_grammar", False):
        reply = llm.chat(ask, purpose="select", max_tokens=REPLY_TOKENS, temperature=0.0, top_logprobs=10,
                         grammar=grammar(k, form))
    else:  # JSON's keys and quotes cost tokens too
        reply = llm.chat(ask, purpose="select", max_tokens=REPLY_TOKENS * 3, temperature=0.0, top_logprobs=10,
                         response_format=schema(k, form))
    return read_choice(reply.text, reply.top_logprobs, k, form), reply.cached


def read_choice(text: str, top_logprobs: list[list[list]] | None, k: int, form: str) -> Choice | None:
    """The reply read as a choice, with the model's odds at its decision. A yes/no reply of "not stated" that still
    gave odds of yes and no names the best-ranked sentence: the 1.5B model said "not stated" to 19 of the 27
    answerable yes/no dev questions, while the sign of its odds of no against yes was right for 20 of them; the
    verdict is read from those odds (settle_verdict)."""
    choice = parse_reply(text, k, form)
    if choice is None:
        return None
    choice.odds = decision_odds(top_logprobs, choice, k, form)
    if form == VERDICT:
        choice.margin = no_margin(decision_token(top_logprobs, form))
        if choice.verdict == NOT_STATED and choice.margin is not None:
            choice.verdict, choice.numbers = "", [1]
    return choice


def confidence(choice: Choice, shown: list[Shown], question: str, form: str,
               calibration: Calibration) -> tuple[float, float]:
    """How sure a choice that names a sentence is (the calibrated probability it is right) and the threshold below
    which it is not stated. A verdict is settled here (settle_verdict)."""
    if form == VERDICT:
        return settle_verdict(choice, shown, question, calibration), calibration.verdict_threshold
    p = calibration.probability(choice.odds, shown[choice.numbers[0] - 1].candidate.p)
    return p, calibration.threshold


def chosen_answer(choice: Choice, shown: list[Shown], ranked: list[Candidate], kind: str, question: str,
                  model: str, confidence: float, per_source: int = 2, sentences: int = 3) -> Answer:
    """The chosen sentence verbatim and cited, the copied words in bold where it says them; then the next strongest
    sentences of the extractive ranking, as the extractive answer adds them (at most `sentences` in all)."""
    from core.query.reading.extractive import short_answer

    best = shown[choice.numbers[0] - 1].candidate
    picked = [best]
    per = {best.n: 1}
    for c in ranked:
        if len(picked) == sentences:
            break
        if c is best or per.get(c.n, 0) >= per_source or c.p < max(best.p, ranked[0].p) / 3:
            continue
        picked.append(c)
        per[c.n] = per.get(c.n, 0) + 1
    out = [AnswerSentence(text=f"{c.text} [{c.n}]", citations=[c.n], support=CITED) for c in picked]
    common = dict(extractive=True, model=model, reader="select", score=round(best.p, 4),
                  confidence=round(confidence, 4))
    if choice.verdict in ("yes", "no"):
        out[0] = AnswerSentence(text=f"{choice.verdict.capitalize()}: {out[0].text}", citations=[best.n],
                                support=CITED)
        return Answer(text=" ".join(s.text for s in out), sentences=out, short_answer=choice.verdict,
                      short_answer_sentence=0, short_answer_span=[0, len(choice.verdict)], answer_type="yes/no",
                      **common)
    span = short_span(best.text, choice.short)
    short = best.text[span[0]:span[1]] if span else ""
    if not short:  # the model's words are not in its sentence: the extractive span of the expected type, if any
        short, span = short_answer(best.text, kind, question)
    return Answer(text=" ".join(s.text for s in out), sentences=out, short_answer=short, short_answer_sentence=0,
                  short_answer_span=list(span) if span else None, answer_type=kind, **common)
