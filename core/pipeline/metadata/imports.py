"""What every bibliography import shares (.bib, CSL-JSON, a Zotero data folder): the report, the PDF a record names
read only from inside the import's folder, and one record added to the library — the PDF ingested with the given
metadata (kept under the import's source, through re-parses), or else a metadata-only entry (id "bib:…"). Each route
only turns its format into raw field values and candidate paths, so every route stores the same paper the same way.
Nothing outside the folder is read: an absolute path elsewhere, a `..`, a symbolic link anywhere on the way, or a
file that is not a regular PDF is skipped and the report says why."""
from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from core.library import Library
from core.pipeline.documents import add_pdf
from core.pipeline.metadata.fields import clean_field
from core.schema.metadata import ENTRY_PREFIX, FIELDS

MAX_IMPORT_BYTES = 50 * 1024 * 1024  # a .bib or CSL-JSON file
MAX_ENTRIES = 20_000
MAX_PDF_BYTES = 500 * 1024 * 1024


@dataclass
class ImportReport:
    added: list[tuple[str, str, str]] = field(default_factory=list)  # (citation key, doc id, what add_pdf said)
    entries: list[tuple[str, str]] = field(default_factory=list)  # (citation key, entry id): metadata only
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (what, why)
    notes: list[str] = field(default_factory=list)  # fields cut or cleaned

    def summary(self) -> str:
        return (f"{len(self.added)} PDFs, {len(self.entries)} metadata-only entries, {len(self.skipped)} skipped")


def safe_pdf(folder: Path, raw: str) -> tuple[Path | None, str]:
    """The PDF `raw` names inside `folder` (already resolved), or None and why not. Lexical checks first, then each
    step from the folder down, so a link anywhere on the way is refused, not followed."""
    if re.match(r"^[A-Za-z]:[\\/]|^\\\\", raw):  # C:\… or \\server\…: another machine's absolute path
        return None, "outside the folder given for the import (a Windows path)"
    path = Path(raw)
    candidate = path if path.is_absolute() else folder / path
    try:
        rel = candidate.relative_to(folder)
    except ValueError:
        return None, "outside the folder given for the import"
    if ".." in rel.parts or not rel.parts:
        return None, "outside the folder given for the import ('..')"
    current = folder
    for part in rel.parts:
        current = current / part
        try:
            mode = current.lstat().st_mode
        except FileNotFoundError:
            return None, "no such file"
        if stat.S_ISLNK(mode):
            return None, "a symbolic link: links are not followed"
    if not stat.S_ISREG(mode):
        return None, "not a regular file"
    if current.suffix.lower() != ".pdf":
        return None, "not a PDF (only PDFs are ingested from an import)"
    return current, ""


def read_pdf(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)  # a link swapped in since the check is refused (ELOOP)
    with os.fdopen(fd, "rb") as source:
        info = os.fstat(source.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError("not a regular file")
        if info.st_size > MAX_PDF_BYTES:
            raise OSError(f"{info.st_size / 2**20:.0f} MB; at most {MAX_PDF_BYTES // 2**20} MB is read")
        return source.read()


def entry_id(key: str, title: str) -> str:
    return ENTRY_PREFIX + hashlib.sha256(f"{key}\n{title}".encode()).hexdigest()[:40]


def clean_values(key: str, raw: dict[str, object], report: ImportReport) -> dict[str, object]:
    """Raw field values cleaned as a hand correction is (no control characters, cut to MAX_CHARS); each cut said."""
    values = {}
    for name, value in raw.items():
        try:
            values[name], cut = clean_field(name, value)
        except ValueError as exc:  # a year that is no year
            report.notes.append(f"{key}: {exc}; left out")
            continue
        report.notes += [f"{key}: {note}" for note in cut]
    return values


def add_record(lib: Library, key: str, raw: dict[str, object], paths: list[str], root: Path, report: ImportReport,
               source: str) -> str:
    """One bibliography record into the library: its first readable PDF among `paths` (inside `root`) as a
    document with these fields, else a metadata-only entry. Returns the id the fields were stored under."""
    values = clean_values(key, raw, report)
    doc_id = _add_file(lib, key, paths, root, report)
    if not doc_id and all(values.get(name) in (None, "", []) for name in FIELDS):
        report.skipped.append((key, "nothing to keep: no PDF, title, author or year"))
        return ""
    target = doc_id or entry_id(key, str(values.get("title", "")))
    for name in FIELDS:
        if values.get(name) not in (None, "", []):
            lib.metadata.set_field(target, name, values[name], source)
    if doc_id and values.get("title"):
        lib.documents.set_title(doc_id, str(values["title"]))  # before the parse, too
    if not doc_id:
        report.entries.append((key, target))
    return target


def _add_file(lib: Library, key: str, paths: list[str], root: Path, report: ImportReport) -> str:
    """The document id of the record's first PDF that may be read, added to the library; '' when none."""
    for raw in paths:
        path, why = safe_pdf(root, raw)
        if path is None:
            report.skipped.append((f"{key}: {raw[:200]}", why))
            continue
        try:
            result = add_pdf(lib, path.name, read_pdf(path))
        except (OSError, ValueError) as exc:
            report.skipped.append((f"{key}: {raw[:200]}", f"cannot be read: {exc}"))
            continue
        report.added.append((key, result.doc_id, result.message))
        return result.doc_id
    return ""
