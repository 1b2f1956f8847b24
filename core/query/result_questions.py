"""Which results question a question is, if any: it names a dataset the records hold (core.query.result_lookup)
and says what it wants of it — the best / highest / lowest, a method's value, two methods compared, the papers that
report it. core.query.result_answers computes the answer."""
import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.library import Library
from core.query.result_lookup import GENERIC, WORDS, fold, named, said_word, said_words
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
_TOKENS = re.compile(r"[0-9a-z]+(?:[.-][0-9a-z]+)*")


@dataclass
class ResultsQuestion:
    kind: str  # best | value | compare | papers
    dataset_keys: list[str]
    metric_keys: list[str]  # [] = every metric of the dataset
    method_keys: list[str]
    extreme: str = "best"  # best | worst | highest | lowest: which end of the leaderboard is asked for
    question: str = ""


def ready_doc_ids(lib: Library, doc_ids: Sequence[str] | None) -> list[str]:
    ready = [d.id for d in lib.documents.ready_papers()]
    return [d for d in ready if d in set(doc_ids)] if doc_ids else ready


def recognise(lib: Library, question: str, doc_ids: Sequence[str] | None = None) -> ResultsQuestion | None:
    """What a results question asks, by the names the records hold (said loosely: result_lookup.named); None when
    it is no results question."""
    if lib.results.count() == 0:
        return None
    scope = ResultFilter(doc_ids=ready_doc_ids(lib, doc_ids))
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
