"""The results read from the papers' tables (lib.results), looked up by the names people use: the read side's
one place for turning "SciDocs" or "sci-docs" into the key records are grouped by, for finding the datasets,
metrics and methods a question names, and for ordering a leaderboard by its metric's direction.

A name matches a key when the extractor's key of it (core.text.result_names: "F1 score" → "f1", "the SQuAD v1.1
dev set" → "squad1.1") or the name itself agrees with the key or a printed name once case, spacing and
punctuation are set aside."""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

from core.library import Library
from core.schema.results import Direction, ResultRecord
from core.store.base import ResultFilter
from core.text.result_names import dataset_key, method_key, metric_key

KEY_OF = {"dataset": dataset_key, "metric": metric_key, "method": method_key}
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
_WORDS = re.compile(r"[0-9a-z]+(?:[.-][0-9a-z]+)*")


def fold(text: str) -> str:
    """Case, width, accents' composition, spacing and punctuation set aside: "Sci-Docs " → "scidocs"."""
    return _NOT_ALNUM.sub("", unicodedata.normalize("NFKC", text).casefold())


def known_names(lib: Library, kind: str, filters: ResultFilter | None = None) -> list[tuple[str, str, int, int]]:
    """(key, printed name, records, papers) of every dataset, metric or method the records hold."""
    return lib.results.key_counts(kind, filters)


def resolve_keys(lib: Library, kind: str, name: str, filters: ResultFilter | None = None) -> list[str]:
    """The keys a typed name means: those whose key or printed name folds to the same letters and digits."""
    wanted = {fold(name), fold(KEY_OF[kind](name))} - {""}
    return [key for key, shown, _, _ in known_names(lib, kind, filters) if wanted & {fold(key), fold(shown)}]


def mentioned(text: str, names: Iterable[tuple[str, str, int, int]], min_chars: int = 2, kind: str = ""
              ) -> list[tuple[str, str]]:
    """(key, printed name) of each name that `text` says as whole words (folded), the longest first, and none
    inside a longer one already found: "SciDocs MAG" finds "SciDocs MAG" only when that is a name, else
    "SciDocs"."""
    words = _WORDS.findall(unicodedata.normalize("NFKC", text).casefold())
    spans: dict[str, list[tuple[int, int]]] = {}  # folded run of words → (start, end) word positions
    for start in range(len(words)):
        joined = ""
        for end in range(start, min(start + 6, len(words))):
            joined += fold(words[end])
            spans.setdefault(joined, []).append((start, end + 1))
            if kind:  # as the extractor keys it: "F1 score" is the key "f1"
                keyed = fold(KEY_OF[kind](" ".join(words[start:end + 1])))
                if keyed and keyed != joined:
                    spans.setdefault(keyed, []).append((start, end + 1))
    found: list[tuple[int, int, str, str]] = []
    for key, shown, _, _ in names:
        for candidate in {fold(shown), fold(key)}:
            if len(candidate) >= min_chars and candidate in spans:
                found += [(s, e, key, shown) for s, e in spans[candidate]]
    found.sort(key=lambda f: (-(f[1] - f[0]), f[0]))
    taken: set[int] = set()
    out: list[tuple[str, str]] = []
    for start, end, key, shown in found:
        if taken & set(range(start, end)):
            continue
        taken |= set(range(start, end))
        if key not in [k for k, _ in out]:
            out.append((key, shown))
    return out


def direction(records: Sequence[ResultRecord]) -> Direction:
    """The metric's direction as most of its records state it; unknown when none does."""
    votes = Counter(r.direction for r in records if r.direction != Direction.UNKNOWN)
    return votes.most_common(1)[0][0] if votes else Direction.UNKNOWN


def ranked(records: Sequence[ResultRecord], towards: Direction | None = None) -> list[ResultRecord]:
    """Best first by the metric's direction (an unknown direction reads as higher-is-better, as most metrics
    are); ties keep the paper's order."""
    lower = (towards if towards is not None else direction(records)) == Direction.LOWER
    return sorted(records, key=lambda r: (r.value if lower else -r.value, r.doc_id, r.item_index, r.row, r.col))


def grouped(records: Iterable[ResultRecord]) -> dict[tuple[str, str], list[ResultRecord]]:
    """Records by (dataset key, metric key): one leaderboard each, the most reported first."""
    groups: dict[tuple[str, str], list[ResultRecord]] = {}
    for r in records:
        groups.setdefault((r.dataset_key, r.metric_key), []).append(r)
    # A group whose dataset or metric the papers do not name comes after every named one.
    return dict(sorted(groups.items(), key=lambda kv: ("" in kv[0], -len({r.doc_id for r in kv[1]}), -len(kv[1]),
                                                       kv[0])))


def printed(records: Sequence[ResultRecord], attr: str) -> str:
    """The name the records print most often for their key."""
    names = Counter(getattr(r, attr) for r in records if getattr(r, attr))
    return names.most_common(1)[0][0] if names else ""
