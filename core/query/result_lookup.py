"""The results read from the papers' tables (lib.results), looked up by the names people use: the read side's
one place for turning "SciDocs" or "sci-docs" into the key records are grouped by, for finding the datasets,
metrics and methods a question names, and for ordering a leaderboard by its metric's direction.

A name matches a key when the extractor's key of it (core.text.result_names: "F1 score" → "f1", "the SQuAD v1.1
dev set" → "squad1.1") or the name itself agrees with the key or a printed name once case, spacing and
punctuation are set aside. A question says names more loosely than a picker (`named`): a part in parentheses
("WikiTableQuestions (WTQ)"), the initials of words ("labeled attachment score" → LAS), every word of a longer name
in any order ("the direct-citation prediction task of SciDocs" → "SciDocs Citation prediction"), a word's start
("intermediate" → "inter"), or one word only a single method's name holds ("the ELMo-enhanced model" → "ELMo +
baseline")."""
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
                # a word any question says is no metric by the lexicon's reading of it ("score" → reward)
                if keyed and keyed != joined and not (end == start and words[start] in GENERIC):
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


# Words that tell no name apart: a question's grammar, and what any dataset, metric or method is called.
GENERIC = {"the", "a", "an", "of", "on", "in", "for", "with", "and", "or", "to", "by", "at", "as", "from", "vs",
           "set", "sets", "task", "tasks", "dataset", "datasets", "data", "corpus", "benchmark", "split", "test",
           "dev", "model", "models", "method", "methods", "system", "systems", "approach", "score", "scores",
           "results", "result", "table", "paper", "papers", "our", "ours", "using", "based", "via", "w", "without",
           "full", "all", "new", "base", "large", "small", "best", "average", "avg", "mean", "total", "baseline",
           "what", "which", "does", "do", "is", "are", "how", "when", "than", "reach", "get", "gets", "report"}
STRONG, WORDS, PART = 3, 2, 1  # how a name was said: its spelling / initials; all its words; one word of it only


def _split_words(text: str) -> list[str]:
    """Words of a name or question, a hyphenated one also in its parts ("direct-citation" → both)."""
    out = []
    for w in _WORDS.findall(unicodedata.normalize("NFKC", text).casefold().replace("_", " ")):
        out.append(w)
        if "-" in w:  # "tableformer-large" is also "tableformer", "large" and "tableformerlarge"
            out += [p for p in w.split("-") if p] + [w.replace("-", "")]
    return out


def said_words(text: str) -> set[str]:
    """A name's or question's words as `named` compares them (hyphenated ones also in parts and joined)."""
    return set(_split_words(text))


def _content(text: str) -> list[str]:
    return [w for w in dict.fromkeys(_split_words(_PARENS.sub(" ", text))) if fold(w) and w not in GENERIC]


_PARENS = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")


def said_word(word: str, said: set[str]) -> bool:
    """The question says the name's word, or a longer form of it ("intermediate" for "inter"), or it without a
    plural's s: a name's word of 4 letters or more the question's word starts with. Not a shorter form: the name
    "TableFormerBase" is no "TableFormer"."""
    if word in said:
        return True
    if len(word) < 4 or word.isdigit():
        return False
    return any(not w.isdigit() and (w.startswith(word) or w == word[:-1] and word.endswith("s")) for w in said)


def named(text: str, names: Iterable[tuple[str, str]], kind: str = "", min_chars: int = 2
          ) -> list[tuple[str, str, int]]:
    """(key, printed name, strength) of each name the question says, the surest first: spelled (as a run of its
    words, by the extractor's key, by a part in parentheses, or by the initials of the question's words: STRONG),
    by all of its words in any order (WORDS), or — for a method — by a word no other method's name holds (PART).
    `names` are (key, printed) pairs, every spelling the records print."""
    names = list(dict.fromkeys(names))
    found = {key: (STRONG, shown) for key, shown in
             mentioned(text, [(k, n, 0, 0) for k, n in names], min_chars=min_chars, kind=kind)}
    words = _WORDS.findall(unicodedata.normalize("NFKC", text).casefold())
    initials: set[str] = set()  # of 3+ words ("labeled attachment score"), or 2 long ones ("corporate acquisitions")
    if kind in ("metric", "dataset", "method"):
        for start in range(len(words)):
            letters = ""
            for w in words[start:start + 6]:
                if w in ("the", "of", "and", "a"):
                    continue
                letters += w[0]
                if len(letters) >= 3 or (len(letters) == 2 and all(len(x) >= 4 and x not in GENERIC
                                                                     for x in words[start:start + 2])):
                    initials.add(letters)
            every = "".join(w[0] for w in words[start:start + 4])  # "state of the art" → SOTA, stop words in
            if len(every) == 4:
                initials.add(every)
    said = set(_split_words(text))
    spelled = []
    for key, shown in names:
        if key in found:
            continue
        parts = [p.strip("()[] ") for p in _PARENS.findall(shown)]
        # An acronym the question spells out: "LAS", "DEP (LAS)" for "labeled attachment score".
        acronyms = [a for a in [shown.strip(), *parts] if len(a) >= 2 and a.isalpha() and a.isupper()
                    and kind != "method"]  # a method's acronym said by chance ("how many…") would mislead
        if any(len(fold(p)) >= max(min_chars, 2) and fold(p) in {fold(w) for w in said} and not fold(p).isdigit()
               for p in parts) or any(fold(a) in initials for a in acronyms):
            spelled.append((key, shown, STRONG))
            continue
        content = _content(shown)
        if kind == "dataset" and len(content) == 1 and len(content[0]) >= 3 and content[0].isalpha() and any(
                w.startswith(content[0]) and len(w) > len(content[0]) for w in said):
            spelled.append((key, shown, WORDS))  # "biomedical" for the dataset "Bio"
            continue
        if len(content) == 1 and len(content[0]) >= 4 and content[0].isalpha() and any(
                w in (content[0] + "s", content[0] + "es") or content[0] in (w + "s", w + "es") for w in said):
            spelled.append((key, shown, WORDS))  # "titles" for the row "title"
            continue
        acronym_words = {w.casefold() for w in re.findall(r"[A-Za-z]+", shown) if w.isupper() and len(w) >= 3}
        if len(content) >= 2 and all(said_word(w, said) or (w in acronym_words and w in initials)
                                     for w in content):
            spelled.append((key, shown, WORDS))
    out = [(k, shown, strength) for k, (strength, shown) in found.items()]
    for key, shown, strength in sorted(spelled, key=lambda s: (-s[2], -len(_content(s[1])))):
        if key not in {k for k, _, _ in out}:
            out.append((key, shown, strength))
    if kind == "method":
        holders: dict[str, set[str]] = {}
        for key, shown in names:
            for w in _content(shown):
                if len(w) >= 3 and not w.isdigit():
                    holders.setdefault(w, set()).add(key)
        taken = {k for k, _, _ in out}
        for w in _split_words(text):
            keys = holders.get(w, set())
            if len(keys) == 1 and w not in GENERIC:
                key = next(iter(keys))
                if key not in taken:
                    out.append((key, next(n for k, n in names if k == key), PART))
                    taken.add(key)
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
