"""What kind of answer a question expects, and where such an answer sits inside a sentence — regular expressions
only, so the extractive reader (core.query.reading.extractive)
pays microseconds, not a spaCy run, per candidate sentence.

Types: a number ("how many", "what percentage"), a year ("when", "what year"), a name ("who", "which model"), a
definition ("what is X") or anything else. A span is where the answer of that type sits in a sentence: the number
next to the question's words ("37M unique paper nodes"), the year, the name the question does not already say, or
what follows "X is".
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# The words' helpers are re-exported: the reader's modules read them as answer_types.stems, .words, …
from core.query.reading.words import LOWER_STOP, WORD, word_form
from core.query.reading.words import mentions as mentions
from core.query.reading.words import named_words as named_words
from core.query.reading.words import stem as stem
from core.query.reading.words import stems as stems
from core.query.reading.words import words as words

NUMBER, YEAR, NAME, DEFINITION, OTHER = "number", "year", "name", "definition", "other"
TERM, MANNER = "term", "manner"  # "what is X called?" (the term), "how is X computed?" (the way)

_NUMBER_Q = re.compile(r"\b(how (many|much|large|big|long|often|fast|small|high|low|far|old|thick|deep|wide|heavy|tall|"
                       r"hot|cold|strong|accurate)|what (fraction|percent"
                       r"(age)?|proportion|share|ratio|number|amount|size|accuracy|score|f1|precision|recall|rate)"
                       r"|by how much|how many times)\b|^\s*what (is|are) the [\w\s'-]{0,50}\b(values?|scores?|"
                       r"numbers?|counts?|sizes?|rates?|percentages?)\b|^\s*what\b.*\b(reach|reaches|achieve|achieves|obtain|"
                       r"obtains|attain|attains|score|scores)\b", re.I)
# A quantity with a unit: "what learning rate", "what batch size", "how long", "in seconds" — answered by a number.
_UNIT_Q = re.compile(r"^\s*(?:(?:at|above|below|under|over|to|by|with|of|in)\s+)?(what|which)\s+"
                     r"(?!(?:is|are|was|were)\s+an?\s)"  # "what is a factual error": a kind of thing, no quantity
                     r"(?:[\w-]+\s+){0,3}?"
                     r"(learning rates?|batch sizes?|dimensions?|dimensionality|"
                     r"dropout|epochs?|steps?|temperatures?|weight decay|warm-?up|length|duration|latency|time|speed|"
                     r"threshold|budget|window|margin|resolution|mass|ratio|depth|thickness|speed-?up|difference|"
                     r"values?|concentrations?|dose|current|voltage|frequency|energy|pressure|weight|height|width|"
                     r"distance|volume|density|error|correlation|coefficient|p-value|[li]c50|ec50)\b"
                     # the quantity heads its noun phrase: "which density profile" asks for a profile
                     r"(?=\s*[?,]|\s+(?:of|is|are|was|were|did|does|do|has|have|had|for|in|on|at|to|between|per|that|"
                     r"with|when|after|during|by|must|can|could|should|would|will|[a-z]{2,}ed)\b)|\bhow long\b"
                     r"|\bin (seconds|minutes|hours|days|ms|milliseconds)\b", re.I)
_YEAR_Q = re.compile(r"^\s*when\b|\b(what|which) (years?|dates?|months?)\b", re.I)
_NAME_NOUNS = (r"(model|dataset|corpus|corpora|method|system|tool|library|algorithm|benchmark|framework|baseline|"
               r"encoder|decoder|architecture|metric|company|organi[sz]ation|institution|university|venue|"
               r"conference|journal|language model|toolkit|software|package|database|api|approach|network|"
               r"classifier|parser|embedding|backbone|optimi[sz]er|loss|search engine|platform|service|cpu|gpu|"
               r"processor|hardware|scheme|agent|data set|weights)s?")
_NAME_Q = re.compile(rf"\b(who|whom|whose|(which|what)(?! (?:is|are) an? )( [\w-]+){{0,3}} {_NAME_NOUNS}"
                     r"|what is the name|what are the names"
                     r"|name the)\b", re.I)
_DEFINITION_Q = re.compile(r"^\s*(what (is|are) (an? |the )?(?P<term>[^?]{1,80}?)\s*\??$|define (?P<term2>[^?]+)"
                           r"|what does (?P<term3>[^?]+?) (mean|stand for|refer to)\b)", re.I)
# "What is X referred to as?", "What are two molecules called when …": the answer is the term the sentence gives.
_TERM_Q = re.compile(r"^\s*(?:(what|how)\b.*\b(called|referred to(?: as)?|known as|termed|dubbed|named|"
                     r"(?:do|does|did)\b.*\bcall)\b|(which|what)\s+(?:[\w-]+\s+){0,2}(term|name)s?\s+(?:do|does|did)\b)",
                     re.I)
_TERM = re.compile(r"\b(?:(?:is|are|was|were)\s+)?(?:called|referred (?:to )?as|known as|termed|dubbed|denoted? as|"
                   r"named|coined)\s+(?:an?\s+|the\s+)?(?:[“\"‘']\s*(?P<quoted>[^”\"’']{2,80}?)\s*[”\"’']|"
                   r"(?P<plain>[\w-]+(?:\s+[\w-]+){0,4}))", re.I)
# "How is X computed?": the way, what follows "computed as/by/using" in the sentence.
_MANNER_Q = re.compile(r"^\s*how\s+(?:is|are|was|were|do|does|did)\b.*\b(?P<verb>[a-z]{3,}ed)\b", re.I)
_MANNER_AFTER = r"\s+(?:as|by|using|via|with|from|through|based on)\s+"
# Where a definition's term ends in a longer question: "hard negatives | in SPECTER's training".
_TERM_CUT = re.compile(r"\s+(?:in|according to|for|during|when|that|which|from|within|under)\s+.*$", re.I)
_MEDIA_Q = re.compile(r"\b(fig(ure)?s?|tables?|plots?|charts?|diagrams?)\b", re.I)

_SCALE = r"(?:\s?(?:%|percent|per cent|pp|points?|[MKBk]\b|million|billion|thousand|hundred|x\b|×|times))?"
_NUMBER = re.compile(rf"(?<![\w.\[\-/])[-+−~≈]?\d(?:[\d,]*\d)?(?:\.\d+)?{_SCALE}(?![\w\]])"
                     r"|(?<![\w\[])\.\d+(?!\w)", re.I)
_NUMBER_WORDS = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
                 "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred dozen "
                 "half twice").split()
_WORD_NUMBER = re.compile(rf"\b(?:{'|'.join(_NUMBER_WORDS)})(?:[- ](?:{'|'.join(_NUMBER_WORDS)}))*"
                          rf"(?:\s(?:million|billion|thousand|percent))?\b", re.I)
_YEAR = re.compile(r"(?<![\d.])(?:(?:January|February|March|April|May|June|July|August|September|October|"
                   r"November|December)\s+)?(?:1[89]\d\d|20\d\d)(?!\d|\.\d)")
# A name: an acronym or a word with an inner capital or digit (BERT, BooksCorpus, S2ORC, GPT-4), or a run of
# capitalised words; the first word of a sentence is capitalised anyway and is only kept when it is a name.
_NAME_WORD = r"(?:[A-Z][A-Za-z0-9]*[A-Z0-9][A-Za-z0-9\-]*|[A-Z][a-z]+(?:-[A-Za-z0-9]+)*)"
_NAME = re.compile(rf"\b{_NAME_WORD}(?:\s+(?:of\s+|for\s+|the\s+|de\s+)?{_NAME_WORD})*")
_CITATION = re.compile(r"\((?:[^()]{0,80}?\b(?:19|20)\d\d[a-z]?)(?:[;,][^()]{0,80}?\b(?:19|20)\d\d[a-z]?)*\)")
_ET_AL = re.compile(r"\s+et al\b")
_SOFTWARE = re.compile(r"(librar(y|ies)|tools?|packages?|toolkits?|software|parsers?|apis?)", re.I)
_LOWER_TOOL = re.compile(r"\((?:using|via|with|from)\s+([a-z][\w.+-]{2,30})\)|\busing (?:the\s+)?([a-z][\w.+-]{2,30})"
                         r"\s+(?:library|tool|package|toolkit)\b")
_NOUN_AFTER = re.compile(rf"\s+{_NAME_NOUNS}\b", re.I)
_STRONG_NAME = re.compile(r"[A-Z][A-Za-z0-9]*[A-Z0-9]|[a-z]+[A-Z]\w*")
_NOTE_BEFORE = re.compile(r"\bal\.\s*$")
_BOUND_BEFORE = re.compile(r"\b(up to|at most|at least|no more than|a maximum of|a minimum of)\s+$", re.I)
_BOUND_Q = re.compile(r"\b(up to|at most|at least|maximum|minimum|limit|each|per)\b", re.I)
_YEAR_BEFORE = re.compile(r"\b(?:19|20)\d\d\s+$")
_SECTION_BEFORE = re.compile(r"(§\s*|\b(?:Section|Sec\.|Table|Tab\.|Figure|Fig\.|Eq\.|Equation|Appendix|Algorithm|"
                             r"Line|Step|Chapter|Ref\.)\s+)$", re.I)
# "How long does X take?": a duration, so a number with a unit of time ("two models" is not one).
_DURATION_Q = re.compile(r"\bhow (long|much time)\b.*\b(take|takes|took|last|lasts|run|runs|need|needs)\b", re.I)
_TIME_UNIT = re.compile(r"\s?(?:ms|s|sec|secs|seconds?|minutes?|mins?|hours?|hrs?|h|days?|weeks?|months?|years?)\b",
                        re.I)
_CHANGE_Q = re.compile(r"\b(reduc|increas|improv|chang|drop|rais|rise|grow|decreas|fall|shrink|boost|lower)", re.I)
_RANGE = re.compile(r"\bfrom\s+[-+−]?\d[\d,]*(?:\.\d+)?\s?%?\s+to\s+[-+−]?\d[\d,]*(?:\.\d+)?\s?%?")
_LIST_OR_MARKER = re.compile(r"[\d,]+(\)|\.\s|\s+[A-Z][a-z])")
_COPULA = re.compile(r"\b(is|are|was|were|refers to|denotes|means|stands for|is called|consists of|is defined as)\b"
                     r"\s+", re.I)


@dataclass
class Span:
    start: int
    end: int
    text: str
    score: float  # how well it fits: closeness to the question's words


# "Which gene …", "In which cell line …": a thing picked by its name.
_WHICH_Q = re.compile(r"^\s*(?:(?:in|on|from|by|at|with|for|to|of|under|apart from [^,]+,)\s+)?which\s+[\w-]+", re.I)
_AUXILIARY = r"(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)"  # a yes/no question's
_YES_NO_Q = re.compile(rf"^\s*{_AUXILIARY}\b", re.I)
# A scene set before the question proper: "In the review of …, what is the molecular size …?", "According to …,
# does …?"
_LEAD_CLAUSE = re.compile(rf"^[^,?]{{0,100}},\s*(?=(?:what|which|how|when|who|where|at what|in what|on what|"
                          rf"{_AUXILIARY})\b)", re.I)


def main_clause(question: str) -> str:
    """The question without a scene-setting clause before it: what its type is read from."""
    return _LEAD_CLAUSE.sub("", question.strip())


def yes_no_question(question: str) -> bool:
    """Asked for a yes or a no: its main clause starts with an auxiliary ("Does …", "According to X, is …")."""
    return bool(_YES_NO_Q.match(main_clause(question)))


def answer_type(question: str) -> str:
    q = main_clause(question)
    if _YEAR_Q.search(q):
        return YEAR
    if _NUMBER_Q.search(q) or _UNIT_Q.search(q):
        return NUMBER
    if _TERM_Q.search(q):
        return TERM
    if _NAME_Q.search(q) or _WHICH_Q.search(q):
        return NAME
    if definition_term(q):
        return DEFINITION
    if _MANNER_Q.search(q):
        return MANNER
    return OTHER


def definition_term(question: str) -> str:
    """X of "what is X?" — only when X is short, so "what is the accuracy of …" stays a number question."""
    m = _DEFINITION_Q.search(question)
    if not m:
        return ""
    term = next(g for g in (m.group("term"), m.group("term2"), m.group("term3")) if g is not None)
    term = re.sub(r"^(an?|the)\s+", "", term.strip(), flags=re.I)
    if len(term.split()) > 2:  # "hard negatives in SPECTER's training": the term is what comes before "in"
        term = _TERM_CUT.sub("", term) or term
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
    return [w for w in out if w.lower() not in _MEASURE and w.lower() not in LOWER_STOP]


def about_media(question: str) -> bool:
    """The question asks about a figure or table: only then may a caption answer it."""
    return bool(_MEDIA_Q.search(question))


def _closeness(sentence: str, start: int, end: int, qwords: set[str]) -> float:
    """Question words within a few words of a span, nearer ones counting more: which of several numbers in a
    sentence is the one asked about ("37M unique paper nodes", not "12M authors")."""
    # Distance in content words: "94.0% of the queries were qualified" has "queries" right next to the number.
    left = [w for w in WORD.findall(sentence[max(0, start - 60):start]) if w.lower() not in LOWER_STOP][-6:]
    right = [w for w in WORD.findall(sentence[end:end + 60]) if w.lower() not in LOWER_STOP][:6]
    score = 0.0
    for distance, w in enumerate(reversed(left), 1):
        score += (1.0 / distance) * (word_form(w) in qwords)
    for distance, w in enumerate(right, 1):
        score += (1.2 / distance) * (word_form(w) in qwords)
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
        duration = bool(_DURATION_Q.search(question))
        count = bool(re.search(r"\bhow many\b", question, re.I))
        for m in list(_NUMBER.finditer(sentence)) + list(_WORD_NUMBER.finditer(sentence)):
            text = m.group().strip()
            if text.lower() in qlower or not any(c.isalnum() for c in text) or (m.start(), m.end()) in years:
                continue  # a year is never "how many" (and most are citations: "(van der Maaten, 2014)")
            if _NOTE_BEFORE.search(sentence[:m.start()]) or (
                    re.fullmatch(r"\d{1,2}", text) and _YEAR_BEFORE.search(sentence[:m.start()])):
                continue  # "Fischer et al. 120 show", "ICML 2023 2, NeurIPS 2023 3": a reference or note number
            score = _closeness(sentence, m.start(), m.end(), qwords)
            if (m.start(), m.end()) in spelled and score < 0.5:
                continue  # "one document", "two steps": only a spelled number next to the question's words
            if count and re.search(r"(%|percent|per cent)$", text, re.I):
                continue  # "how many queries": a count, not "93.7% of them"
            if _SECTION_BEFORE.search(sentence[:m.start()]):
                continue  # "§3.2", "Table 4", "Section 5": a pointer, not a quantity
            if re.fullmatch(r"\d+(\.\d+){2,}", text):
                score -= 1.0  # "4.1.2": a section number ("18.5" is a decimal)
            if _LIST_OR_MARKER.match(sentence[m.start():]) and not sentence[:m.start()].strip():
                continue  # "4) Resolve …", "120 Small molecule …": an enumeration or a note marker
            if sentence[m.end():m.end() + 1] == ")" and "(" not in sentence[max(0, m.start() - 30):m.start()]:
                continue  # "…, and 4) Resolve bibliography links": an enumeration inside the sentence
            cell = next((c for c in row if c.start <= m.start() < c.end), None)
            unit = _TIME_UNIT.match(sentence, m.end()) if duration and cell is None else None
            if duration and cell is None and not unit:
                continue
            if cell is not None:  # in a table row the column's name, not the neighbouring cells, says what it is
                score = 2.0 * len(words(cell.text) & qwords) + 0.1 * score
            if _BOUND_BEFORE.search(sentence[:m.start()]) and not _BOUND_Q.search(question):
                score -= 0.5  # "up to 5 training triples" per query: a limit, not the total asked for
            end = unit.end() if unit else m.end()  # "3 seconds": a duration with its unit
            found.append(Span(m.start(), end, sentence[m.start():end].strip(), score))
        # "(std-dev from 18.5 to 6.8)": how much something changed is said by both ends
        for m in _RANGE.finditer(sentence) if _CHANGE_Q.search(question) else ():
            found.append(Span(m.start(), m.end(), m.group(), 0.5 + _closeness(sentence, m.start(), m.end(), qwords)))
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
            other = _NOUN_AFTER.match(masked, m.end())
            if noun and other and not mentions(other.group(1).lower(), noun.group()):
                continue  # "the MMACE method" when a dataset is asked for: a name of another kind
            found.append(Span(start, m.end(), text, strong + said + _closeness(masked, start, m.end(), qwords)))
        if noun and _SOFTWARE.fullmatch(noun.group()):  # "(using pdfplumber)": software is often lower-case
            for m in _LOWER_TOOL.finditer(masked):
                if (m.group(1) or m.group(2)).lower() not in qlower:
                    g = 1 if m.group(1) else 2
                    found.append(Span(m.start(g), m.end(g), m.group(g), 1.0 + said))
    elif kind == DEFINITION:
        term = definition_term(main_clause(question))
        m, gap = None, ""
        # "X is …", "X, a …" or "X (…) is …": the definition follows the term, not a later verb of the sentence;
        # any mention of the term may be the one defined ("factual errors in …, where a factual error is …").
        for at in ([t.start() for t in re.finditer(rf"(?<!\w){re.escape(term)}(?!\w)", sentence, re.I)]
                   if term else []):
            m = _COPULA.search(sentence, at + len(term))
            gap = sentence[at + len(term):m.start()] if m else ""
            if m and (len(gap.strip(" ,")) == 0 or re.fullmatch(r"\s*\([^)]{0,60}\)\s*", gap)):
                break
        expansion = _expansion(sentence, term) if re.fullmatch(r"[A-Z][\w-]*[A-Z][\w-]*", term) else None
        if expansion:  # "what does MMACE stand for?": its spelled-out form
            found.append(Span(expansion[0], expansion[1], sentence[expansion[0]:expansion[1]], 2.0))
        elif m and (len(gap.strip(" ,")) == 0 or re.fullmatch(r"\s*\([^)]{0,60}\)\s*", gap)):
            end = _clause_end(sentence, m.end())
            found.append(Span(m.end(), end, sentence[m.end():end].strip(), 2.0))
        elif term and (m := re.search(rf"\b(?:denoted?|call|calls|called|term|refer to)\s+as\s+[“\"‘']?"
                                      rf"{re.escape(term)}[”\"’']?\s+", sentence, re.I)):
            end = _clause_end(sentence, m.end())  # "we denote as “hard negatives” the papers that …"
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
    elif kind == TERM:
        for m in _TERM.finditer(sentence):
            group = "quoted" if m.group("quoted") else "plain"
            text = m.group(group).strip()
            if text.lower() not in qlower:
                found.append(Span(m.start(group), m.start(group) + len(text), text, 2.0 if group == "quoted" else 1.0))
    elif kind == MANNER:
        verb = _MANNER_Q.search(main_clause(question)).group("verb")
        for m in re.finditer(rf"\b{re.escape(verb)}{_MANNER_AFTER}", sentence, re.I):
            end = _clause_end(sentence, m.end())
            found.append(Span(m.end(), end, sentence[m.end():end].strip(), 2.0))
    found.sort(key=lambda s: (-s.score, s.start))
    return found


def _expansion(sentence: str, acronym: str) -> tuple[int, int] | None:
    """Where an acronym's spelled-out form is: "MMACE (Molecular Model … Explanations)" or "“Molecular …” (MMACE)"."""
    a = re.escape(acronym)
    m = re.search(rf"\b{a}\s*\((?P<x>[A-Z][^()]{{3,120}}?)\)", sentence)
    if m and len(m.group("x").split()) >= 2:
        return m.start("x"), m.end("x")
    m = re.search(rf"(?P<x>(?:[A-Z][\w-]*\s+){{1,8}}[A-Z][\w-]*)[”\"’']?\s*\({a}\)", sentence)
    return (m.start("x"), m.end("x")) if m else None


def _clause_end(sentence: str, start: int) -> int:
    """Where the phrase that starts at `start` ends: the next clause break, or the sentence's end."""
    m = re.compile(r"[;:]|,\s+(which|that|where|while|and|but)\b|\.\s|\s\[\d").search(sentence, start)
    end = m.start() if m else len(sentence.rstrip(". "))
    return end if end > start else len(sentence)


def has_answer(sentence: str, kind: str, question: str) -> bool:
    return bool(spans(sentence, kind, question)) if kind != OTHER else False
