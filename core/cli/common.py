"""What every command shares: document ids from prefixes, paths from arguments, a progress printer."""
from __future__ import annotations

import os
import re
import stat
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


def input_paths(paths: list[str], skipped: list[tuple[Path, str]] | None = None) -> list[Path]:
    """The files named, and in a folder (unless it is a MinerU output) every PDF, Markdown, text and HTML file.

    Inside a folder a symbolic link is never followed, to a file or to a folder: `d/passwd.txt -> /etc/passwd`
    would otherwise make the password file searchable, and a link to the credentials file put API keys into the
    index. Each one is added to `skipped` with the reason. A path named on the command line is taken as named
    (the person typed it), link or not."""
    out = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir() and not any(path.rglob("*content_list.json")):
            out.extend(_folder_documents(path, skipped if skipped is not None else []))
        else:
            out.append(path)
    return out


def _folder_documents(root: Path, skipped: list[tuple[Path, str]]) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        for name in sorted(dirnames):
            if (here / name).is_symlink():  # os.walk lists it but does not enter it
                skipped.append((here / name, f"a symbolic link to a folder ({os.readlink(here / name)}); links in "
                                             "a folder are not followed: name the folder itself to import it"))
        for name in filenames:
            path = here / name
            if path.suffix.lower() not in DOCUMENT_SUFFIXES:
                continue
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                skipped.append((path, f"a symbolic link (to {os.readlink(path)}); links in a folder are not "
                                      "followed: name the file itself to import it"))
            elif not stat.S_ISREG(mode):
                skipped.append((path, "not a regular file"))
            else:
                found.append(path)
    return sorted(found)


def read_regular_file(path: Path) -> bytes:
    """The bytes of `path`, refusing a symbolic link at the last step: a file found in a folder may have been
    swapped for a link since the folder was listed."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as source:
        if not stat.S_ISREG(os.fstat(source.fileno()).st_mode):
            raise ValueError("not a regular file")
        return source.read()


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
