"""Identifiers and dates in a paper's own text: DOI, arXiv id, the year it appeared, the venue line."""
from __future__ import annotations

import re
from collections import Counter
from datetime import date

from core.pipeline.metadata.rules import rules

DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>{}|\\^`]+)", re.I)
# The paper's own arXiv id: "arXiv:2304.02623v1 [cs.CL] 5 Apr 2023" (the margin stamp), arxiv.org/abs/…, or the
# old scheme ("arXiv:hep-th/9901001").
ARXIV = re.compile(r"(?:arXiv\s*:\s*|arxiv\.org/(?:abs|pdf)/)(\d{4}\.\d{4,5}|[a-z][a-z\-]+(?:\.[A-Z]{2})?/\d{7})"
                   r"(?:v\d+)?", re.I)
YEAR = re.compile(r"(?<![\d.])(19[5-9]\d|20\d\d)(?!\d|\.\d)")


def plausible_year(year: int) -> bool:
    return 1950 <= year <= date.today().year + 1


def find_doi(text: str) -> str:
    m = DOI.search(text)
    if not m:
        return ""
    doi = m.group(1).rstrip(".,;:)]}'\"")
    if doi.count("(") < doi.count(")"):
        doi = doi.rstrip(")")
    return doi.lower()[:200]


def find_arxiv(lines: list[str]) -> str:
    for line in lines:
        m = ARXIV.search(line)
        if m:
            return m.group(1)
    return ""


def arxiv_year(arxiv_id: str) -> int | None:
    m = re.match(r"(\d{2})(\d{2})\.\d{4,5}$", arxiv_id) or re.search(r"/(\d{2})(\d{2})\d{3}$", arxiv_id)
    if not m or not 1 <= int(m.group(2)) <= 12:
        return None
    yy = int(m.group(1))
    year = (2000 if yy < 91 else 1900) + yy
    return year if plausible_year(year) else None


def stated_year(lines: list[str]) -> int | None:
    """The most frequent year in the lines that read like a venue, copyright or date line; None rather than a year
    of a cited work."""
    r = rules()
    votes: Counter[int] = Counter()  # weighted: values may be fractions
    previous = ""
    for line in lines:
        for part in re.split(r"[\n;]", line):
            # A venue line broken in two ("Published in the Proceedings of the … on" / "Lattices 2021, doi…"): the
            # words that say what the year is may be on the line before it.
            context, previous = f"{previous} {part}", part
            # "Downloaded from … on January 8, 2015" says when it was read, "(Smith et al., 2011)" a cited work
            if r.year_ignore.search(part) or r.year_citation.search(part) or not r.year_context.search(context):
                continue
            # an issue line ("Journal (2014), 26:1") names the year the paper is cited by, a copyright line
            # nearly always does; received / accepted dates come before it
            weight = r.year_issue_weight if r.year_issue.search(context) else \
                r.year_strong_weight if r.year_strong.search(context) else \
                r.year_weak_weight if r.year_weak.search(part) else 1
            for y in YEAR.findall(part):
                if plausible_year(int(y)):
                    votes[int(y)] += weight
    if not votes:
        return None
    best = max(votes.values())
    return max(y for y, n in votes.items() if n == best)  # a tie: the later year (received 2012, published 2013)


def pdf_date_year(value: str) -> int | None:
    m = re.match(r"(?:D:)?(\d{4})", value or "")
    return int(m.group(1)) if m and plausible_year(int(m.group(1))) else None


def find_venue(lines: list[str]) -> str:
    for line in lines:
        text = " ".join(line.split())
        for pattern in rules().venue_patterns:
            m = pattern.search(text)
            if m:
                venue = re.split(r",?\s*(?:doi\s*:|https?://)", m.group(0), flags=re.I)[0]
                return venue.strip(" ,.:")[:300]
    return ""
