"""`python -m core meta …` (a paper's bibliographic metadata: show, refresh, set) and `python -m core cite` (BibTeX
or CSL-JSON of the library or of some papers). The imports are in core/cli/imports.py."""
from __future__ import annotations

import json
import sys

from core.cli.common import resolve_ids, say
from core.library import Library
from core.models.scholarly import OnlineDisabled
from core.pipeline.metadata.enrich import enrich
from core.pipeline.metadata.refresh import correct_field, refresh_metadata
from core.presentation.bibtex import to_bibtex, to_csl
from core.presentation.citations import author_year, papers_metadata
from core.schema.metadata import FIELDS


def add_parsers(sub) -> None:
    p = sub.add_parser("meta", help="papers' bibliographic metadata: show [ID…] | refresh [ID…] (extract again; "
                                    "hand corrections stay) | set ID --field F --value V (a hand correction) | "
                                    "enrich [ID…] (missing fields from Crossref / OpenAlex, when enabled in settings)")
    p.add_argument("action", choices=["show", "refresh", "set", "enrich"])
    p.add_argument("ids", nargs="*", help="document id prefixes (default: every paper; set: exactly one)")
    p.add_argument("--field", choices=list(FIELDS), help="set: the field to correct")
    p.add_argument("--value", help="set: the value ('' drops the correction); authors separated by ';'")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_meta)
    p = sub.add_parser("cite", help="BibTeX (default) or CSL-JSON of the papers named, or of every paper")
    p.add_argument("ids", nargs="*", help="document id prefixes (default: every paper)")
    p.add_argument("--format", choices=["bibtex", "csl"], default="bibtex")
    p.set_defaults(func=cmd_cite)


def cmd_meta(lib: Library, args) -> int:
    ids = resolve_ids(lib, args.ids) or None
    if args.action == "set":
        if not ids or len(ids) != 1 or args.field is None or args.value is None:
            print("error: meta set needs one document id, --field and --value", file=sys.stderr)
            return 2
        try:
            meta, notes = correct_field(lib, ids[0], args.field, args.value)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        for note in notes:
            say(f"note: {note}", file=sys.stderr)
        say(f"{ids[0][:12]} {args.field} = {_shown(meta.get(args.field))} (manual)")
        return 0
    if args.action == "enrich":
        return _enrich(lib, ids or list(lib.documents.ready_titles()))
    if args.action == "refresh":
        done = refresh_metadata(lib, ids)
        for meta in done:
            say(f"{meta.doc_id[:12]} {author_year(meta) or '-'}: {meta.title or '(no title found)'}")
        print(f"{len(done)} papers refreshed")
        return 0
    metas = papers_metadata(lib, ids)
    if args.json:
        print(json.dumps([{"id": m.doc_id, **{f: m.get(f) for f in FIELDS}, "sources": m.sources} for m in metas],
                         ensure_ascii=False, indent=2))
        return 0
    for meta in metas:
        say(meta.doc_id[:12])
        for name in FIELDS:
            if meta.has(name):
                value = _shown(meta.get(name))
                say(f"  {name:<8} {value[:200] + ('…' if len(value) > 200 else '')}  "
                    f"[{meta.sources.get(name, 'document title')}]")
    return 0


def _enrich(lib: Library, ids: list[str]) -> int:
    try:
        reports = enrich(lib, ids)
    except OnlineDisabled as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for report in reports:
        filled = ", ".join(f"{name} ({source})" for name, source in report.filled.items()) or "nothing filled"
        say(f"{report.doc_id[:12]} {filled}" + "".join(f"; {note}" for note in report.notes))
    print(f"{sum(bool(r.filled) for r in reports)} of {len(reports)} papers enriched")
    return 0


def _shown(value) -> str:
    return "; ".join(value) if isinstance(value, list) else "" if value is None else str(value)


def cmd_cite(lib: Library, args) -> int:
    metas = papers_metadata(lib, resolve_ids(lib, args.ids) or None)
    if not metas:
        print("no papers to cite", file=sys.stderr)
        return 1
    # Written as is: the BibTeX fields are escaped for LaTeX and free of control characters (latex_escape), the
    # CSL is JSON-escaped; for_terminal would break the lines of a multi-line .bib.
    sys.stdout.write(to_bibtex(metas) if args.format == "bibtex" else to_csl(metas))
    return 0
