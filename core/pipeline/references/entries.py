"""A paper's reference list split into entries and each entry parsed into fields, from the items parsing marked as
references (core/graph/item_roles.py). Three printed shapes are read:

- numbered, "[12] …", "12. …" or "(12) …": a label starts an entry, an item without one continues the previous;
- author-year (ACL, APA): an item starts an entry unless it cannot be one (it begins in lower case, or the entry
  before has no year yet or stops right after it: a column or page break cut the entry);
- within an entry: "Authors. 2019. Title. Venue." (ACL, ACM), "Surname, I.; Surname, I. Title. Journal 2019, 8"
  (ACS), 'A. Author, "Title," in Venue, 2019' (IEEE), "Author, A. (2019). Title. Venue." (APA).

Every field is a guess from punctuation; the entry's text is always kept whole beside them."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from core.content.items import item_text
from core.graph.item_roles import item_roles
from core.pipeline.metadata.patterns import ARXIV, YEAR, find_doi, plausible_year
from core.pipeline.references.rules import ref_rules
from core.schema.records import ContentItem
from core.schema.references import MAX_ENTRY_CHARS, ParsedReference

_LINK = re.compile(r"\[([^\[\]]{0,600})\]\((https?://[^\s()]{1,400})\)")  # markdown links in MinerU's text
_LABEL = re.compile(r"^\s*(?:\[(\d{1,3})\]|\((\d{1,3})\)|(\d{1,3})\.(?=\s+\S))\s*")
_INNER_LABEL = re.compile(r"(?<=[.\s])\[(\d{1,3})\]\s+(?=\S)|(?<=\.\s)\((\d{1,3})\)\s+(?=[A-ZÀ-Þ])")
_CORR = re.compile(r"\babs/(\d{4}\.\d{4,5})", re.I)
_YEAR_AFTER_AUTHORS = re.compile(r"(?:\.|,)\s+\(?((?:19|20)\d\d)([a-z]?)\)?(?:\.|,|:)\s+")
_YEAR_ANY = re.compile(r"(?<![\d.])((?:19|20)\d\d)([a-z]?)(?![\d])")
_QUOTED = re.compile(r"[“\"]([^”\"]{8,400}?)[,.]?[”\"]")
_ACS_AUTHOR = re.compile(r"^([A-ZÀ-Þ][^,;.]{0,40}),\s((?:[A-ZÀ-Þ][a-z]?\.\s?-?\s?)+)(?=[\s;]|$)")
_SENTENCE_END = re.compile(r"([.?!])\s+(?=[A-Z0-9(\[“\"]|In\s|arXiv)")
_ENDS_WITH_YEAR = re.compile(r"(?:19|20)\d\d[a-z]?\)?[.,]?\s*$")


@dataclass
class _Piece:
    text: str  # links unwrapped
    raw: str  # with the links' addresses, where DOIs and arXiv ids hide
    page: int
    bbox: list[float] | None


@dataclass
class _Entry:
    label: str
    pieces: list[_Piece] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(p.text for p in self.pieces).strip()

    @property
    def raw(self) -> str:
        return " ".join(p.raw for p in self.pieces)


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    return " ".join(text.split())


def _pieces(items: list[ContentItem]) -> list[_Piece]:
    roles = item_roles(items)
    out: list[_Piece] = []
    for item in items:
        if roles.get(item.index) != "reference":
            continue
        texts = item.list_items or [item_text(item)]
        for text in texts:
            raw = _clean(text)[:MAX_ENTRY_CHARS * 4]
            shown = _LINK.sub(lambda m: m.group(1), raw)
            if shown:
                out.append(_Piece(shown, raw, item.page_idx, list(item.bbox) if item.bbox else None))
    return out


def _label(text: str) -> tuple[str, str]:
    m = _LABEL.match(text)
    if not m:
        return "", text
    return next(g for g in m.groups() if g), text[m.end():]


def _split_numbered(piece: _Piece, expected: int) -> list[tuple[str, _Piece]]:
    """A piece holding several numbered entries ("… 2019. [13] B. Author …") cut at each later label, a few
    numbers ahead at most (a column break can move the ones between elsewhere)."""
    label, rest = _label(piece.text)
    parts: list[tuple[str, str]] = [(label, rest)]
    nxt = (int(label) + 1) if label else expected
    while True:
        last_label, last = parts[-1]
        m = next((m for m in _INNER_LABEL.finditer(last) if nxt <= int(m.group(1) or m.group(2)) < nxt + 10), None)
        if not m:
            break
        parts[-1] = (last_label, last[:m.start()].strip())
        parts.append((m.group(1) or m.group(2), last[m.end():]))
        nxt = int(parts[-1][0]) + 1
    # Cut in several, a piece's link addresses cannot be told apart: each part keeps only its own text's.
    return [(lab, _Piece(text, piece.raw if len(parts) == 1 else text, piece.page, piece.bbox))
            for lab, text in parts]


_SECOND_YEAR = re.compile(r"[a-zà-ÿ]\.\s(?:19|20)\d\d[a-z]?\.\s")  # "… and Oren Etzioni. 2018. "
_AUTHOR_RUN = re.compile(r"(?:[A-ZÀ-Þ][\w'’\-]*\.?\s?|(?:and|et al\.|van|von|de|der|den|del|da|di|le)\s|,\s?)+")


def _split_author_year(piece: _Piece) -> list[_Piece]:
    """A piece holding two author-year entries ("… NAACL-HLT. Xiao Ling, Sameer Singh, and Daniel S. Weld. 2015.
    Design …") cut where the second one's author list starts: the earliest full stop before its year after which
    only names, initials, commas and "and" come."""
    text = piece.text
    years = list(_SECOND_YEAR.finditer(text))
    if len(years) < 2:
        return [piece]
    cuts = []
    for year in years[1:]:
        end = year.start() + 1
        starts = [m.end() for m in re.finditer(r"[.?!]\s", text[:end]) if m.end() > (cuts[-1] if cuts else 0)]
        start = next((c for c in starts if _AUTHOR_RUN.fullmatch(text[c:end].strip() + " ")), None)
        if start is not None and start > (cuts[-1] if cuts else 0) + 20:
            cuts.append(start)
    bounds = [0, *cuts, len(text)]
    parts = [text[a:b].strip() for a, b in zip(bounds, bounds[1:])]
    return [_Piece(part, piece.raw if len(parts) == 1 else part, piece.page, piece.bbox) for part in parts if part]


def _continues(entry: _Entry, piece: _Piece) -> bool:
    """Author-year lists: whether a piece carries on the entry before it rather than starting one."""
    first = piece.text[:1]
    if not first.isupper() or piece.text.startswith("In "):
        return True
    before = entry.text
    years = len(_YEAR_ANY.findall(before))  # none yet, or only the one it stops at: "Arora, … Ma. 2017."
    return years == 0 or years == 1 and bool(_ENDS_WITH_YEAR.search(before))


def split_entries(items: list[ContentItem]) -> list[_Entry]:
    pieces = _pieces(items)
    if not pieces:
        return []
    rules = ref_rules()
    numbered = sum(bool(_label(p.text)[0]) for p in pieces) >= rules["numbered_share"] * len(pieces)
    entries: list[_Entry] = []
    for piece in pieces:
        if numbered:
            expected = int(entries[-1].label) + 1 if entries and entries[-1].label.isdigit() else 1
            for label, part in _split_numbered(piece, expected):
                if label and int(label) <= rules["max_label"]:
                    entries.append(_Entry(label, [part]))
                elif entries:
                    entries[-1].pieces.append(part)
                else:
                    entries.append(_Entry("", [part]))
        else:
            for part in _split_author_year(piece):
                if entries and _continues(entries[-1], part):
                    entries[-1].pieces.append(part)
                else:
                    entries.append(_Entry("", [part]))
    return [e for e in entries if len(e.text) >= rules["min_entry_chars"]]


def _fold(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def family_name(name: str) -> str:
    """"Matthew E. Peters" → "Peters", "Peters, M. E." → "Peters", "Madeleine van Zuylen" → "van Zuylen"."""
    name = re.sub(r"\s+", " ", name.replace("et al.", "").replace("et al", "")).strip(" .,;*")
    if not name:
        return ""
    if "," in name:
        return name.split(",", 1)[0].strip()
    words = [w for w in name.split(" ") if w]
    family = [words[-1]]
    for w in reversed(words[:-1]):
        if w.lower() in ref_rules()["particles"]:
            family.insert(0, w)
        else:
            break
    return " ".join(family).strip(" .")


_INITIALS = re.compile(r"(?:[A-Z]\.\s?-?)+")  # "M. E.", "J.-C."


def _whole(name: str) -> str:
    """A name as a bibliography writes it: "Peters, M. E." → "M. E. Peters"; "Matthew E. Peters" as printed."""
    name = re.sub(r"\s+", " ", name.replace("et al.", "").replace("et al", "")).strip(" ,;*")
    name = re.sub(r"(?<=[a-z]{2})\.$", "", name).strip()  # the entry's full stop, not an initial's
    if "," in name:
        family, given = (p.strip() for p in name.split(",", 1))
        if re.fullmatch(r"(?:[A-Z]\.\s?-?)*[A-Z]", given):
            given += "."  # "Hodas, N. O" lost its last dot to the list's end
        name = f"{given} {family}" if given else family
    return name if len(name) <= 120 else ""


def _authors(segment: str) -> tuple[list[str], list[str]]:
    """(family names, whole names) of an entry's author list, in order: markers match family names, an export
    writes the names whole where the entry prints them so."""
    segment = segment.strip(" .,")
    if ";" in segment:  # ACS: "Surname, I.; Surname, I."
        parts = [p.strip() for p in segment.split(";")]
    else:
        parts = re.split(r",\s*(?:and\s+|&\s*)?|\s+and\s+|\s*&\s*", segment)
        if sum(bool(_INITIALS.fullmatch(p.strip())) for p in parts) >= len(parts) / 3:
            # APA: "Ammar, W., Peters, M. E., & Power, R.": surnames alternate with initials
            paired: list[str] = []
            for k, p in enumerate(parts):
                # The last initial may have lost its dot to the list's end ("…, & Power, R").
                initials = _INITIALS.fullmatch(p.strip()) or k == len(parts) - 1 and re.fullmatch(r"[A-Z]", p.strip())
                if initials and paired and "," not in paired[-1]:
                    paired[-1] = f"{paired[-1]}, {p.strip()}"
                elif not initials:
                    paired.append(p)
            parts = paired
    pairs = [(family_name(p.split(",", 1)[0] if "," in p else p), _whole(p)) for p in parts]
    pairs = [(f, w or f) for f, w in pairs if f and not f.lower().startswith("et al") and len(f) <= 60][:100]
    return [f for f, _ in pairs], [w for _, w in pairs]


def _first_sentence(text: str) -> tuple[str, str]:
    """The title at the start of `text` and what follows it: up to a full stop that does not end an initial."""
    for m in _SENTENCE_END.finditer(text):
        before = text[:m.start()]
        if re.search(r"(?:^|\s)[A-Z]$", before) or len(before) < 3:
            continue
        title, rest = text[:m.end(1)].strip(), text[m.end():].strip()
        if title.endswith("?") and rest:  # "What's in a Summary? Laying the Groundwork …. In Proceedings"
            more, after = _first_sentence(rest)
            if re.match(ref_rules()["venue_after_title"], after) and len(more) < 200:
                return f"{title} {more}", after
        return title, rest
    return text.strip(), ""


def _venue(rest: str) -> str:
    rules = ref_rules()
    venue = rest
    for lead in rules["venue_lead"]:
        if venue.startswith(lead) and lead.strip() in ("In", "in"):
            venue = venue[len(lead):]
    for cut in rules["venue_cut"]:
        venue = venue.split(cut, 1)[0]
    venue = re.split(r"(?:,\s*|\s+)\(?(?:19|20)\d\d\)?(?=[.,;:)]|\s*$)", venue, maxsplit=1)[0]
    return venue.strip(" .,;")[:300]


def parse_entry(text: str, raw: str = "") -> dict:
    """An entry's fields: authors (family names) and names (whole, as printed), title, year (+ suffix), venue, DOI,
    arXiv id."""
    raw = raw or text
    out: dict = {"authors": [], "names": [], "title": "", "year": None, "year_suffix": "", "venue": "",
                 "doi": find_doi(raw.replace("](", " ")), "arxiv": ""}
    m = ARXIV.search(raw) or _CORR.search(raw)
    out["arxiv"] = m.group(1) if m else ""
    head = text[:1500]
    quoted = _QUOTED.search(head)
    acs = _ACS_AUTHOR.match(head)
    ay = _YEAR_AFTER_AUTHORS.search(head)
    if quoted and quoted.start() > 3:  # IEEE
        out["authors"], out["names"] = _authors(head[:quoted.start()])
        out["title"] = quoted.group(1)
        out["venue"] = _venue(text[quoted.end():].lstrip(" ,.").removeprefix("in ").removeprefix("In "))
    elif acs and ";" in head[:acs.end() + 3] or (acs and not ay):  # ACS: authors end at the last "Surname, I."
        pos = 0
        while (m2 := _ACS_AUTHOR.match(head[pos:])) is not None:
            pos += m2.end()
            tail = head[pos:]
            if tail.lstrip().startswith(";"):
                pos += tail.index(";") + 1
                pos += len(head[pos:]) - len(head[pos:].lstrip())
                continue
            break
        out["authors"], out["names"] = _authors(head[:pos])
        out["title"], rest = _first_sentence(text[pos:].strip())
        out["venue"] = _venue(rest)
    elif ay and len(head) - ay.end() >= 10:  # ACL / ACM / APA: authors, year, title (something after it), venue
        out["authors"], out["names"] = _authors(head[:ay.start()])
        out["year"], out["year_suffix"] = int(ay.group(1)), ay.group(2)
        out["title"], rest = _first_sentence(text[ay.end():])
        out["venue"] = _venue(rest)
    else:  # unknown shape: authors up to the first full stop after a name, then the title
        authors, rest = _first_sentence(text)
        out["authors"], out["names"] = _authors(authors)
        out["title"], rest = _first_sentence(rest)
        out["venue"] = _venue(rest)
    if out["year"] is None or not plausible_year(out["year"]):
        after = text[len(text) - len(text.split(out["title"], 1)[-1]):] if out["title"] else text
        years = [(int(y), s) for y, s in _YEAR_ANY.findall(after) if plausible_year(int(y))]
        years = years or [(int(y), "") for y in YEAR.findall(text) if plausible_year(int(y))]
        out["year"], out["year_suffix"] = years[0] if years else (None, "")
    out["title"] = out["title"].strip(" .,;")[:500]
    return out


def parse_references(doc_id: str, items: list[ContentItem]) -> list[ParsedReference]:
    refs: list[ParsedReference] = []
    for idx, entry in enumerate(split_entries(items)):
        text = entry.text[:MAX_ENTRY_CHARS]
        fields = parse_entry(text, entry.raw[:MAX_ENTRY_CHARS * 2])
        first = entry.pieces[0]
        refs.append(ParsedReference(doc_id=doc_id, idx=idx, text=text, label=entry.label, page=first.page,
                                    bbox=first.bbox, **fields))
    return refs


def fold(text: str) -> str:
    """Lower case without accents: how surnames in markers and entries are compared."""
    return _fold(text).lower()
