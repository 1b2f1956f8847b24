"""The extractor's thresholds and word lists, read once from data/metadata_rules.json."""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

RULES_PATH = Path(__file__).parent / "data" / "metadata_rules.json"


class Rules:
    def __init__(self, raw: dict):
        self.raw = raw
        self.not_title = [re.compile(p, re.I) for p in raw["not_title"]]
        self.pdf_title_junk = [re.compile(p, re.I) for p in raw["pdf_title_junk"]]
        self.pdf_author_junk = set(raw["pdf_author_junk"])
        self.affiliation_words = set(raw["affiliation_words"])
        self.name_particles = set(raw["name_particles"])
        self.year_context = re.compile(raw["year_context"], re.I)
        self.affiliation_line = re.compile(raw["affiliation_line"], re.I)
        self.year_strong = re.compile(raw["year_strong"], re.I)
        self.year_issue = re.compile(raw["year_issue"], re.I)
        self.year_ignore = re.compile(raw["year_ignore"], re.I)
        self.year_weak = re.compile(raw["year_weak"], re.I)
        self.year_citation = re.compile(raw["year_citation"])  # case matters: "Fountoulakis et al., 2011)"
        self.venue_patterns = [re.compile(p, re.I) for p in raw["venue_patterns"]]

    def __getattr__(self, name: str):
        try:
            return self.raw[name]
        except KeyError:
            raise AttributeError(name) from None


@lru_cache(maxsize=1)
def rules() -> Rules:
    return Rules(json.loads(RULES_PATH.read_text(encoding="utf-8")))
