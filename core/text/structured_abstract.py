"""Structured abstracts: "BACKGROUND: … METHODS: … RESULTS: … CONCLUSIONS: …", as PubMed and most clinical and
life-science journals print them (also OBJECTIVE, DESIGN, SETTING, PARTICIPANTS, MAIN OUTCOME MEASURES …). The
chunker makes each labelled part a section of its own (core/pipeline/chunking.py), so a passage says it is a result
or a conclusion, and the reading side can prefer those for yes/no and numeric questions (core/query/context.py).

A label counts at a paragraph's start, or after a sentence's end; in capitals ("RESULTS:", "RESULTS.") or, with a
colon only, capitalised ("Results:"). Labels are known words joined by "and" ("MATERIALS AND METHODS",
"BACKGROUND AND AIMS"): a capitalised word before a colon that is not one ("Note:", "Example:") is no label."""
from __future__ import annotations

import re

_WORDS = ("background", "introduction", "context", "objective", "objectives", "aim", "aims", "purpose", "purposes",
          "rationale", "hypothesis", "design", "study design", "setting", "settings", "participants", "patients",
          "subjects", "population", "intervention", "interventions", "exposure", "exposures", "method", "methods",
          "methodology", "materials", "material", "measurements", "main outcome measure", "main outcome measures",
          "outcome measure", "outcome measures", "main outcomes", "outcomes", "analysis", "statistical analysis",
          "data sources", "study selection", "data extraction", "data synthesis", "results", "result", "findings",
          "main results", "principal findings", "key findings", "conclusion", "conclusions", "interpretation",
          "discussion", "limitations", "significance", "implications", "clinical relevance", "trial registration",
          "importance", "evidence acquisition", "evidence synthesis", "summary")
_WORD = "|".join(sorted((re.escape(w).replace(r"\ ", r"\s+") for w in _WORDS), key=len, reverse=True))
_LABEL = rf"(?:{_WORD})(?:\s*(?:,|/|&|\band\b)\s*(?:{_WORD}))*"
# A label in capitals may end with a colon or a full stop; a capitalised one only with a colon.
_AT = r"(?:^|(?<=[.!?])\s+|(?<=[.!?][\"')\]])\s+)"
LABELLED = re.compile(rf"{_AT}(?P<label>[A-Z][A-Z ,/&]+|[A-Z][a-z]+(?:[ ,/&]+[A-Za-z]+){{0,4}})\s*(?P<sep>[:.])\s+")
_KNOWN = re.compile(rf"{_LABEL}", re.I)

# What a section says, for the reading side: the kinds of part a question may prefer.
_KINDS = {"results": ("result", "finding", "measurement", "outcome"), "conclusions": ("conclusion", "interpretation",
          "discussion", "implication", "significance", "summary")}


def _is_label(label: str, sep: str) -> bool:
    words = " ".join(label.replace(",", " , ").split())
    if not _KNOWN.fullmatch(words):
        return False
    return sep == ":" or label.isupper()


def labelled_parts(text: str) -> list[tuple[str, str]]:
    """The text cut at its structured-abstract labels: [(label title-cased, the part with its label)], the text
    before the first label (if any) with label "". [] when the text has no label at its start nor two inside
    (one capitalised word and a colon inside a sentence is no structure)."""
    found = [m for m in LABELLED.finditer(text) if _is_label(m.group("label").strip(), m.group("sep"))]
    if not found or found[0].start() > 0 and len(found) < 2:
        return []
    parts: list[tuple[str, str]] = []
    if found[0].start() > 0:
        parts.append(("", text[:found[0].start()].strip()))
    for m, nxt in zip(found, [*found[1:], None]):
        label = " ".join(m.group("label").split()).title().replace(" And ", " and ")
        parts.append((label, text[m.start():nxt.start() if nxt else len(text)].strip()))
    return [(label, part) for label, part in parts if part]


def section_kind(section: str) -> str:
    """"results" or "conclusions" when a section's name says it holds a paper's results or its conclusions (a
    structured abstract's part or a paper's section: "Results", "4 Results and Discussion", "Conclusions"), else
    ""."""
    low = section.lower()
    for kind, words in _KINDS.items():
        if any(re.search(rf"\b{w}", low) for w in words):
            return kind
    return ""
