"""`python -m core import-bib` (a .bib with the PDFs its `file` fields name, or a CSL-JSON file) and `python -m core
import-zotero` (a Zotero data folder). Both print one report: what was added, kept as metadata only, skipped (with
why) and cut; then the added PDFs are parsed and indexed as `core ingest` does."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.cli.common import say
from core.cli.documents import cmd_ingest
from core.library import Library
from core.pipeline.metadata.bib_import import import_bibliography
from core.pipeline.metadata.imports import ImportReport
from core.pipeline.metadata.zotero_import import import_zotero


def add_parsers(sub) -> None:
    p = sub.add_parser("import-bib", help="a .bib (Zotero / Better BibTeX exports too) or a CSL-JSON file (.json): "
                                          "PDFs a .bib's `file` fields name inside the folder are ingested with the "
                                          "entry's metadata, other entries kept as metadata only; what is skipped "
                                          "is said, with why")
    p.add_argument("bib")
    p.add_argument("--folder", help="PDF paths must lie inside this folder (default: the .bib's folder); links and "
                                    "paths outside it are skipped")
    _common(p, cmd_import_bib)
    p = sub.add_parser("import-zotero", help="a Zotero data folder (zotero.sqlite + storage/), read-only from a copy "
                                             "of its database, without Zotero or network: the same papers a .bib "
                                             "export of it gives; what is skipped is said, with why")
    p.add_argument("folder", help="the Zotero data folder (Zotero: Settings → Advanced → Files and Folders)")
    p.add_argument("--collection", help="only the items of this collection (and the collections under it)")
    _common(p, cmd_import_zotero)


def _common(p, func) -> None:
    p.add_argument("--no-ingest", action="store_true", help="add the PDFs, parse them later (`core ingest`)")
    p.add_argument("--no-graph", action="store_true")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=func)


def cmd_import_bib(lib: Library, args) -> int:
    bib = Path(args.bib)
    try:
        report = import_bibliography(lib, bib, Path(args.folder) if args.folder else None)
    except (OSError, ValueError) as exc:
        say(f"error: {bib}: {exc}", file=sys.stderr)
        return 2
    return _finish(lib, args, report)


def cmd_import_zotero(lib: Library, args) -> int:
    folder = Path(args.folder)
    try:
        report = import_zotero(lib, folder, args.collection)
    except (OSError, ValueError) as exc:  # ZoteroUnreadable too: said before anything was imported
        say(f"error: {folder}: {exc}", file=sys.stderr)
        return 2
    return _finish(lib, args, report)


def _finish(lib: Library, args, report: ImportReport) -> int:
    for key, doc_id, message in report.added:
        say(f"pdf       {doc_id[:12]}  {key}: {message}")
    for key, entry in report.entries:
        say(f"entry     {entry[:16]}  {key}: metadata only (no PDF ingested)")
    for what, why in report.skipped:
        say(f"skipped   {what}: {why}", file=sys.stderr)
    for note in report.notes:
        say(f"note      {note}", file=sys.stderr)
    print(report.summary())
    if report.added and not args.no_ingest:  # parse and index what was added, as `core ingest` does
        return cmd_ingest(lib, argparse.Namespace(paths=[], quiet=args.quiet, no_graph=args.no_graph, backend=None,
                                                  workers=None))
    return 0
