"""The words of questions and sentences as every part of the reader compares them: content words without the
commonest ones, crude stems, the question's named tokens, and whether a text mentions a word."""
from __future__ import annotations

import re
from functools import lru_cache

WORD = re.compile(r"[A-Za-z0-9]+")
LOWER_STOP = {"the", "a", "an", "of", "in", "on", "for", "to", "and", "or", "with", "by", "we", "our", "this",
               "that", "these", "is", "are", "was", "were", "it", "its", "as", "at", "from", "be", "how", "what",
               "which", "who", "when", "does", "do", "did", "many", "much"}


# Named tokens of a question (FinTabNet, Martins, OTSL, TableFormer-Large): an acronym, an inner capital or digit,
# or a capitalised word that does not start the question.
_NAMED_Q = re.compile(r"(?<![\w-])(?:[A-Za-z]*[A-Z][A-Za-z0-9]*[A-Z0-9][\w-]*|[a-z]+[A-Z][\w-]*|[A-Z][a-z][\w-]*)")


def named_words(question: str) -> list[str]:
    first = re.match(r"\s*\S+", question)
    return [m.group() for m in _NAMED_Q.finditer(question)
            if not (first and m.start() < first.end()) and m.group().lower() not in LOWER_STOP]


def mentions(text_lower: str, word: str) -> bool:
    """The word, or each part of a hyphenated one, in the text (lower-cased), singular or plural."""
    parts = [p for p in re.split(r"[-']", word.lower()) if len(p) > 1] or [word.lower()]
    stems = [_singular(p) for p in parts]
    # At a word start: "teds" is not in "reported" (compounds such as "TABLEFORMERLARGE" still hold "large").
    return all(re.search(rf"(?<![a-z0-9]){re.escape(p)}", text_lower) or len(p) > 4 and p in text_lower
               for p in stems)


def _singular(w: str) -> str:
    """A lower-case word without a plural s ("models" → "model"; "class", "its" kept)."""
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


def word_form(word: str) -> str:
    """A word as words() counts it: lower case, without a plural s; "" for the commonest words."""
    w = word.lower()
    return "" if w in LOWER_STOP or len(w) < 2 else _singular(w)


def words(text: str) -> set[str]:
    """Lower-case words without the commonest ones and a plural s, for overlap with the question."""
    return {form for w in WORD.findall(text.lower()) if (form := word_form(w))}


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A crude suffix stem for term overlap: "deployed" and "deploy", "computed" and "compute" meet."""
    for suffix in ("ing", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[:-len(suffix)]
    return word


def stems(text: str) -> list[str]:
    """The content words of a text, stemmed, with hyphenated words also joined ("SQuAL-ITY", "de- terministic")."""
    low = text.lower()
    out = [stem(w) for w in WORD.findall(low) if w not in LOWER_STOP and len(w) > 1]
    out += [stem(a + b) for a, b in re.findall(r"([a-z0-9]+)-\s?([a-z0-9]+)", low)]
    return out
