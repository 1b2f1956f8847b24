"""A .bib file (Zotero or Better BibTeX exports included) into the library: each entry whose `file` field names a
PDF inside the given folder is added as a document with the entry's metadata (source "bibtex": kept through
re-parses, as a hand correction is); every other entry becomes a metadata-only entry (id "bib:…"). Nothing
outside the folder is read: an absolute path elsewhere, a `..`, a symbolic link anywhere on the way, or a file that
is not a regular PDF is skipped and the report says why. Huge fields are cut (said), LaTeX is read as text."""
from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

import bibtexparser

from core.library import Library
from core.pipeline.documents import add_pdf
from core.pipeline.metadata.fields import clean_field
from core.schema.metadata import BIBTEX, ENTRY_PREFIX, FIELDS
from core.text.latex import latex_to_text

MAX_BIB_BYTES = 50 * 1024 * 1024
MAX_ENTRIES = 20_000


@dataclass
class ImportReport:
    added: list[tuple[str, str, str]] = field(default_factory=list)  # (citation key, doc id, what add_pdf said)
    entries: list[tuple[str, str]] = field(default_factory=list)  # (citation key, entry id): metadata only
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (what, why)
    notes: list[str] = field(default_factory=list)  # fields cut or cleaned


def _authors(raw: str) -> list[str]:
    names = []
    for part in re.split(r"\s+and\s+", raw.strip()):
        name = latex_to_text(part).strip()
        if "," in name:  # "Cohan, Arman" → "Arman Cohan", as the first page prints it
            family, given = (p.strip() for p in name.split(",", 1))
            name = f"{given} {family}".strip()
        if name:
            names.append(name)
    return names


def entry_metadata(fields: dict[str, str]) -> dict[str, object]:
    """An entry's fields (lower-case names, raw BibTeX values) as PaperMetadata fields (not yet cleaned)."""
    text = {k: latex_to_text(v) for k, v in fields.items() if k not in ("author", "file")}
    out: dict[str, object] = {"title": text.get("title", ""), "authors": _authors(fields.get("author", "")),
                              "venue": text.get("journal") or text.get("booktitle") or text.get("howpublished", ""),
                              "doi": text.get("doi", ""), "abstract": text.get("abstract", "")}
    year = re.search(r"\d{4}", text.get("year") or text.get("date", ""))
    out["year"] = year.group(0) if year else (text.get("year") or None)  # "MMXX": refused, and said
    prefix = (text.get("archiveprefix") or text.get("eprinttype") or "").lower()
    arxiv = text.get("eprint", "") if prefix == "arxiv" else ""
    if not arxiv and (m := re.search(r"arxiv\.org/abs/([^\s/?#]+(?:/\d{7})?)", text.get("url", ""))):
        arxiv = m.group(1)
    out["arxiv"] = arxiv
    return out


def file_paths(value: str) -> list[str]:
    """The paths a `file` field names: Zotero's "Title:path/to/x.pdf:application/pdf" (several separated by ';',
    ':' and ';' inside a path escaped with a backslash) or a plain path."""
    paths = []
    for part in re.split(r"(?<!\\);", value):
        bits = re.split(r"(?<!\\):", part.strip())
        path = ":".join(bits[1:-1]) if len(bits) >= 3 else part.strip()
        path = path.replace("\\:", ":").replace("\\;", ";").strip()
        if path:
            paths.append(path)
    return paths


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
        return None, "not a PDF (only PDFs are ingested from a .bib)"
    return current, ""


def _read(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)  # a link swapped in since the check is refused (ELOOP)
    with os.fdopen(fd, "rb") as source:
        if not stat.S_ISREG(os.fstat(source.fileno()).st_mode):
            raise OSError("not a regular file")
        return source.read()


def entry_id(key: str, title: str) -> str:
    return ENTRY_PREFIX + hashlib.sha256(f"{key}\n{title}".encode()).hexdigest()[:40]


def import_bibtex(lib: Library, bib: Path, folder: Path | None = None) -> ImportReport:
    """Add the .bib's PDFs (queued for the ingest) and entries; see the module's docstring. Raises ValueError for a
    file that cannot be a .bib at all (too large, no entry)."""
    report = ImportReport()
    size = bib.stat().st_size
    if size > MAX_BIB_BYTES:
        raise ValueError(f"{bib.name} is {size / 2**20:.0f} MB; a .bib of at most {MAX_BIB_BYTES // 2**20} MB is read")
    raw = bib.read_bytes()
    text = raw.decode("utf-8", errors="replace")
    if "\ufffd" in text and b"\xef\xbf\xbd" not in raw:
        report.notes.append(f"{bib.name} is not valid UTF-8: undecodable bytes were replaced")
    library = bibtexparser.parse_string(text)
    for block in library.failed_blocks:
        report.skipped.append((f"line {block.start_line + 1}", "not a BibTeX entry bibtexparser can read"))
    entries = library.entries
    if len(entries) > MAX_ENTRIES:
        report.skipped.append((f"{len(entries) - MAX_ENTRIES} entries", f"more than {MAX_ENTRIES:,} in one file"))
        entries = entries[:MAX_ENTRIES]
    root = (folder or bib.parent).resolve()
    for entry in entries:
        fields = {f.key.lower(): str(f.value) for f in entry.fields}
        values = {}
        for name, value in entry_metadata(fields).items():
            try:
                values[name], cut = clean_field(name, value)
            except ValueError as exc:  # a year that is no year
                report.notes.append(f"{entry.key}: {exc}; left out")
                continue
            report.notes += [f"{entry.key}: {note}" for note in cut]
        doc_id = _add_file(lib, entry.key, fields.get("file", ""), root, report)
        target = doc_id or entry_id(entry.key, str(values.get("title", "")))
        for name in FIELDS:
            if values.get(name) not in (None, "", []):
                lib.metadata.set_field(target, name, values[name], BIBTEX)
        if doc_id and values.get("title"):
            lib.documents.set_title(doc_id, str(values["title"]))  # before the parse, too
        if not doc_id:
            report.entries.append((entry.key, target))
    return report


def _add_file(lib: Library, key: str, field_value: str, root: Path, report: ImportReport) -> str:
    """The document id of the entry's first PDF that may be read, added to the library; '' when none."""
    for raw in file_paths(field_value):
        path, why = safe_pdf(root, raw)
        if path is None:
            report.skipped.append((f"{key}: {raw[:200]}", why))
            continue
        try:
            result = add_pdf(lib, path.name, _read(path))
        except (OSError, ValueError) as exc:
            report.skipped.append((f"{key}: {raw[:200]}", f"cannot be read: {exc}"))
            continue
        report.added.append((key, result.doc_id, result.message))
        return result.doc_id
    return ""
