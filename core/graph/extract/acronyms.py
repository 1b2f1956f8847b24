"""Acronyms and their definitions in a sentence of a paper: "Long Short-Term Memory (LSTM)" or "LSTM (Long
Short-Term Memory)", so the LLM-free extractor names one entity by its acronym and keeps the long form."""
from __future__ import annotations

import re


def singular_acronym(word: str) -> str:
    """LLMs → LLM, CNNs → CNN."""
    if len(word) >= 3 and word.endswith("s") and word[:-1].isupper():
        return word[:-1]
    return word


_SHORT_FORM = re.compile(r"\(\s*([A-Za-z][\w\-./&+]{0,14}?)\s*\)")
_LONG_IN_PARENS = re.compile(r"([A-Za-z][\w\-./&+]{1,14})\s+\(\s*([A-Za-z][^()]{3,120}?)\s*\)")


def _acronym_shaped(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return (2 <= len(text) <= 12 and len(letters) >= 2 and text[0].isalnum() and " " not in text
            and sum(c.isupper() for c in letters) >= 2)


_MINOR = {"of", "for", "from", "and", "the", "in", "on", "to", "with", "by", "a", "an", "via", "at"}


def _initials_match(short: str, long: str) -> str | None:
    """The end of `long` whose words' initials (minor words aside, hyphen parts counted) spell `short`:
    "Long Short-Term Memory" for LSTM. Tried before Schwartz-Hearst, whose backward letter search can settle on
    letters inside words ("Policy Optimization" for PPO)."""
    letters = [c.lower() for c in short if c.isalpha()]
    words = long.split()
    for start in range(len(words) - 1, -1, -1):
        if words[start].lower() in _MINOR:
            continue
        initials = [p[0].lower() for w in words[start:] if w.lower() not in _MINOR
                    for p in re.split(r"[-–]", w) if p[:1].isalpha()]
        if initials == letters:
            return " ".join(words[start:])
        if len(initials) > len(letters):
            return None
    return None


def schwartz_hearst(short: str, long: str) -> str | None:
    """The shortest end of `long` whose letters spell the acronym `short` in order, the acronym's first letter
    starting a word (Schwartz & Hearst, 2003), or None."""
    s, i = len(short) - 1, len(long) - 1
    while s >= 0:
        c = short[s].lower()
        if not c.isalnum():
            s -= 1
            continue
        while i >= 0 and (long[i].lower() != c or (s == 0 and i > 0 and long[i - 1].isalnum())):
            i -= 1
        if i < 0:
            return None
        i -= 1
        s -= 1
    return long[long.rfind(" ", 0, i + 1) + 1:]


def definitions(doc, start: int, end: int) -> list[tuple[int, int, str, str]]:
    """Acronym definitions in a sentence, "Long Form (LF)" or "LF (Long Form)": (first token, end token, acronym,
    long form)."""
    sent = doc[start:end]
    text, base = sent.text, sent.start_char
    found: list[tuple[int, int, str, str]] = []

    def add(char_start: int, char_end: int, short: str, long: str) -> None:
        span = doc.char_span(base + char_start, base + char_end, alignment_mode="expand")
        if span is not None:
            found.append((span.start, span.end, singular_acronym(short), " ".join(long.split())))

    for m in _SHORT_FORM.finditer(text):
        short = m.group(1)
        if not _acronym_shaped(short):
            continue
        before = text[:m.start()].rstrip()
        limit = min(len(short) + 5, 2 * len(short))
        window = re.split(r"[,;:()\[\]]\s|\s[-–—]\s", " ".join(before.split()[-limit:]))[-1]
        long = _initials_match(singular_acronym(short), window) or schwartz_hearst(singular_acronym(short), window)
        if not long:
            continue
        long = long.strip(" -–\"'“”")
        if len(long.split()) < 2 or not long[:1].isalnum() or long.lower().startswith(short.lower()):
            continue
        add(len(before) - len(long), m.end(), short, long)
    for m in _LONG_IN_PARENS.finditer(text):
        short, long = m.group(1), m.group(2)
        if not _acronym_shaped(short) or len(long.split()) < 2 or len(long.split()) > 2 * len(short):
            continue
        acronym = singular_acronym(short)
        if _initials_match(acronym, long) == long or schwartz_hearst(acronym, long) == long:
            add(m.start(), m.end(), short, long)
    return found
