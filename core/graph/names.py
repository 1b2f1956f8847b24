"""When two entity names could name one thing, and when they surely do not: read by duplicate suggestions (the
write side) and by ppr's entity seeds (the read side)."""
from __future__ import annotations

import re

_DIGITS = re.compile(r"\d+")


def numbered_variants(a: str, b: str) -> bool:
    """"TAPAS-base 4p" and "TAPAS-base 8p", "Paper-1" and "Paper-2": names that differ only in their numbers
    name different things, however close their embeddings."""
    return a != b and _DIGITS.sub("#", a.casefold()) == _DIGITS.sub("#", b.casefold())


_GLUE_WORDS = {"of", "the", "a", "an", "for", "and", "in", "on", "to", "with", "by", "ie", "eg"}


def _words(name: str) -> list[str]:
    # Hyphens split words here ("BERT-large" shares "bert" with "BERT"), unlike in entity keys.
    return [w for w in re.findall(r"[^\W_]+", name.casefold()) if w not in _GLUE_WORDS]


def names_related(a: str, b: str) -> bool:
    """Whether two names could name one thing: a shared word, or one the initials of the other. Two entities
    described by the same sentence embed close together whatever their names ("ChemProt" and "micro-F1")."""
    wa, wb = _words(a), _words(b)
    if set(wa) & set(wb):
        return True
    for short, long in ((wa, wb), (wb, wa)):
        initials = "".join(w[0] for w in long)
        if len(short) == 1 and len(short[0]) >= 2 and initials in (short[0], short[0].removesuffix("s")):
            return True
    return False
