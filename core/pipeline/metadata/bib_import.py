"""A .bib file (Zotero or Better BibTeX exports included) into the library: each entry whose `file` field names a
PDF inside the given folder is added as a document with the entry's metadata (source "bibtex": kept through
re-parses, as a hand correction is); every other entry becomes a metadata-only entry (id "bib:…"). Nothing
outside the folder is read: an absolute path elsewhere, a `..`, a symbolic link anywhere on the way, or a file that
is not a regular PDF is skipped and the report says why. Huge fields are cut (said), LaTeX is read as text. The
record path (report, safe paths, storing) is metadata/imports.py, shared with the CSL-JSON and Zotero imports."""
from __future__ import annotations

import re
from pathlib import Path

import bibtexparser

from core.library import Library
from core.pipeline.metadata.imports import MAX_ENTRIES, MAX_IMPORT_BYTES, ImportReport, add_record
from core.schema.metadata import BIBTEX
from core.text.latex import latex_to_text


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


def read_import_file(path: Path) -> tuple[str, list[str]]:
    """The text of a .bib or CSL-JSON file (at most MAX_IMPORT_BYTES), and a note when it was not valid UTF-8."""
    size = path.stat().st_size
    if size > MAX_IMPORT_BYTES:
        raise ValueError(f"{path.name} is {size / 2**20:.0f} MB; a file of at most {MAX_IMPORT_BYTES // 2**20} MB is "
                         "read")
    raw = path.read_bytes()
    text = raw.decode("utf-8", errors="replace")
    if "\ufffd" in text and b"\xef\xbf\xbd" not in raw:
        return text, [f"{path.name} is not valid UTF-8: undecodable bytes were replaced"]
    return text, []


def import_bibtex(lib: Library, bib: Path, folder: Path | None = None) -> ImportReport:
    """Add the .bib's PDFs (queued for the ingest) and entries; see the module's docstring. Raises ValueError for a
    file that cannot be a .bib at all (too large). The whole file is parsed before anything is written."""
    report = ImportReport()
    text, report.notes = read_import_file(bib)
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
        add_record(lib, entry.key, entry_metadata(fields), file_paths(fields.get("file", "")), root, report, BIBTEX)
    return report


def import_bibliography(lib: Library, path: Path, folder: Path | None = None) -> ImportReport:
    """`core import-bib`: a CSL-JSON file (.json) or a .bib (anything else)."""
    if path.suffix.lower() == ".json":
        from core.pipeline.metadata.csl_import import import_csl  # it reads files with this module's reader

        return import_csl(lib, path)
    return import_bibtex(lib, path, folder)
