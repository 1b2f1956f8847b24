"""What kind of answer a question expects, and where such an answer sits inside a sentence — regular expressions
only, so the extractive reader (core.query.reader) pays microseconds, not a spaCy run, per candidate sentence.

Types: a number ("how many", "what percentage"), a year ("when", "what year"), a name ("who", "which model"), a
definition ("what is X") or anything else. A span is where the answer of that type sits in a sentence: the number
next to the question's words ("37M unique paper nodes"), the year, the name the question does not already say, or
what follows "X is".
"""
from __future__ import annotations

import re
from dataclasses import dataclass

NUMBER, YEAR, NAME, DEFINITION, OTHER = "number", "year", "name", "definition", "other"

_NUMBER_Q = re.compile(r"\b(how (many|much|large|big|long|often|fast|small|high|low|far|old)|what (fraction|percent"
                       r"(age)?|proportion|share|ratio|number|amount|size|accuracy|score|f1|precision|recall|rate)"
                       r"|by how much|how many times)\b|^\s*what (is|are) the [\w\s'-]{0,50}\b(values?|scores?|"
                       r"numbers?|counts?|sizes?|rates?|percentages?)\b|^\s*what\b.*\b(reach|reaches|achieve|achieves|obtain|"
                       r"obtains|attain|attains|score|scores)\b", re.I)
# A quantity with a unit: "what learning rate", "what batch size", "how long", "in seconds" — answered by a number.
_UNIT_Q = re.compile(r"^\s*(what|which)\s+(?:[\w-]+\s+){0,2}?(learning rates?|batch sizes?|dimensions?|dimensionality|"
                     r"dropout|epochs?|steps?|temperature|weight decay|warm-?up|length|duration|latency|time|speed|"
                     r"threshold|budget|window|margin)\b|\bhow long\b"
                     r"|\bin (seconds|minutes|hours|days|ms|milliseconds)\b", re.I)
_YEAR_Q = re.compile(r"^\s*when\b|\b(what|which) (years?|dates?|months?)\b", re.I)
_NAME_NOUNS = (r"(model|dataset|corpus|corpora|method|system|tool|library|algorithm|benchmark|framework|baseline|"
               r"encoder|decoder|architecture|metric|company|organi[sz]ation|institution|university|venue|"
               r"conference|journal|language model|toolkit|software|package|database|api|approach|network|"
               r"classifier|parser|embedding|backbone|optimi[sz]er|loss|search engine|platform|service)s?")
_NAME_Q = re.compile(rf"\b(who|whom|whose|(which|what)( \w+){{0,2}} {_NAME_NOUNS}|what is the name|what are the names"
                     r"|name the)\b", re.I)
_DEFINITION_Q = re.compile(r"^\s*(what (is|are) (an? |the )?(?P<term>[^?]{1,80}?)\s*\??$|define (?P<term2>[^?]+)"
                           r"|what does (?P<term3>[^?]+?) (mean|stand for|refer to)\b)", re.I)
_MEDIA_Q = re.compile(r"\b(fig(ure)?s?|tables?|plots?|charts?|diagrams?)\b", re.I)

_SCALE = r"(?:\s?(?:%|percent|per cent|pp|points?|[MKBk]\b|million|billion|thousand|hundred|x\b|×|times))?"
_NUMBER = re.compile(rf"(?<![\w.\[\-/])[-+−~≈]?\d[\d,]*(?:\.\d+)?{_SCALE}(?![\w\]])|(?<![\w\[])\.\d+(?!\w)", re.I)
_NUMBER_WORDS = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
                 "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred dozen "
                 "half twice").split()
_WORD_NUMBER = re.compile(rf"\b(?:{'|'.join(_NUMBER_WORDS)})(?:[- ](?:{'|'.join(_NUMBER_WORDS)}))*"
                          rf"(?:\s(?:million|billion|thousand|percent))?\b", re.I)
_YEAR = re.compile(r"(?<![\d.])(?:(?:January|February|March|April|May|June|July|August|September|October|"
                   r"November|December)\s+)?(?:1[89]\d\d|20\d\d)(?![\d.])")
# A name: an acronym or a word with an inner capital or digit (BERT, BooksCorpus, S2ORC, GPT-4), or a run of
# capitalised words; the first word of a sentence is capitalised anyway and is only kept when it is a name.
_NAME_WORD = r"(?:[A-Z][A-Za-z0-9]*[A-Z0-9][A-Za-z0-9\-]*|[A-Z][a-z]+(?:-[A-Za-z0-9]+)*)"
_NAME = re.compile(rf"\b{_NAME_WORD}(?:\s+(?:of\s+|for\s+|the\s+|de\s+)?{_NAME_WORD})*")
_CITATION = re.compile(r"\((?:[^()]{0,80}?\b(?:19|20)\d\d[a-z]?)(?:[;,][^()]{0,80}?\b(?:19|20)\d\d[a-z]?)*\)")
_ET_AL = re.compile(r"\s+et al\b")
_STRONG_NAME = re.compile(r"[A-Z][A-Za-z0-9]*[A-Z0-9]|[a-z]+[A-Z]\w*")
_NOTE_BEFORE = re.compile(r"\bal\.\s*$")
_LIST_OR_MARKER = re.compile(r"[\d,]+(\)|\.\s|\s+[A-Z][a-z])")
_COPULA = re.compile(r"\b(is|are|was|were|refers to|denotes|means|stands for|is called|consists of|is defined as)\b"
                     r"\s+", re.I)
_WORD = re.compile(r"[A-Za-z0-9]+")
_LOWER_STOP = {"the", "a", "an", "of", "in", "on", "for", "to", "and", "or", "with", "by", "we", "our", "this",
               "that", "these", "is", "are", "was", "were", "it", "its", "as", "at", "from", "be", "how", "what",
               "which", "who", "when", "does", "do", "did", "many", "much"}


@dataclass
class Span:
    start: int
    end: int
    text: str
    score: float  # how well it fits: closeness to the question's words


def answer_type(question: str) -> str:
    q = question.strip()
    if _YEAR_Q.search(q):
        return YEAR
    if _NUMBER_Q.search(q) or _UNIT_Q.search(q):
        return NUMBER
    if _NAME_Q.search(q):
        return NAME
    if definition_term(q):
        return DEFINITION
    return OTHER


def definition_term(question: str) -> str:
    """X of "what is X?" — only when X is short, so "what is the accuracy of …" stays a number question."""
    m = _DEFINITION_Q.search(question)
    if not m:
        return ""
    term = next(g for g in (m.group("term"), m.group("term2"), m.group("term3")) if g is not None)
    term = re.sub(r"^(an?|the)\s+", "", term.strip(), flags=re.I)
    return term if 0 < len(term.split()) <= 6 else ""


# The thing a number question counts or measures: "how many <unique paper nodes> does …", "what <learning rate>
# was …", "what is the average number of <pages> …". The sentence stating the number names it next to it.
_FOCUS = re.compile(r"\b(?:how many|(?:what|which)(?:\s+(?:is|are|was|were)\s+the)?"
                    r"(?:\s+(?:average|total|mean|overall))?"
                    r"(?:\s+(?:number|percentage|share|fraction|proportion|amount|count)\s+of(?:\s+the)?)?)"
                    r"\s+(?P<np>[\w-]+(?:\s+[\w-]+){0,3})", re.I)
_FOCUS_END = {"does", "do", "did", "is", "are", "was", "were", "has", "have", "had", "of", "in", "on", "for", "to",
              "by", "with", "from", "per", "that", "which", "when", "can", "could", "would", "will", "the", "a", "an",
              "at", "between", "across", "after", "before", "over", "under", "than"}
_MEASURE = {"size", "number", "amount", "total", "average", "mean", "value", "count", "share", "percentage",
            "fraction", "proportion", "much", "long", "many", "score", "scores"}


def focus_words(question: str) -> list[str]:
    """The counted or measured noun phrase of a number question, without generic measure words."""
    m = _FOCUS.search(question)
    if not m:
        return []
    out: list[str] = []
    for w in m.group("np").split():
        if w.lower() in _FOCUS_END:
            break
        out.append(w)
    return [w for w in out if w.lower() not in _MEASURE and w.lower() not in _LOWER_STOP]


# Named tokens of a question (FinTabNet, Martins, OTSL, TableFormer-Large): an acronym, an inner capital or digit,
# or a capitalised word that does not start the question.
_NAMED_Q = re.compile(r"(?<![\w-])(?:[A-Za-z]*[A-Z][A-Za-z0-9]*[A-Z0-9][\w-]*|[a-z]+[A-Z][\w-]*|[A-Z][a-z][\w-]*)")


def named_words(question: str) -> list[str]:
    first = re.match(r"\s*\S+", question)
    return [m.group() for m in _NAMED_Q.finditer(question)
            if not (first and m.start() < first.end()) and m.group().lower() not in _LOWER_STOP]


def mentions(text_lower: str, word: str) -> bool:
    """The word, or each part of a hyphenated one, in the text (lower-cased), singular or plural."""
    parts = [p for p in re.split(r"[-']", word.lower()) if len(p) > 1] or [word.lower()]
    stems = [p[:-1] if len(p) > 3 and p.endswith("s") and not p.endswith("ss") else p for p in parts]
    # At a word start: "teds" is not in "reported" (compounds such as "TABLEFORMERLARGE" still hold "large").
    return all(re.search(rf"(?<![a-z0-9]){re.escape(p)}", text_lower) or len(p) > 4 and p in text_lower
               for p in stems)


def about_media(question: str) -> bool:
    """The question asks about a figure or table: only then may a caption answer it."""
    return bool(_MEDIA_Q.search(question))


def words(text: str) -> set[str]:
    """Lower-case words without the commonest ones and a plural s, for overlap with the question."""
    out = set()
    for w in _WORD.findall(text.lower()):
        if w in _LOWER_STOP or len(w) < 2:
            continue
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def _closeness(sentence: str, start: int, end: int, qwords: set[str]) -> float:
    """Question words within a few words of a span, nearer ones counting more: which of several numbers in a
    sentence is the one asked about ("37M unique paper nodes", not "12M authors")."""
    left = _WORD.findall(sentence[max(0, start - 60):start])[-6:]
    right = _WORD.findall(sentence[end:end + 60])[:6]
    score = 0.0
    for distance, w in enumerate(reversed(left), 1):
        score += (1.0 / distance) * (words(w) <= qwords and bool(words(w)))
    for distance, w in enumerate(right, 1):
        score += (1.2 / distance) * (words(w) <= qwords and bool(words(w)))
    return score


_CELL = re.compile(r"(?:^|;\s+)(?P<col>[^:;]{1,60}?):\s+(?P<value>[^;]*?)(?=;\s|$)")


def cells(sentence: str) -> list[Span]:
    """The "column: value" cells of a table row as the reader gets it; the column is in `text`, the span is the
    value's."""
    if ": " not in sentence or "; " not in sentence:
        return []
    return [Span(m.start("value"), m.end("value"), m.group("col").strip(), 0.0) for m in _CELL.finditer(sentence)]


def row_cell(sentence: str, question: str) -> Span | None:
    """The cell of a table row whose column the question names ("… on the WTQ test set" → the test column), by
    the column's words the question shares; None when no column is named."""
    qwords = words(question)
    best = None
    for cell in cells(sentence):
        value = sentence[cell.start:cell.end].strip()
        overlap = len(words(cell.text) & qwords)
        if overlap and value and value.lower() not in question.lower() and (best is None or overlap > best.score):
            best = Span(cell.start, cell.end, value, float(overlap))
    return best


def spans(sentence: str, kind: str, question: str) -> list[Span]:
    """Candidate answers of `kind` in `sentence`, best first; those the question already says are left out."""
    qwords = words(question)
    qlower = question.lower()
    found: list[Span] = []
    row = cells(sentence) if kind == NUMBER else []
    if kind == NUMBER:
        years = {(m.start(), m.end()) for m in _YEAR.finditer(sentence)}
        spelled = {(m.start(), m.end()) for m in _WORD_NUMBER.finditer(sentence)}
        for m in list(_NUMBER.finditer(sentence)) + list(_WORD_NUMBER.finditer(sentence)):
            text = m.group().strip()
            if text.lower() in qlower or not any(c.isalnum() for c in text) or (m.start(), m.end()) in years:
                continue  # a year is never "how many" (and most are citations: "(van der Maaten, 2014)")
            if _NOTE_BEFORE.search(sentence[:m.start()]):
                continue  # "Fischer et al. 120 show": a reference number
            score = _closeness(sentence, m.start(), m.end(), qwords)
            if (m.start(), m.end()) in spelled and score < 0.5:
                continue  # "one document", "two steps": only a spelled number next to the question's words
            if re.fullmatch(r"\d+(\.\d+)+", text):
                score -= 1.0  # a section number is rarely "how many"
            if _LIST_OR_MARKER.match(sentence[m.start():]) and not sentence[:m.start()].strip():
                continue  # "4) Resolve …", "120 Small molecule …": an enumeration or a note marker
            if sentence[m.end():m.end() + 1] == ")" and "(" not in sentence[max(0, m.start() - 30):m.start()]:
                continue  # "…, and 4) Resolve bibliography links": an enumeration inside the sentence
            cell = next((c for c in row if c.start <= m.start() < c.end), None)
            if cell is not None:  # in a table row the column's name, not the neighbouring cells, says what it is
                score = 2.0 * len(words(cell.text) & qwords) + 0.1 * score
            found.append(Span(m.start(), m.end(), text, score))
    elif kind == YEAR:
        for m in _YEAR.finditer(sentence):
            if m.group() not in question:
                found.append(Span(m.start(), m.end(), m.group(), _closeness(sentence, m.start(), m.end(), qwords)))
    elif kind == NAME:
        # "which summarization models …": a sentence that says "models" names them ("… as our summarization
        # models"), one that says "datasets" names something else.
        category = _NAME_Q.search(question)
        noun = re.search(rf"\b{_NAME_NOUNS}\b", category.group(), re.I) if category else None
        said = 0.5 if noun and mentions(sentence.lower(), noun.group()) else 0.0
        # Citations are not the answer ("(Wang et al., 2022)") nor in its way: blanked, offsets kept.
        masked = _CITATION.sub(lambda c: " " * len(c.group()), sentence)
        for m in _NAME.finditer(masked):
            text = m.group()
            lead = re.match(r"(?:(?:Our|The|We|This|These|In|For|A|An|It|Its|Their|Both|Each|All)\s+)+", text)
            if lead:  # a capital that only starts the sentence
                text, start = text[lead.end():], m.start() + lead.end()
            else:
                start = m.start()
            parts = [w for w in text.split() if w.lower() not in qlower]
            if not parts or (start == 0 and not _STRONG_NAME.search(text) and len(text.split()) == 1):
                continue
            strong = 1.0 if _STRONG_NAME.search(text) else 0.0
            if _ET_AL.match(masked, m.end()):
                continue  # "Ziegler et al. find …": an author cited, not a name the question asks for
            found.append(Span(start, m.end(), text, strong + said + _closeness(masked, start, m.end(), qwords)))
    elif kind == DEFINITION:
        term = definition_term(question)
        at = sentence.lower().find(term.lower()) if term else -1
        m = _COPULA.search(sentence, at + len(term)) if at >= 0 else None
        # "X is …", "X, a …" or "X (…) is …": the definition follows the term, not a later verb of the sentence.
        gap = sentence[at + len(term):m.start()] if m else ""
        if m and (len(gap.strip(" ,")) == 0 or re.fullmatch(r"\s*\([^)]{0,60}\)\s*", gap)):
            end = _clause_end(sentence, m.end())
            found.append(Span(m.end(), end, sentence[m.end():end].strip(), 2.0))
        elif term:  # without "X is": "we define X as …", "X, which are …", "X (MMPs), pairs of …"
            t = re.escape(term)
            m = (re.search(rf"\bdefined?s?\s+(?:an?\s+|the\s+)?{t}\s+as\s+", sentence, re.I)
                 or re.search(rf"\b{t}(?:\s*\([^)]{{0,60}}\))?,\s+(?:which|that|i\.e\.,?|namely)\s+(?:(?:is|are)\s+)?"
                              rf"|\b{t}(?:\s*\([^)]{{0,60}}\))?,\s+(?=(?:an?|the)\s|\w+\s+(?:of|that|which)\s)",
                              sentence, re.I))
            if m:
                end = _clause_end(sentence, m.end())
                found.append(Span(m.end(), end, sentence[m.end():end].strip(), 1.5))
    found.sort(key=lambda s: (-s.score, s.start))
    return found


def _clause_end(sentence: str, start: int) -> int:
    """Where the phrase that starts at `start` ends: the next clause break, or the sentence's end."""
    m = re.compile(r"[;:]|,\s+(which|that|where|while|and|but)\b|\.\s|\s\[\d").search(sentence, start)
    end = m.start() if m else len(sentence.rstrip(". "))
    return end if end > start else len(sentence)


def has_answer(sentence: str, kind: str, question: str) -> bool:
    return bool(spans(sentence, kind, question)) if kind != OTHER else False
