"""The reference parser's thresholds and word lists, read once from data/reference_rules.json."""
from __future__ import annotations

import json
from functools import cache
from pathlib import Path

_PATH = Path(__file__).parent / "data" / "reference_rules.json"


@cache
def ref_rules() -> dict:
    return json.loads(_PATH.read_text(encoding="utf-8"))
