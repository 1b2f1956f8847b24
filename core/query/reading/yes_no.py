"""Yes or no from the sentence that answers a yes/no question ("Does REVERB model n-ary relations?" → "These errors
are due to the fact that REVERB only models binary relations." → no).

The reader finds the evidence sentence like for any question; this module reads its polarity: a negation the
question does not itself say ("not", "no", "only", "unlike", …
core/query/reading/data/reader_cues.json) makes the answer
no; none, yes. Negations said in passing ("(data not shown)") or that do not negate ("not only … but also", the
"nor" of "not … nor") do not count. On qa dev's 18 stated yes/no answers this is right for 15; counting parity (an
even number of negations reads as yes) was right for 13. A question asked in the negative ("Does X not …?") flips
nothing: its own negations are not counted in the sentence.
"""
from __future__ import annotations

import re
from functools import lru_cache

from core.query.reading.features import negation_words, not_negating

YES, NO = "yes", "no"
# Said in passing: "(data not shown)". What negates nothing ("not only … but also") is data: reader_cues.json.
_ASIDE = re.compile(r"\([^()]*\)")


def _negations(text: str) -> list[str]:
    low = f" {text.lower()} "
    found = []
    for cue in negation_words():
        found += [cue] * len(re.findall(rf"(?<![a-z']){re.escape(cue)}(?![a-z'])", low))
    return found


@lru_cache(maxsize=1)
def _not_negating() -> re.Pattern:
    return re.compile("|".join(rf"\b{re.escape(w)}\b" for w in not_negating()), re.I)


def polarity(question: str, sentence: str) -> str:
    asked = set(_negations(question))
    kept = _not_negating().sub(" ", sentence)
    said = [n for n in _negations(_ASIDE.sub(" ", kept)) if n not in asked]
    return NO if said else YES
