"""The LLM-free reader's learned weights: which candidate sentence holds the answer, and how sure to be of it.

Two linear models, fitted by bench/reader_train.py on the dev split of the question set and stored as
data (core/query/reading/data/reader_model.json, with what they were fitted on and their dev figures):
- the sentence model: P(this sentence holds a reference answer) from its features (core.query.reading.features),
  fitted listwise (a softmax over each question's candidates, which is what picking one sentence needs) and then
  calibrated to a probability, so at query time it is still one logistic function of the features;
- the confidence model: P(the best sentence is right) from the ranking as a whole (the best probability, its
  margin over the runner-up, …), fitted on cross-validated sentence probabilities so it is calibrated, not
  flattered by the data the sentence model saw.
The reader states an answer when the confidence reaches `threshold` (chosen on dev for the precision it names)
and abstains below it. Scoring is a dot product: no scikit-learn at query time.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from core.query.reading.candidates import Candidate

MODEL_PATH = Path(__file__).with_name("data") / "reader_model.json"
CONFIDENCE_FEATURES = ("top_logit", "margin", "second_logit", "top_typed", "top_named", "top_overlap",
                       "expects_type", "agree")


@dataclass(frozen=True)
class Linear:
    names: tuple[str, ...]
    coef: tuple[float, ...]
    intercept: float

    def logit(self, features: dict[str, float]) -> float:
        return self.intercept + sum(w * features.get(n, 0.0) for n, w in zip(self.names, self.coef))

    def prob(self, features: dict[str, float]) -> float:
        return _sigmoid(self.logit(features))

    @classmethod
    def of(cls, data: dict) -> Linear:
        return cls(tuple(data["features"]), tuple(float(w) for w in data["coef"]), float(data["intercept"]))


@dataclass(frozen=True)
class ReaderModel:
    sentence: Linear
    confidence: Linear
    threshold: float  # state the answer at or above this confidence
    related: float  # below this best-sentence probability, the passages are not even shown as related
    # P(the papers do not answer | the reader abstained), from the logit of the confidence it abstained at
    # (bench/abstention_calibrate.py): an abstention's own confidence. None: not fitted, the raw confidence stands.
    abstention: Linear | None = None

    def score(self, candidates: list[Candidate]) -> None:
        for c in candidates:
            c.p = self.sentence.prob(c.features)

    def confidence_of(self, ranked: list[Candidate]) -> float:
        return self.confidence.prob(confidence_features(ranked)) if ranked else 0.0

    def abstention_confidence(self, confidence: float) -> float:
        """How likely an abstention at this confidence is right (the papers say nothing on it): a low best
        sentence makes silence likelier. The answer's confidence is always the chance that what it gives is right."""
        if self.abstention is None:
            return confidence
        return self.abstention.prob({"confidence_logit": _logit(confidence)})


def confidence_features(ranked: list[Candidate]) -> dict[str, float]:
    """The ranking seen as a whole, best first: how strong the best sentence is and how far ahead."""
    top = ranked[0]
    second = ranked[1].p if len(ranked) > 1 else top.p  # a lone candidate shows no lead over anything
    same_source = [c for c in ranked[1:4] if c.n == top.n]
    return {"top_logit": _logit(top.p), "margin": top.p - second, "second_logit": _logit(second),
            "top_typed": top.features.get("typed", 0.0), "top_named": top.features.get("named", 1.0),
            "top_overlap": top.features.get("overlap", 0.0),
            "expects_type": 1.0 - top.features.get("kind_other", 0.0), "agree": float(bool(same_source))}


@lru_cache(maxsize=4)
def load_model(path: Path = MODEL_PATH) -> ReaderModel:
    data = json.loads(path.read_text(encoding="utf-8"))
    return ReaderModel(sentence=Linear.of(data["sentence"]), confidence=Linear.of(data["confidence"]),
                       threshold=float(data["threshold"]), related=float(data.get("related", 0.0)),
                       abstention=Linear.of(data["abstention"]) if "abstention" in data else None)


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(min(x, 40.0), -40.0)))


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))
