"""`python -m core gc`: remove what no registered document owns (core.pipeline.gc), and say what went."""
from __future__ import annotations

import json

from core.library import Library
from core.pipeline.gc import collect_garbage


def cmd_gc(lib: Library, args) -> int:
    removed = collect_garbage(lib, min_age_s=args.min_age)
    if args.json:
        print(json.dumps(removed, indent=2, sort_keys=True))
    else:
        print(gc_summary(removed) or "nothing to collect")
    return 0


def gc_summary(removed: dict[str, int]) -> str:
    """One line of what a collection removed ('' when nothing): also printed by ingest and graph at start-up."""
    if not removed:
        return ""
    return "garbage collected: " + ", ".join(f"{kind.replace('_', ' ')} {n}" for kind, n in sorted(removed.items()))


def collect_at_start(lib: Library) -> None:
    """What the ingest and graph commands run first: orphans an older version or a crash left are removed."""
    summary = gc_summary(collect_garbage(lib))
    if summary:
        print(summary)
