"""Results questions answered by computing over the records the papers' tables report (lib.results), before any
reader: "What is the best F1 on X?", "Which method has the highest / lowest M on D?", "What M does A reach on D?",
"Does A beat B on D (by how much)?", "How does A compare with B on D?", "Which papers report results on D?".

A question is one of these only when it names a dataset the records hold (core.query.result_lookup.mentioned) and
says what it wants of it (best / highest / lowest, a method's value, two methods compared, the papers); the answer
is computed from every ready paper's records (or the papers the question is limited to), names its reader
("results"), and cites each number's table cell as a source of the context ([n]: paper, page, the table's box,
"Table 1, row 3, column 2"). Anything the records do not cover — no dataset named, no metric both methods report —
goes to the readers as before (`answer_results` returns None)."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.library import Library
from core.query.records import Answer, AnswerSentence, Context, Source
from core.query.result_lookup import GENERIC, WORDS, direction, fold, named, printed, ranked, said_word, said_words
from core.schema.modes import Reader
from core.schema.results import Direction, ResultRecord
from core.store.base import ResultFilter
from core.text.result_names import is_aggregate_name, is_metric_name

_PAPERS = re.compile(r"\b(which|what)\s+(papers?|works|studies|articles|publications)\b.*\b(report|evaluat|test|"
                     r"result|benchmark|experiment|use)", re.I)
_BEST = re.compile(r"\b(best|top|highest|lowest|state[- ]of[- ]the[- ]art|sota|leading|strongest|worst|"
                   r"maximum|minimum|max|min)\b", re.I)
_COMPARE = re.compile(r"\b(beat|beats|outperform\w*|better|worse|compare\w*|versus|vs\.?|than|exceed\w*|"
                      r"surpass\w*|difference|gap|improv\w*|ahead|gain\w*)\b", re.I)
# "Which model has the highest …": the methods the question names are its context, the best one is asked for.
_WHICH_ONE = re.compile(r"\b(which|what|who)\s+(\w+\s+){0,2}(method|model|system|algorithm|approach|variant|"
                        r"configuration|setting|technique|parser|classifier|architecture|entry|one)s?\b|\bwho\b",
                        re.I)
_VALUE = re.compile(r"\b(what|which|how\s+(much|well|high|good))\b.*\b(reach\w*|achiev\w*|get|gets|got|obtain\w*|"
                    r"score\w*|report\w*|perform\w*|attain\w*|do|does|is|was|yield\w*)\b", re.I)
_SCORES = re.compile(r"\b(reach\w*|achiev\w*|scor\w*|obtain\w*|attain\w*|yield\w*|how\s+(much|well|high|good))\b",
                     re.I)
_EXTREMES = (("worst", re.compile(r"\bworst\b", re.I)), ("lowest", re.compile(r"\b(lowest|minimum|min)\b", re.I)),
             ("highest", re.compile(r"\b(highest|maximum|max)\b", re.I)))
# Row labels that are no method a question would name.
_NOT_METHODS = {"ours", "our", "model", "method", "average", "avg", "all", "best", "none", "total",
                "mean", "random", "results", "result", "score", "the", "a", "table", "dataset", "task"}
MAX_LISTED = 5
_TOKENS = re.compile(r"[0-9a-z]+(?:[.-][0-9a-z]+)*")


@dataclass
class ResultsQuestion:
    kind: str  # best | value | compare | papers
    dataset_keys: list[str]
    metric_keys: list[str]  # [] = every metric of the dataset
    method_keys: list[str]
    extreme: str = "best"  # best | worst | highest | lowest: which end of the leaderboard is asked for
    question: str = ""


def _ready(lib: Library, doc_ids: Sequence[str] | None) -> list[str]:
    ready = [d.id for d in lib.documents.ready_papers()]
    return [d for d in ready if d in set(doc_ids)] if doc_ids else ready


def recognise(lib: Library, question: str, doc_ids: Sequence[str] | None = None) -> ResultsQuestion | None:
    """What a results question asks, by the names the records hold (said loosely: result_lookup.named); None when
    it is no results question."""
    if lib.results.count() == 0:
        return None
    scope = ResultFilter(doc_ids=_ready(lib, doc_ids))
    # A "dataset" named like an aggregate or a metric ("Average", "F1") is a table header read as a dataset: no
    # question means it.
    dataset_names = [(k, n) for k, n in lib.results.printed_names("dataset", scope)
                     if not (is_aggregate_name(n) or is_metric_name(n))]
    datasets = [(k, shown) for k, shown, strength in named(question, dataset_names, kind="dataset", min_chars=3)
                if strength >= WORDS]
    if not datasets:
        return _across_datasets(lib, question, scope)
    # The dataset whose records hold the metric the question names, the surest named first.
    chosen, metrics = datasets[0][0], []
    for key, _ in datasets:
        on = ResultFilter(doc_ids=scope.doc_ids, dataset_key=key)
        found = _metrics(question, lib.results.printed_names("metric", on))
        if found:
            chosen, metrics = key, found
            break
    on = ResultFilter(doc_ids=scope.doc_ids, dataset_key=chosen)
    methods = _methods(lib, question, on, {k for k, _ in datasets})
    keys = [chosen]
    if _PAPERS.search(question) and not methods:
        return ResultsQuestion("papers", keys, metrics, [])
    if not metrics and _names_a_metric(question):  # a metric the records of the dataset do not hold: the readers'
        return None
    return _asked(question, keys, metrics, methods)


def _metrics(question: str, names, aggregates: bool = True) -> list[str]:
    """The metrics the question names, spelled or said by all their words; a metric printed as a word any
    question says ("Score") is none."""
    return [k for k, shown, strength in named(question, names, kind="metric")
            if strength >= WORDS and (aggregates or not is_aggregate_name(shown)) and (
                fold(shown) not in GENERIC or re.search(rf"\b{re.escape(shown.strip())}\b", question))]


def _methods(lib: Library, question: str, on: ResultFilter, dataset_keys: set[str]) -> list[str]:
    """The methods the question names among the records `on` keeps: spelled or said by all their words first
    (the fullest row label first), then those said by one word only their name holds."""
    method_names = lib.results.printed_names("method", on)
    said = [(k, shown, strength) for k, shown, strength in named(question, method_names, kind="method", min_chars=3)
            if k not in _NOT_METHODS and shown.casefold() not in _NOT_METHODS and k not in dataset_keys]
    sure = _fullest(question, [(k, n) for k, n, strength in said if strength >= WORDS])
    methods = sure + [k for k, _, strength in said if strength < WORDS and k not in sure]
    # Two methods compared keep the question's order: "does A beat B" asks about A.
    if len(methods) >= 2:
        shown = {k: n for k, n, _ in said}
        first_two = sorted(methods[:2], key=lambda k: _position(question, shown.get(k, k)))
        methods = first_two + methods[2:]
    return methods


def _position(question: str, name: str) -> int:
    """Where the question first says a word of the name (its length when it says none)."""
    words = [fold(w) for w in _TOKENS.findall(question.casefold())]
    mine = {fold(w) for w in _TOKENS.findall(name.casefold())} | {fold(name)}
    return next((i for i, w in enumerate(words) if w and any(w == m or (len(w) >= 4 and len(m) >= 4 and (
        w.startswith(m) or m.startswith(w))) for m in mine)), len(words))


def _asked(question: str, keys: list[str], metrics: list[str], methods: list[str]) -> ResultsQuestion | None:
    if len(methods) >= 2 and _COMPARE.search(question):
        return ResultsQuestion("compare", keys, metrics, methods[:2])
    if _BEST.search(question) and (not methods or _WHICH_ONE.search(question)):
        extreme = next((name for name, pattern in _EXTREMES if pattern.search(question)), "best")
        return ResultsQuestion("best", keys, metrics, [], extreme=extreme)
    if len(methods) == 1 and _COMPARE.search(question):  # "does A beat B" with B unknown to the records: readers'
        return None
    # "What does A do on D" asks no number: a metric named, or a verb of scoring, says it does.
    if methods and _VALUE.search(question) and not _BEST.search(question) and (metrics or _SCORES.search(question)):
        return ResultsQuestion("value", keys, metrics, methods[:1])
    return None


def _across_datasets(lib: Library, question: str, scope: ResultFilter) -> ResultsQuestion | None:
    """A question naming no dataset the records hold: "which papers report LAS", "which papers report numbers for
    SciBERT" (over every dataset), or "what F1 does ScienceParse get" (a method and a metric both named)."""
    metrics = _metrics(question, lib.results.printed_names("metric", scope), aggregates=False)
    methods = [k for k, shown, strength in named(question, lib.results.printed_names("method", scope),
                                                 kind="method", min_chars=3)
               if strength >= WORDS and k not in _NOT_METHODS and shown.casefold() not in _NOT_METHODS]
    if _PAPERS.search(question):
        if methods and not metrics:
            return ResultsQuestion("papers", [], [], methods[:1])
        if metrics:
            return ResultsQuestion("papers", [], metrics, methods[:1])
        return None
    if metrics and len(methods) == 1 and _VALUE.search(question) and not _BEST.search(question) \
            and not _COMPARE.search(question):
        return ResultsQuestion("value", [], metrics, methods)
    return None


def _fullest(question: str, said: list[tuple[str, str]]) -> list[str]:
    """The methods the question says, a row label none of whose words the question leaves out before the shorter
    labels inside it: "TableFormer-Large with intermediate pretraining" names the row "TABLEFORMERLARGE inter", not
    "TABLEFORMERLARGE"."""
    heard = said_words(question)
    words = {k: {w for w in said_words(shown) if said_word(w, heard)} for k, shown in said}
    keys = list(dict.fromkeys(k for k, _ in said))
    inside = {k for k in keys for other in keys if other != k and words[k] < words[other]}
    return sorted((k for k in keys if k not in inside), key=lambda k: -len(words[k]))


def _names_a_metric(question: str) -> bool:
    words = re.findall(r"[\w@.-]+", question)
    return any(is_metric_name(" ".join(words[i:i + n]).strip(".?")) for n in (1, 2, 3) for i in range(len(words)))


class _Citer:
    """Sources for the records an answer cites: a table already in the context keeps its [n]; another is added
    (the chunk that holds the table, its page and box)."""

    def __init__(self, lib: Library, context: Context, titles: dict[str, str]):
        self.lib, self.context, self.titles = lib, context, titles
        self._chunks: dict[str, list] = {}

    def __call__(self, r: ResultRecord) -> int:
        for s in self.context.sources:
            if s.doc_id == r.doc_id and r.item_index in s.item_indices and s.kind == "table":
                return s.n
        chunks = self._chunks.setdefault(r.doc_id, self.lib.chunks.by_doc(r.doc_id))
        chunk = next((c for c in chunks if r.item_index in c.item_indices), None)
        n = max((s.n for s in self.context.sources), default=0) + 1
        caption = f"{r.table_label}: {r.caption}".strip(": ") if r.caption else r.table_label
        text = (f"{caption}\n" if caption else "") + (f"{r.method} — {r.metric} on {r.dataset or 'the dataset'}: "
                                                     f"{r.value_text} ({r.cell_ref})")
        self.context.sources.append(Source(
            n=n, chunk_id=chunk.id if chunk else "", doc_id=r.doc_id, doc_title=self.titles.get(r.doc_id, ""),
            page=r.page, bbox=list(r.bbox) or None, kind="table", section=chunk.section if chunk else "",
            text=text, item_indices=[r.item_index]))
        return n


def _where(r: ResultRecord, titles: dict[str, str], years: dict[str, int | None]) -> str:
    year = f", {years[r.doc_id]}" if years.get(r.doc_id) else ""
    setting = f"{r.setting}; " if r.setting else ""
    return f"({setting}{titles.get(r.doc_id, r.doc_id[:12])}{year}, p. {r.page + 1}, {r.cell_ref})"


def _where_next(r: ResultRecord, top: ResultRecord, titles: dict[str, str], years: dict[str, int | None]) -> str:
    """A runner-up's cell: only page and cell when it is in the best one's paper, the whole place otherwise."""
    if r.doc_id != top.doc_id:
        return _where(r, titles, years)
    setting = f"{r.setting}; " if r.setting and r.setting != top.setting else ""
    return f"({setting}p. {r.page + 1}, {r.cell_ref})"


def _in_setting(question: str, records: list[ResultRecord]) -> list[ResultRecord]:
    """The records of the setting the question names ("on the WTQ test set", "zero-shot"), when it names one the
    records state; all of them otherwise. A setting of several parts ("Before Perturb / test") is in it when the
    question says one of its parts."""
    said = {fold(w) for w in re.findall(r"[\w-]+", question)} | {fold(question)}
    whole = fold(question)

    def parts(setting: str) -> set[str]:
        return {fold(p) for p in re.split(r"[/;,|]", setting) if fold(p)}

    named = {p for r in records if r.setting for p in parts(r.setting)
             if p in said or (len(p) > 3 and p in whole)}
    if not named:
        return records
    kept = [r for r in records if parts(r.setting) & named]
    # the records saying the most of what the question names: "test" and "before perturbation" over "test" alone
    most = max(len(parts(r.setting) & named) for r in kept)
    return [r for r in kept if len(parts(r.setting) & named) == most]


_PROPER = re.compile(r"(?<!^)\b[\w-]*[A-Z][\w-]*\b")


def _in_papers_naming(lib: Library, question: str, records: list[ResultRecord]) -> list[ResultRecord]:
    """A question naming no dataset found a row by its label alone ("titles", "abstracts"): keep the records of
    the papers that say every other proper name the question does ("ScienceParse"), so a row of another paper
    labelled alike does not answer it."""
    own = set().union(*(said_words(f"{r.method} {r.metric} {r.dataset}") for r in records)) if records else set()
    names = {fold(m) for m in _PROPER.findall(question.strip())
             if fold(m) and not said_words(m) <= own and m.casefold() not in GENERIC and len(fold(m)) >= 3}
    if not names:
        return records
    said: dict[str, bool] = {}
    for doc_id in {r.doc_id for r in records}:
        texts = [fold(c.text) for c in lib.chunks.by_doc(doc_id)]
        said[doc_id] = all(any(n in t for t in texts) for n in names)
    return [r for r in records if said[r.doc_id]]


def _as_said(question: str, records: list[ResultRecord]) -> list[ResultRecord]:
    """A method's records whose printed name the question says whole ("Eisenschlos et al. (2021)", where the key
    also holds the 2020 paper's row), when some do; all of them otherwise."""
    whole = fold(question)
    said = [r for r in records if len(fold(r.method)) > 3 and fold(r.method) in whole]
    return said or records


def _metric(r: ResultRecord) -> str:
    return r.metric or "a metric its table does not name"


def _by_metric(records: Sequence[ResultRecord]) -> dict[str, list[ResultRecord]]:
    groups: dict[str, list[ResultRecord]] = {}
    for r in records:
        groups.setdefault(r.metric_key, []).append(r)
    return dict(sorted(groups.items(), key=lambda kv: -len(kv[1])))


def answer_results(lib: Library, question: str, context: Context, doc_ids: Sequence[str] | None = None
                   ) -> Answer | None:
    """The computed, cited answer to a results question; None when it is none or the records do not cover it
    (the readers answer then). Adds the cited tables to `context.sources`."""
    asked = recognise(lib, question, doc_ids)
    if asked is None:
        return None
    asked.question = question
    records = lib.results.find(ResultFilter(
        doc_ids=_ready(lib, doc_ids), dataset_key=asked.dataset_keys[0] if asked.dataset_keys else None,
        method_key=asked.method_keys[0] if asked.method_keys and not asked.dataset_keys else None))
    if asked.metric_keys:
        records = [r for r in records if r.metric_key in asked.metric_keys]
    records = _in_setting(question, records)
    if asked.kind == "value" and not asked.dataset_keys:
        records = _in_papers_naming(lib, question, records)
    if not records:
        return None
    titles = lib.documents.ready_titles()
    years = {d: m.year for d, m in lib.metadata.get_many(list({r.doc_id for r in records})).items()}
    cite = _Citer(lib, context, titles)
    compose = {"best": _best, "value": _value, "compare": _compare, "papers": _papers}[asked.kind]
    composed = compose(asked, records, cite, titles, years)
    if composed is None:
        return None
    sentences, short = composed
    text = " ".join(f"{s.text} {''.join(f'[{n}]' for n in s.citations)}".strip() for s in sentences)
    return Answer(text=text, sentences=sentences, extractive=True, short_answer=short,
                  answer_type="number" if asked.kind in ("best", "value") else "other", confidence=1.0,
                  reader=Reader.RESULTS.value)


def _said(text: str, *records_n: int) -> AnswerSentence:
    return AnswerSentence(text, list(dict.fromkeys(records_n)))


def _best(asked: ResultsQuestion, records, cite, titles, years):
    sentences: list[AnswerSentence] = []
    short = ""
    for group in list(_by_metric(records).values())[:MAX_LISTED]:
        towards = direction(group)
        order = {"best": ranked(group, towards), "worst": ranked(group, towards)[::-1],
                 "highest": sorted(group, key=lambda r: -r.value), "lowest": sorted(group, key=lambda r: r.value)
                 }[asked.extreme]
        top = order[0]
        word = asked.extreme if asked.extreme != "best" or towards != Direction.UNKNOWN else "highest"
        unstated = "" if towards != Direction.UNKNOWN or asked.extreme not in ("best", "worst") else \
            " (the papers do not say which way is better: higher is taken as better)"
        sentences.append(_said(f"The {word} {_metric(top)} on {top.dataset} reported in the library is "
                               f"{top.value_text}, by {top.method} {_where(top, titles, years)}{unstated}.",
                               cite(top)))
        short = short or f"{top.value_text} ({top.method})"
        rest = [r for r in order[1:] if r.method_key != top.method_key][:2]
        if rest:
            listed = "; ".join(f"{r.method} {r.value_text} {_where_next(r, top, titles, years)}" for r in rest)
            sentences.append(_said(f"Next: {listed}.", *[cite(r) for r in rest]))
    return sentences, short


def _value(asked: ResultsQuestion, records, cite, titles, years):
    mine = _as_said(asked.question, [r for r in records if r.method_key == asked.method_keys[0]])
    if not mine:
        return None
    sentences = []
    for r in mine[:MAX_LISTED]:
        sentences.append(_said(f"{r.method} reaches {_metric(r)} {r.value_text} on {r.dataset or 'the dataset'} "
                               f"{_where(r, titles, years)}.", cite(r)))
    if len(mine) > MAX_LISTED:
        sentences.append(_said(f"{len(mine) - MAX_LISTED} more results of {mine[0].method} on it are stored."))
    short = mine[0].value_text if len({r.metric_key for r in mine}) == 1 and len(mine) == 1 else ""
    return sentences, short


def _compare(asked: ResultsQuestion, records, cite, titles, years):
    a_key, b_key = asked.method_keys
    for group in _by_metric(records).values():
        a = _as_said(asked.question, [r for r in group if r.method_key == a_key])
        b = _as_said(asked.question, [r for r in group if r.method_key == b_key])
        if not a or not b:
            continue
        # The fairest pair: the same table, else the same paper and setting, else the same setting, else any.
        pairs = sorted(((x, y) for x in a for y in b),
                       key=lambda p: ((p[0].doc_id, p[0].item_index) != (p[1].doc_id, p[1].item_index),
                                      p[0].doc_id != p[1].doc_id, p[0].setting != p[1].setting))
        x, y = pairs[0]
        towards = direction(group)
        diff = x.value - y.value
        if towards == Direction.LOWER:
            ahead = diff < 0
        else:
            ahead = diff > 0
        same = "in the same table" if (x.doc_id, x.item_index) == (y.doc_id, y.item_index) else \
            "in different tables, which may not be comparable"
        if diff == 0:
            verdict, short = f"They tie on {_metric(x)}", "They tie"
        else:
            winner, loser = (x, y) if ahead else (y, x)
            unit = winner.unit if winner.unit and winner.unit != "%" else (" points" if winner.unit == "%" else "")
            how = "" if towards != Direction.UNKNOWN else " (taking higher as better: the papers do not say)"
            verdict = f"{winner.method} is better than {loser.method} by {abs(diff):.4g}{unit}{how}"
            short = ("Yes" if ahead else "No") + f", by {abs(diff):.4g}{unit}"
        first = _said(f"On {x.dataset or 'the dataset'} ({_metric(x)}), {x.method} reaches {x.value_text} "
                      f"{_where(x, titles, years)} and {y.method} {y.value_text} {_where(y, titles, years)}, "
                      f"{same}.", cite(x), cite(y))
        return [first, _said(f"{verdict}.")], short
    return None


def _papers(asked: ResultsQuestion, records, cite, titles, years):
    by_paper: dict[str, list[ResultRecord]] = {}
    for r in records:
        by_paper.setdefault(r.doc_id, []).append(r)
    if not by_paper:
        return None
    if asked.dataset_keys:
        what = f"results on {records[0].dataset or 'the dataset'}"
    elif asked.metric_keys:
        what = f"results in {printed(records, 'metric')}"
    else:
        what = f"results for {printed(records, 'method')}"
    many = len(by_paper) != 1
    sentences = [_said(f"{len(by_paper)} paper{'s' if many else ''} of the library report{'' if many else 's'} "
                       f"{what}.")]
    for doc_id, mine in list(by_paper.items())[:MAX_LISTED * 2]:
        metrics = ", ".join(dict.fromkeys(r.metric for r in mine if r.metric))
        on = "" if asked.dataset_keys else \
            " on " + ", ".join(list(dict.fromkeys(r.dataset for r in mine if r.dataset))[:MAX_LISTED])
        year = f" ({years[doc_id]})" if years.get(doc_id) else ""
        first = mine[0]
        sentences.append(_said(f"{titles.get(doc_id, doc_id[:12])}{year}: {len(mine)} result"
                               f"{'s' if len(mine) != 1 else ''} ({metrics}{on}), first in {first.cell_ref} on p. "
                               f"{first.page + 1}.", cite(first)))
    return sentences, ""
