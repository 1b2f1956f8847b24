"""The records of the spaCy extractor: an entity mention, a sentence with its mentions, and the key that groups
mentions of one entity within a paper (the merge step has its own, wider key: core/graph/merge.py)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.graph.extract.spacy import words as W


def entity_key(name: str) -> str:
    """How mentions of one entity are grouped within a chunk (the merge step has its own, wider key)."""
    text = name.casefold().replace("’", "'")
    text = re.sub(r"(?<=\w)[-\u2010\u2011\u2012\u2013](?=\w)", "", text)
    words = re.sub(r"[^\w+#@.]+", " ", text).split()
    if words:
        words[-1] = W.singular(words[-1])
    return " ".join(words).strip(". ")


@dataclass
class Mention:
    key: str
    name: str
    start: int  # token range in the doc
    end: int
    types: list[str] = field(default_factory=list)  # votes; "" says nothing
    plain: bool = False  # one common word: kept only when it is typed or comes back in the chunk
    alias: str = ""  # an acronym's long form
    words: list[str] = field(default_factory=list)  # lower case, the last one singular (core/graph/extract/terms.py)
    named: bool = False  # written as a name (see SentenceReader._is_name)
    name_shaped: bool = False  # an acronym, CamelCase or a name with digits
    adjective_led: bool = False  # its first word is an adjective ("transparent nature")
    decapitalised: bool = False  # a capital lower-cased because it starts a sentence or a heading ("Albert" → albert)
    # A one-word name's neighbours, lower case: two words before it, two after ("expression of TP53 in"), read by a
    # field's context cues (core/graph/fields.py).
    near: tuple[list[str], list[str]] = field(default_factory=lambda: ([], []))


@dataclass
class Sentence:
    text: str
    mentions: list[Mention]
    verbs: list[tuple[int, str]]  # (token index, lemma)
    row: bool = False
    header: list[Mention] = field(default_factory=list)  # a table row's column headers
    fragments: bool = False  # words found inside a figure: its names count only if the paper's text has them
    cited: bool = False  # a reference entry left in the text: its names support a term of the text, nothing more
    highlighted: bool = False  # a caption, a table's header row or the abstract: what it names is worth naming
    label_end: int = -1  # a table's body row: where its first cell (what the row is about) ends, a token index
