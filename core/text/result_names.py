"""Keys for the names in results tables, so numbers from different papers can be grouped: the write side
(core/pipeline/results) stores them on every ResultRecord and the read side looks records up by them.

Pure functions of the name, no state: the same name gives the same key in every process and version of the
data file (data/result_names.json, edited by hand). The keys:

- `dataset_key`: "SQuAD 1.1", "SQuAD v1.1", "SQuAD1.1" and "the SQuAD v1.1 dev set" → "squad1.1"; "SQuAD 2.0" and
  "SQuAD2" → "squad2"; "SCIDOCS", "SciDocs" → "scidocs". Case, spaces, hyphens, a "v" before a version, a ".0"
  ending it, a citation in parentheses and the words naming its kind or split ("dataset", "benchmark", "dev set")
  do not count; its digits do.
- `metric_key`: the metric's canonical key from the lexicon: "F1", "F1 score", "F1-score", "F₁" → "f1"; "Acc.",
  "Accuracy" → "accuracy"; a cut-off is kept: "nDCG@10" → "ndcg@10", "P@1" → "precision@1". A unit in
  parentheses, arrows and footnote marks do not count. An unknown metric keeps its compact form ("mapndcg").
- `method_key`: "SPECTER (Ours)", "SPECTER†" → "specter"; "BERT-large", "BERT large" → "bertlarge"; a year or
  citation in parentheses does not count ("SIF (2017)" → "sif").

`metric_direction` says whether higher or lower is better ("↓" or "↑" in the name wins over the lexicon), and
`is_metric_name` whether the lexicon knows a name, `is_attribute_name` whether a column describes a method
(its size, its year) rather than scoring it: the table reader uses them to tell metric headers from dataset
headers and from columns that are no results.
"""
from __future__ import annotations

import json
import re
import unicodedata
from functools import cache
from pathlib import Path

_PATH = Path(__file__).parent / "data" / "result_names.json"
MAX_NAME = 200  # a cell is not a name past this: keys stay short whatever a broken table holds

_MARKS = re.compile(r"[*†‡§¶#⋆★♠♣♦♥✝✓✗]")
_ARROWS = re.compile(r"[↑↓⇑⇓▲▼△▽]|\(\s*(?:higher|lower)[^)]*\)")
_PARENS = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_CITATION = re.compile(r"\b(?:1[89]|20)\d\d[a-z]?\b|et al|\bours?\b|\bproposed\b|this (?:work|paper)|"
                       r"^\s*\d+(?:\s*,\s*\d+)*\s*$", re.I)
_CUTOFF = re.compile(r"@\s*(\d+(?:\.\d+)?)")
_WORDS = re.compile(r"[^\W_]+(?:\.[0-9]+)*|[+]+")  # letters of any script: "F-κ" is not "F"
_QUALIFIERS = ("test", "dev", "val", "valid", "validation", "train", "avg", "average", "mean", "overall", "final")


@cache
def _data() -> dict:
    return json.loads(_PATH.read_text(encoding="utf-8"))


@cache
def _metric_index() -> dict[str, tuple[str, str]]:
    """Compact spelling → (key, direction)."""
    index: dict[str, tuple[str, str]] = {}
    for entry in _data()["metrics"]:
        for name in [entry["key"], *entry["names"]]:
            index.setdefault(name, (entry["key"], entry["direction"]))
    return index


def _fold(name: str) -> str:
    text = unicodedata.normalize("NFKC", (name or "")[:MAX_NAME]).casefold().replace("\ue000", "")
    # Modifier letters and symbols ("P@1 ˆ": a hat a PDF's text layer put beside the name) are no part of a name.
    return "".join(ch for ch in text if unicodedata.category(ch) not in ("Lm", "Sk"))


def _compact(words: list[str]) -> str:
    return "".join(words)


def _metric_parts(name: str) -> tuple[list[str], str]:
    """The name's words (units, arrows, marks and parentheses out) and its cut-off ("10" of "nDCG@10")."""
    text = _MARKS.sub("", _ARROWS.sub("", _fold(name)))
    cutoff = _CUTOFF.search(text)
    text = _CUTOFF.sub(" ", text)
    text = _PARENS.sub(" ", text).replace("%", " ")
    return _WORDS.findall(text), (cutoff.group(1) if cutoff else "")


_F1_SUBSCRIPT = "f1"  # "R-1f1", "BSf1": a parser glued the subscript of ROUGE-1_{F1} to the name


def _lookup(words: list[str]) -> tuple[str, str] | None:
    index = _metric_index()
    while words:
        compact = _compact(words)
        hit = index.get(compact)
        if not hit and words[-1].endswith(_F1_SUBSCRIPT) and len(words[-1]) > len(_F1_SUBSCRIPT):  # glued only
            base = index.get(compact[:-len(_F1_SUBSCRIPT)])
            hit = base if base and base[0] != "average" else None
        if hit:
            return hit
        if words[0] not in _QUALIFIERS:  # "Test Acc", "Avg. F1": the metric after a split or an average
            return None
        words = words[1:]
    return None


def metric_key(name: str) -> str:
    """The metric's key: the lexicon's key for a known spelling, else the name's compact form; a cut-off
    ("@10") is kept. "" for a name with no letters or digits."""
    words, cutoff = _metric_parts(name)
    hit = _lookup(words)
    key = hit[0] if hit else _compact(words)
    if not key:
        return ""
    return f"{key}@{cutoff}" if cutoff else key


def is_metric_name(name: str) -> bool:
    """Whether the lexicon knows the name as a metric (an arrow ↑/↓ in it says so too)."""
    if _ARROWS.search(name or "") and _metric_parts(name)[0]:
        return True
    words, _ = _metric_parts(name)
    hit = _lookup(words)
    return bool(hit) and hit[0] != "average"


def is_aggregate_name(name: str) -> bool:
    """"Avg.", "Average", "Mean", "Overall", "All": a column or row that sums up the others."""
    hit = _lookup(_metric_parts(name)[0])
    return bool(hit) and hit[0] == "average"


def metric_direction(name: str) -> str:
    """"higher", "lower" or "" (unknown): an arrow in the name, else the lexicon."""
    folded = _fold(name)
    if re.search(r"[↑⇑▲△]|higher is better", folded):
        return "higher"
    if re.search(r"[↓⇓▼▽]|lower is better", folded):
        return "lower"
    hit = _lookup(_metric_parts(name)[0])
    return hit[1] if hit else ""


def _without_citations(text: str) -> str:
    return _PARENS.sub(lambda m: " " if _CITATION.search(m.group(0)[1:-1]) else m.group(0), text)


def plain_name(name: str) -> str:
    """The name as printed without what is not part of it: a citation or "(Ours)" in parentheses, footnote marks
    ("SPECTER (Ours)†" → "SPECTER", "SIF (2017)" → "SIF"). Case and spelling are kept (for display and for the
    graph's own entity keys)."""
    text = _MARKS.sub("", _PARENS.sub(lambda m: " " if _CITATION.search(m.group(0)[1:-1]) else m.group(0),
                                      (name or "")[:MAX_NAME]))
    return " ".join(text.replace("\ue000", "").split())


def dataset_key(name: str) -> str:
    """The dataset's key: its words and version without case, spacing, kind or split (see the module doc)."""
    text = _MARKS.sub("", _without_citations(_fold(name)))
    drop = set(_data()["dataset_drop"])
    words = [w for w in _WORDS.findall(text) if w not in drop and w != "+"]
    out = []
    for w in words:
        w = re.sub(r"^v(?=\d)", "", w)  # "v1.1" → "1.1"
        w = re.sub(r"(?<=[a-z])v(?=\d+(?:\.\d+)*$)", "", w)  # "squadv2" → "squad2"
        out.append(re.sub(r"(\d)\.0$", r"\1", w))  # "2.0" → "2"
    return _compact(out)


def method_key(name: str) -> str:
    """The method's key: its words without case, spacing, marks or a citation (see the module doc)."""
    text = _MARKS.sub("", _without_citations(_fold(name)))
    drop = set(_data()["method_drop"])
    words = [w for w in _WORDS.findall(text) if w not in drop]
    return _compact(words)


def is_attribute_name(name: str) -> bool:
    """"Params", "#Params (M)", "Year", "Std": a column describing a method rather than scoring it."""
    words, _ = _metric_parts(name)
    return _compact(words) in set(_data()["attributes"])


def setting_words() -> tuple[str, ...]:
    """Words naming a split or a setting ("dev", "zero-shot"), longest first."""
    return tuple(sorted(_data()["settings"], key=len, reverse=True))
