"""What a table's caption and the sentences citing it ("Table 2 shows …") say about its numbers when the table
does not: the dataset ("Results on the SQuAD dev set" → SQuAD), the metric ("Accuracy (%) on …"), the setting
(dev, test, zero-shot) and the unit ("(%)").

A dataset is a name-like run of words (a capital inside or after its first letter, or a digit: "SQuAD 1.1",
"CIFAR-10", "SCIDOCS", "ImageNet") after "on / over / for (the)", or before "dataset / benchmark / corpus / suite";
a name the lexicon knows as a metric, or one of a few words that look like names but are not datasets, is not one.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from core.schema.records import ContentItem
from core.text.result_names import dataset_key, is_aggregate_name, is_metric_name, metric_key

_NAME = r"(?:[A-Z][A-Za-z]*[A-Z0-9][\w.'’+-]*|[A-Z]{2,}[\w.'’+-]*|[A-Za-z]+-\d[\w.-]*|[A-Z][a-z]+-[A-Z][\w.-]*)"
_VERSION = r"(?:\s+v?\d+(?:\.\d+)*\b)?"
_NAMES = rf"{_NAME}{_VERSION}(?:[\s-]+{_NAME}{_VERSION}){{0,3}}"
_KIND = r"(?:data\s*sets?|benchmarks?|corpus|corpora|(?:evaluation\s+)?suite|leaderboard|challenge|shared\s+task)"
_SPLIT = r"(?:dev(?:elopment)?|test(?:ing)?|validation|val|held-out)"
_AFTER_PREP = re.compile(rf"\b(?:on|over|for|across|using|in)\s+(?:the\s+)?(?P<name>{_NAMES})"
                         rf"(?:\s+{_SPLIT})?(?:\s+(?:sets?|splits?|{_KIND}))?")
_BEFORE_KIND = re.compile(rf"(?P<name>{_NAMES})\s+(?:{_SPLIT}\s+)?(?:{_KIND}|(?:{_SPLIT})\s+sets?)\b")
_SPLIT_OF = re.compile(rf"\b{_SPLIT}\s+(?:sets?|splits?|portions?)\s+of\s+(?:the\s+)?(?P<name>{_NAMES})")
_MORE = re.compile(rf"\s*(?:,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+|\s*&\s*)(?:the\s+)?(?P<name>{_NAMES})")
_NOT_DATASETS = {"gpu", "gpus", "cpu", "tpu", "nlp", "ml", "ai", "llm", "llms", "table", "figure", "fig", "section",
                 "appendix", "english", "we", "our", "all", "each", "both", "api", "pdf", "pdfs"}

_SETTINGS = (
    (re.compile(r"\b(?:dev(?:elopment)?)\s+(?:sets?|splits?|data)\b|\bdev\b", re.I), "dev"),
    (re.compile(r"\btest(?:ing)?\s+(?:sets?|splits?|data)\b", re.I), "test"),
    (re.compile(r"\bvalidation\s+(?:sets?|splits?|data)\b", re.I), "validation"),
    (re.compile(r"\bzero[- ]shot\b", re.I), "zero-shot"),
    (re.compile(r"\bfew[- ]shot\b", re.I), "few-shot"),
    (re.compile(r"\b(\d+)[- ]shot\b", re.I), "{0}-shot"),
)
_UNIT_PERCENT = re.compile(r"\(\s*%\s*\)|\bin\s+%|\bpercent(?:age)?s?\b|\(\s*in\s+%\s*\)")
_WORD = re.compile(r"[A-Za-z][\w@.+-]*")
_FREE_TEXT_METRIC_MIN = 2  # single letters ("P", "R") name metrics in headers only
_NOT_METRICS_IN_TEXT = {"is", "all", "score", "scores", "time", "success", "return", "rank", "mean", "average", "hit",
                        "hits", "map", "error", "memory", "coverage", "spec", "rec", "tau", "rho"}
MAX_METRIC_WORDS = 6
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
MAX_TEXT = 20_000  # characters of citing sentences read per table


_ABBR = r"[A-Z][\w@+-]{0,15}"
_DEFINITIONS = (
    re.compile(rf"(?<![\w-])(?P<abbr>{_ABBR})\s+(?:is|denotes|represents|refers to|means|stands for)\s+"
               rf"(?:the\s+)?(?P<def>[^,.;:()]+)"),
    re.compile(rf"(?<![\w-])(?P<abbr>{_ABBR})\s*:\s*(?P<def>[^,.;:()]+)"),
    re.compile(rf"(?P<def>[A-Za-z][^,.;:()]*?)\s*\((?P<abbr>{_ABBR}|[^\s()]{{1,12}})\)"),
)
_METRIC_WORDS = re.compile(r"\b(?:accuracy|precision|recall|f1|f-score|score|error|rate|agreement|kappa|correlation|"
                           r"variation|bleu|rouge|auc|perplexity|latency|loss|mrr|ndcg|map)\b", re.I)


def definitions(caption: str) -> dict[str, str]:
    """Abbreviations a caption defines → their definitions: "ALL is cell selection accuracy" → {"ALL": "cell
    selection accuracy"}; "CLS: classification" → {"CLS": "classification"}; "Fleiss kappa (F-κ)" → {"F-κ": …}."""
    out: dict[str, str] = {}
    for pattern in _DEFINITIONS:
        for m in pattern.finditer(caption or ""):
            abbr, definition = m.group("abbr").strip(), m.group("def").strip()
            if abbr.casefold() in ("table", "figure", "we", "it", "this", "the", "all") and abbr != "ALL":
                continue
            out.setdefault(abbr, definition)
    return out



@dataclass
class TableContext:
    datasets: list[str] = field(default_factory=list)  # from the caption, in order
    text_datasets: list[str] = field(default_factory=list)  # from the citing sentences
    metric: str = ""
    setting: str = ""
    unit: str = ""
    defined: dict[str, str] = field(default_factory=dict)  # abbreviations the caption defines → their definitions
    caption: str = ""  # without its label
    paper_dataset: str = ""  # the dataset the paper itself introduces (paper_dataset), for tables naming none

    def names(self, word: str) -> bool:
        """Whether the caption names the word ("Drift of the models on ChemBench" names "Drift")."""
        return bool(word) and bool(re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", self.caption, re.I))

    @property
    def defined_metrics(self) -> dict[str, bool]:
        return {abbr: bool(_METRIC_WORDS.search(d)) for abbr, d in self.defined.items()}

    @cached_property
    def dataset(self) -> str:
        """The one dataset the caption names, else the one the citing sentences name most; "" when unsure."""
        if len({dataset_key(d) for d in self.datasets}) == 1:
            return self.datasets[0]
        if not self.datasets and self.text_datasets:
            counts: dict[str, int] = {}
            for d in self.text_datasets:
                counts[dataset_key(d)] = counts.get(dataset_key(d), 0) + 1
            best = max(counts.values())
            winners = [k for k, n in counts.items() if n == best]
            if len(winners) == 1:
                return next(d for d in self.text_datasets if dataset_key(d) == winners[0])
        return ""


def _clean_name(name: str) -> str:
    name = re.sub(rf"\s+{_SPLIT}$", "", name.strip(" .,;:"))
    return name.strip(" .,;:-")


def datasets_in(text: str) -> list[str]:
    """Dataset names a sentence or caption states, in order, each once."""
    found: list[tuple[int, str]] = []
    for pattern in (_AFTER_PREP, _BEFORE_KIND, _SPLIT_OF):
        for m in pattern.finditer(text or ""):
            name = _clean_name(m.group("name"))
            first = name.split()[0].casefold() if name else ""
            if not name or first in _NOT_DATASETS or is_metric_name(name) or is_aggregate_name(name):
                continue
            if not dataset_key(name):
                continue
            found.append((m.start("name"), name))
            end = m.end("name")
            while more := _MORE.match(text, end):  # "on CIFAR-10 and ImageNet"
                found.append((more.start("name"), _clean_name(more.group("name"))))
                end = more.end("name")
    seen, out = set(), []
    for _, name in sorted(found):
        key = dataset_key(name)
        if key not in seen and not any(key in s or s in key for s in seen):
            seen.add(key)
            out.append(name)
    return out


def metric_in(text: str) -> str:
    """The first metric a caption or sentence names ("Accuracy (%) on …" → "Accuracy"), else ""."""
    words = [(m.group(0).rstrip(".,;:"), m.start()) for m in _WORD.finditer(text or "")]
    for i in range(len(words)):
        for n in range(MAX_METRIC_WORDS, 0, -1):  # the longest name: "area under the precision/recall curve"
            chunk = " ".join(w for w, _ in words[i:i + n])
            if len(chunk) < _FREE_TEXT_METRIC_MIN or chunk.casefold() in _NOT_METRICS_IN_TEXT:
                continue
            if len(words[i:i + n]) == n and is_metric_name(chunk) and metric_key(chunk):
                return chunk
    return ""


def setting_in(text: str) -> str:
    for pattern, name in _SETTINGS:
        m = pattern.search(text or "")
        if m:
            return name.format(*m.groups()) if m.groups() else name
    return ""


def citing_sentences(label: str, items: Sequence[ContentItem]) -> list[str]:
    """Sentences of the paper's text that name the table ("Table 2", "Tab. 2"), in order."""
    m = re.match(r"Table\s+(\S+)$", label or "")
    if not m:
        return []
    mention = re.compile(rf"\bTab(?:le|\.)?\s*{re.escape(m.group(1))}(?!\d|\.\d)")
    out, total = [], 0
    for item in items:
        if item.type not in ("text", "list") or not item.text or "Tab" not in item.text:
            continue
        for sentence in _SENTENCE.split(item.text):
            if mention.search(sentence):
                out.append(sentence)
                total += len(sentence)
                if total > MAX_TEXT:
                    return out
    return out


_TITLE_HEAD = re.compile(rf"^\s*(?P<name>{_NAME}{_VERSION})\s*:")
MIN_DATASET_MENTIONS = 2  # "the X dataset" at least twice: the paper presents X as a dataset, not a method
TITLE_ITEMS = 5  # the title is among the first items of the content list


def paper_dataset(items: Sequence[ContentItem]) -> str:
    """The dataset a dataset paper introduces: its title opens with the name ("Multi-LexSum: Real-World Summaries
    of …") and its text calls that name a dataset, corpus or benchmark at least twice; else "". A method paper's
    title ("SPECTER: Document-level …") gives none: its text does not call the name a dataset."""
    title = next((it.text for it in items[:TITLE_ITEMS] if it.type == "text" and it.text_level == 1 and it.text), "")
    m = _TITLE_HEAD.match(title or "")
    if not m:
        return ""
    key = dataset_key(m.group("name"))
    mentions = 0
    for item in items:
        if item.type in ("text", "list") and item.text and m.group("name") in item.text:
            mentions += sum(dataset_key(x.group("name")) == key for x in _BEFORE_KIND.finditer(item.text))
            if mentions >= MIN_DATASET_MENTIONS:
                return m.group("name")
    return ""


def table_context(caption: str, footnote: str, sentences: Sequence[str]) -> TableContext:
    caption_text = re.sub(r"^\s*Table\s+\S+\s*[:.]?", "", caption or "")
    ctx = TableContext(datasets=datasets_in(caption_text), caption=caption_text)
    ctx.metric = metric_in(caption_text)
    ctx.setting = setting_in(caption_text) or setting_in(footnote)
    ctx.unit = "%" if _UNIT_PERCENT.search(caption_text) else ""
    ctx.defined = definitions(caption_text)
    for sentence in sentences:
        ctx.text_datasets.extend(datasets_in(sentence))
        ctx.metric = ctx.metric or metric_in(sentence)
    return ctx
