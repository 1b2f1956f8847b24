"""A Zotero data folder (zotero.sqlite + storage/) into the library, read-only, without Zotero and without network.

The database is read whole from a copy (core/store/sqlite_zotero.py, reached through core.library) before anything
is written: a locked-while-writing, damaged or foreign database raises ZoteroUnreadable and nothing is imported.
Each regular item becomes the same record a .bib export of it gives (metadata/imports.add_record, source "zotero"):
title, authors (the primary creators, in order), year (from Zotero's date), venue (publication, proceedings or
book title), DOI, arXiv id (archive id, Extra or URL), abstract; its first PDF that may be read is ingested with
them, else it is a metadata-only entry. Files are read from inside the folder only: an imported attachment is
storage/<its key>/<file>, a linked file only when its absolute path lies inside the folder; `..`, links and other
places are skipped with why. Notes, annotations and items in the trash are skipped and counted. Zotero's fields are
plain text: LaTeX in a title stays text."""
from __future__ import annotations

import re
from pathlib import Path

from core.library import Library, ZoteroUnreadable, read_zotero_database
from core.pipeline.metadata.imports import ImportReport, add_record
from core.schema.metadata import ZOTERO
from core.schema.zotero import IMPORTED_FILE, IMPORTED_URL, LINKED_FILE, LINKED_URL, ZoteroItem, ZoteroLibrary

__all__ = ["ZoteroUnreadable", "import_zotero", "item_metadata"]

# Who a BibTeX export names as `author`: the item type's primary creator (an author, a program's programmer…).
PRIMARY_CREATORS = ("author", "programmer", "artist", "director", "presenter", "inventor", "interviewee",
                    "cartographer", "performer", "podcaster", "composer", "sponsor")
VENUE_FIELDS = ("publicationTitle", "proceedingsTitle", "bookTitle", "conferenceName")
_ARXIV = re.compile(r"(?:arxiv\.org/(?:abs|pdf)/|arxiv:\s*)([^\s/?#]+(?:/\d{7})?)", re.I)


def _extra(item: ZoteroItem, name: str) -> str:
    """A "Name: value" line of the Extra field (where Zotero and Better BibTeX keep what has no field)."""
    for line in item.fields.get("extra", "").splitlines():
        label, sep, value = line.partition(":")
        if sep and label.strip().lower() == name.lower():
            return value.strip()
    return ""


def citation_key(item: ZoteroItem) -> str:
    return item.fields.get("citationKey") or _extra(item, "Citation Key") or item.key


def item_metadata(item: ZoteroItem) -> dict[str, object]:
    """A regular item's fields as PaperMetadata fields (not yet cleaned); {} for a standalone attachment (its title
    is a file name: the paper's own first page names it better)."""
    if item.item_type == "attachment":
        return {}
    f = item.fields
    authors = [last if mode == 1 else f"{first} {last}".strip()
               for kind, first, last, mode in item.creators if kind in PRIMARY_CREATORS]
    year = re.search(r"\d{4}", f.get("date", ""))
    arxiv = ""
    for text in (f.get("archiveID", ""), _extra(item, "arXiv") and f"arXiv:{_extra(item, 'arXiv')}", f.get("url", "")):
        if text and (m := _ARXIV.search(text)):
            arxiv = m.group(1)
            break
    return {"title": f.get("title") or f.get("caseName") or f.get("nameOfAct") or f.get("subject", ""),
            "authors": [a for a in authors if a],
            "year": year.group(0) if year else (f.get("date") or None),  # "MMXX": refused, and said
            "venue": next((f[k] for k in VENUE_FIELDS if f.get(k)), ""),
            "doi": f.get("DOI") or _extra(item, "DOI"), "arxiv": arxiv, "abstract": f.get("abstractNote", "")}


def attachment_paths(item: ZoteroItem, root: Path, report: ImportReport, label: str) -> list[str]:
    """The files an item's attachments name, relative to the data folder or absolute, PDFs first; what cannot be a
    file inside the folder is reported as skipped."""
    paths = []
    for att in sorted(item.attachments, key=lambda a: a.content_type != "application/pdf"):
        what = f"{label}: {att.path[:200] or att.key}"
        if att.deleted:
            report.skipped.append((what, "the attachment is in Zotero's trash"))
        elif att.link_mode in (IMPORTED_FILE, IMPORTED_URL) and att.path.startswith("storage:"):
            paths.append(f"storage/{att.key}/{att.path[len('storage:'):]}")
        elif att.link_mode == LINKED_FILE and att.path.startswith("attachments:"):
            report.skipped.append((what, "a linked file relative to Zotero's base directory, which is not in the "
                                         "data folder (only files inside the folder are read)"))
        elif att.link_mode == LINKED_FILE:
            paths.append(att.path)  # read only when it lies inside the folder (imports.safe_pdf)
        elif att.link_mode == LINKED_URL:
            report.skipped.append((what, "a link to a web page, not a file"))
        else:
            report.skipped.append((what, f"an attachment Zotero keeps in a way this import does not read "
                                         f"(link mode {att.link_mode})"))
    return paths


def collection_ids(data: ZoteroLibrary, name: str) -> set[int]:
    """The collections named `name` (any case) and every collection under them. Raises ValueError if none."""
    wanted = {cid for cid, (cname, _) in data.collections.items() if cname.casefold() == name.casefold()}
    if not wanted:
        names = sorted({cname for cname, _ in data.collections.values()})
        raise ValueError(f"no collection named {name!r} in this Zotero library"
                         + (f"; it has: {', '.join(names[:20])}" + (" …" if len(names) > 20 else "") if names
                            else "; it has no collections"))
    grew = True
    while grew:
        below = {cid for cid, (_, parent) in data.collections.items() if parent in wanted} - wanted
        wanted |= below
        grew = bool(below)
    return wanted


def import_zotero(lib: Library, folder: Path, collection: str | None = None) -> ImportReport:
    """Add the data folder's papers (PDFs queued for the ingest) and metadata-only entries; see the module's
    docstring. Raises ZoteroUnreadable (a ValueError) or ValueError (no such collection) before writing anything."""
    root = Path(folder).resolve()  # the folder as the person named it; nothing below it is followed
    if root.name == "zotero.sqlite" and root.is_file():  # the database named instead of its folder
        root = root.parent
    data = read_zotero_database(root / "zotero.sqlite")
    chosen = collection_ids(data, collection) if collection else None
    report = ImportReport()
    if data.locked:
        report.notes.append("zotero.sqlite is locked by another program (Zotero is running): read from a copy taken "
                            "now; what Zotero saves after this comes with the next import")
    outside = 0
    for item in data.items:
        if chosen is not None and not item.collections & chosen:
            outside += 1
            continue
        key = citation_key(item)
        label = f"{key} ({item.fields.get('title', '')[:60]})" if item.fields.get("title") else key
        if item.deleted:
            report.skipped.append((label, "in Zotero's trash"))
            continue
        paths = attachment_paths(item, root, report, key)
        add_record(lib, key, item_metadata(item), paths, root, report, ZOTERO)
    for kind, count in sorted(data.not_papers.items()):
        report.skipped.append((f"{count} {kind}{'s' if count > 1 else ''}", "not papers: Zotero notes, "
                                                                            "annotations and feed items are not "
                                                                            "imported"))
    if outside:
        report.notes.append(f"{outside} item(s) outside the collection {collection!r} were left alone")
    return report
