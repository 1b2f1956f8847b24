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

from core.library import Library
from core.query.records import Answer, AnswerSentence, Context, Source
from core.query.result_lookup import GENERIC, direction, fold, printed, ranked, said_words
from core.query.result_questions import ResultsQuestion, ready_doc_ids, recognise
from core.schema.modes import Reader
from core.schema.results import Direction, ResultRecord
from core.store.base import ResultFilter

MAX_LISTED = 5


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
        doc_ids=ready_doc_ids(lib, doc_ids), dataset_key=asked.dataset_keys[0] if asked.dataset_keys else None,
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
                  answer_type="number" if asked.kind in ("best", "value") else "other", confidence=None,
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
