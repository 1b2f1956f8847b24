"""A paper's byline read by spaCy's NER: its people and organisations, each checked against the shape of a name
("Daniel S. Weld", "Allen Institute for AI"), for the spaCy extractor (core/graph/extract/spacy/mentions.py)."""
from __future__ import annotations

import re

from core.graph.extract.spacy import words as W
from core.graph.extract.spacy.records import Mention, entity_key

_CONNECTORS = {"of", "for", "on", "and", "in", "de"}


def byline_mentions(ent) -> list[Mention]:
    """The PERSON or ORG span of the NER, split at commas, each part kept when its shape agrees. An organisation
    the NER cut before "for"/"of" ("Allen Institute" of "Allen Institute for AI") gets its end back."""
    doc, stop = ent.doc, ent.end
    while (ent.label_ == "ORG" and stop + 1 < len(doc) and doc[stop].lower_ in ("for", "of")
           and doc[stop + 1].text[:1].isupper()):
        stop += 2
    out, start = [], ent.start
    for t in list(doc[ent.start:stop]) + [None]:
        if t is None or t.text in (",", ";"):
            end = t.i if t is not None else stop
            if end > start:
                mention = _byline_mention(ent.doc[start:end], ent.label_)
                if mention:
                    out.append(mention)
            start = end + 1
    return out


def _byline_mention(span, label: str) -> Mention | None:
    """2-3 capitalised words (initials aside) for a person, an institution word for an organisation."""
    words = [re.sub(r"[α-ωΑ-Ω\d†‡*,∗⋄□♠♣♥♦§¶]+$", "", w) for w in span.text.split()]
    words = [w for w in words if w]
    if words and words[0].lower() == "the":
        words = words[1:]
    if label == "PERSON":
        initials = sum(bool(re.fullmatch(r"[A-Z]\.(-?[A-Z]\.)?", w)) for w in words)
        # A first name written out: "D. White" is the end of "Andrew D. White" the NER cut.
        ok = (2 <= len(words) <= 3 + initials and not words[-1].endswith(".") and not words[0].endswith(".")
              and all(re.fullmatch(r"[A-Z][a-z'’\-]+|[A-Z]\.(-?[A-Z]\.)?", w) for w in words)
              and not any(w.lower() in W.GENERIC or w.lower() in W.ORG_WORDS for w in words))
        kind = "person"
    else:
        ok = (len(words) >= 2 and any(w.lower().strip(".") in W.ORG_WORDS for w in words)
              and all(w[:1].isupper() or w.lower() in _CONNECTORS for w in words))
        kind = "organization"
    if not ok:
        return None
    name = " ".join(words)
    return Mention(key=entity_key(name), name=name, start=span.start, end=span.end, types=[kind] * 3,
                   words=[w.lower() for w in words], named=True)

