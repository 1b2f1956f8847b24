"""In-text citation markers linked to reference entries, each link with the sentence that makes it, its page and
box: numbered markers ("[12]", "[3, 5–7]") by label, author-year ones ("(Ammar et al., 2018)", "Ammar et al.
(2018)", "(Lo and Wang, 2020a; Cohan et al., 2020)") by first author's family name and year."""
from __future__ import annotations

import re

from core.content.items import item_text
from core.graph.item_roles import BODY, item_roles
from core.pipeline.references.entries import fold
from core.pipeline.references.rules import ref_rules
from core.schema.records import ContentItem
from core.schema.references import MAX_SENTENCE_CHARS, CitationLink, ParsedReference

_NUMBERED = re.compile(r"\[(\d{1,3}(?:\s*[,;–—-]\s*\d{1,3}){0,30})\]")
# Superscript markers as MinerU writes them (chemistry, medicine): "relationships.<sup>1–3</sup> Applications" is
# read as "relationships [1–3]. Applications", so the marker stays in the sentence it closes.
_SUP_AFTER_STOP = re.compile(r"([.!?,;:])\s*<sup>\s*([\d,;–—\-\s]{1,120}?)\s*</sup>")
_SUP = re.compile(r"\s*<sup>\s*([\d,;–—\-\s]{1,120}?)\s*</sup>")
_MARKUP = re.compile(r"</?(?:sup|sub|b|i|em|strong)>|\*\*")
_PAREN = re.compile(r"\(([^()]{4,400}?)\)")
_NARRATIVE = re.compile(r"\b([A-ZÀ-Þ][\w'’\-]+(?:\s+(?:et\s+al\.?|(?:and|&)\s+[A-ZÀ-Þ][\w'’\-]+))?)\s*\(((?:19|20)\d\d)"
                        r"([a-z]?)\)")
_NAME_YEAR = re.compile(r"([A-ZÀ-Þ][\w'’\-]+(?:\s+(?!and\b|et\b)[a-z]{1,4}\s+[A-ZÀ-Þ][\w'’\-]+)?)"
                        r"(?:\s+et\s+al\.?|\s+(?:and|&)\s+([A-ZÀ-Þ][\w'’\-]+))?,?\s+((?:19|20)\d\d)([a-z]?)\b")
_BOUNDARY = re.compile(r"[.!?]\s+(?=[A-Z\[(“\"])")


def sentences(text: str) -> list[str]:
    """The text cut after a full stop, not after "et al." or "e.g." or an initial."""
    skip = set(ref_rules()["no_break_after"])
    out, start = [], 0
    for m in _BOUNDARY.finditer(text):
        word = re.search(r"([\w.]+)$", text[start:m.start()])
        last = word.group(1).lower() if word else ""
        if last in skip or (len(last) == 1 and last.isalpha()):
            continue
        out.append(text[start:m.start() + 1].strip())
        start = m.end()
    out.append(text[start:].strip())
    return [s for s in out if s]


def _numbers(inside: str, limit: int) -> list[int]:
    found: list[int] = []
    for part in re.split(r"[,;]", inside):
        bounds = [int(x) for x in re.findall(r"\d+", part)]
        if len(bounds) == 2 and 0 < bounds[1] - bounds[0] <= limit:
            found += range(bounds[0], bounds[1] + 1)
        else:
            found += bounds[:1]
    return found


class _AuthorYearIndex:
    def __init__(self, refs: list[ParsedReference]):
        self.by_year: dict[int, list[ParsedReference]] = {}
        for ref in refs:
            if ref.year and ref.authors:
                self.by_year.setdefault(ref.year, []).append(ref)

    def find(self, surname: str, second: str, year: int, suffix: str) -> ParsedReference | None:
        wanted = fold(surname)
        hits = [r for r in self.by_year.get(year, []) if fold(r.authors[0]).split()[-1:] == wanted.split()[-1:]
                or fold(r.authors[0]) == wanted]
        if suffix:
            hits = [r for r in hits if r.year_suffix == suffix] or hits
        if second and len(hits) > 1:
            hits = [r for r in hits if len(r.authors) > 1 and fold(r.authors[1]).endswith(fold(second))] or hits
        return hits[0] if hits else None


def _author_year(sentence: str, index: _AuthorYearIndex) -> list[tuple[str, ParsedReference]]:
    found: list[tuple[str, ParsedReference]] = []
    skip = set(ref_rules()["not_surnames"])
    for m in _NARRATIVE.finditer(sentence):
        names = m.group(1).split()
        second = names[-1] if len(names) > 1 and names[-2] in ("and", "&") else ""
        if names[0] not in skip and (ref := index.find(names[0], second, int(m.group(2)), m.group(3))):
            found.append((m.group(0), ref))
    for m in _PAREN.finditer(sentence):
        for part in m.group(1).split(";"):
            for n in _NAME_YEAR.finditer(part):
                if n.group(1) in skip:
                    continue
                ref = index.find(n.group(1), n.group(2) or "", int(n.group(3)), n.group(4))
                if ref:
                    found.append((m.group(0), ref))
    return found


def _body_text(item: ContentItem) -> str:
    text = _SUP_AFTER_STOP.sub(lambda m: f" [{m.group(2)}]{m.group(1)}", item.text or item_text(item))
    return " ".join(_MARKUP.sub("", _SUP.sub(lambda m: f" [{m.group(1)}]", text)).split())


def link_markers(items: list[ContentItem], refs: list[ParsedReference]) -> tuple[list[CitationLink], int, int]:
    """Every citation of an entry in the body text, how many markers were seen and how many of them found their
    entry: the share linked is what bench/references_accuracy.py reports."""
    rules = ref_rules()
    by_label = {int(r.label): r for r in refs if r.label.isdigit()}
    index = _AuthorYearIndex(refs)
    roles = item_roles(items)
    links: list[CitationLink] = []
    seen = linked = 0
    for item in items:
        if roles.get(item.index) != BODY or item.type != "text":
            continue
        for sentence in sentences(_body_text(item)):
            shown = sentence[:MAX_SENTENCE_CHARS]
            pairs: list[tuple[str, ParsedReference]] = []
            if by_label:
                for m in _NUMBERED.finditer(sentence):
                    numbers = _numbers(m.group(1), rules["max_range"])
                    seen += len(numbers)
                    pairs += [(m.group(0), by_label[n]) for n in numbers if n in by_label]
            else:
                marks = _author_year(sentence, index)
                seen += sum(1 for m in _PAREN.finditer(sentence) for part in m.group(1).split(";")
                            if _NAME_YEAR.search(part))
                seen += sum(1 for m in _NARRATIVE.finditer(sentence) if m.group(1).split()[0] not in
                            rules["not_surnames"])
                pairs += marks
            linked += len(pairs)
            done: set[int] = set()
            for marker, ref in pairs:
                if ref.idx not in done:
                    done.add(ref.idx)
                    links.append(CitationLink(doc_id=ref.doc_id, ref_idx=ref.idx, marker=marker[:rules[
                        "max_marker_chars"]], sentence=shown, page=item.page_idx,
                        bbox=list(item.bbox) if item.bbox else None))
    return links, seen, linked
