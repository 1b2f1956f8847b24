"""What every command shares: document ids from prefixes, paths from arguments, a progress printer."""
from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from core.library import Library
from core.pipeline.documents import DOCUMENT_SUFFIXES
from core.pipeline.status import TIME_LEFT_MARK
from core.text.terminal import for_terminal


def say(text: object, *, lines: bool = False, file=None, end: str = "\n") -> None:
    """print() for a line holding text from a paper, a file or an LLM reply: escape sequences and control
    characters removed (a title could otherwise retitle or clear the terminal). A newline inside such text would
    forge a line of its own, so it becomes a space unless `lines` says the text is several lines (an answer)."""
    print(for_terminal(text, one_line=not lines), file=file, end=end)


def input_paths(paths: list[str]) -> list[Path]:
    """The files named, and in a folder (unless it is a MinerU output) every PDF, Markdown, text and HTML file."""
    out = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir() and not any(path.rglob("*content_list.json")):
            out.extend(sorted(p for p in path.rglob("*") if p.suffix.lower() in DOCUMENT_SUFFIXES and p.is_file()))
        else:
            out.append(path)
    return out


def is_mineru_output(path: Path) -> bool:
    return (path.is_dir() and any(path.rglob("*content_list.json"))) or path.suffix.lower() == ".zip"


def resolve_ids(lib: Library, prefixes: list[str] | None) -> list[str]:
    ids = []
    for prefix in prefixes or []:
        matches = [d.id for d in lib.documents.list() if d.id.startswith(prefix)]
        if len(matches) != 1:
            raise SystemExit(f"{prefix!r} matches {len(matches)} documents; give more of the id")
        ids.extend(matches)
    return ids


def progress_printer(every_s: float = 5.0):
    """Prints a document's progress when its stage changes, and otherwise at most every few seconds: counts
    ("chunk 12/40") and time-left estimates change all the time."""
    last: dict[str, tuple[str, float]] = {}

    def progress(doc_id: str, detail: str, fraction: float) -> None:
        stage = re.sub(r"\d+", "#", detail.split(TIME_LEFT_MARK)[0])
        previous, when = last.get(doc_id, ("", 0.0))
        now = time.monotonic()
        if stage != previous or now - when >= every_s:
            last[doc_id] = (stage, now)
            say(f"  {doc_id[:12]} {fraction:4.0%} {detail}", file=sys.stderr)

    return progress
