"""`python -m core refs …`: papers' reference lists as data and the library's own citation graph. show ID (the
parsed references, those in the library marked), refresh [ID…] (parse again: papers ingested before references
were read), graph (every in-library citation with its sentences)."""
from __future__ import annotations

import json
import sys
from dataclasses import asdict

from core.cli.common import resolve_ids, say
from core.library import Library
from core.pipeline.references.resolve import refresh_references
from core.presentation.references import entry_line, reference_panel, references_bibtex


def add_parser(sub) -> None:
    p = sub.add_parser("refs", help="reference lists and the library's citation graph: show ID | refresh [ID…] | "
                                    "graph")
    p.add_argument("action", choices=["show", "refresh", "graph"])
    p.add_argument("ids", nargs="*", help="document id prefixes (show: one; refresh: default every paper)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--bibtex", action="store_true", help="show: the entries as BibTeX (authors whole where the "
                                                         "entry prints them so)")
    p.set_defaults(func=cmd_refs)


def cmd_refs(lib: Library, args) -> int:
    ids = resolve_ids(lib, args.ids) if args.ids else []
    if args.ids and not ids:
        print("error: no paper matches those ids", file=sys.stderr)
        return 2
    if args.action == "refresh":
        done = refresh_references(lib, ids or None)
        for doc_id, (entries, links) in done.items():
            say(f"{doc_id[:12]} {entries} references, {links} citation links")
        print(f"{len(done)} papers refreshed")
        return 0
    if args.action == "show":
        if len(ids) != 1:
            print("error: refs show needs one document id", file=sys.stderr)
            return 2
        return _show(lib, ids[0], args.json, args.bibtex)
    return _graph(lib, ids, args.json)


def _show(lib: Library, doc_id: str, as_json: bool, as_bibtex: bool = False) -> int:
    refs = lib.references.references(doc_id)
    if as_bibtex:
        sys.stdout.write(references_bibtex(refs))
        return 0
    if as_json:
        print(json.dumps([asdict(r) for r in refs], ensure_ascii=False, indent=2))
        return 0
    titles = lib.documents.ready_titles()
    links = lib.references.links(doc_id)
    cited = {x.ref_idx for x in links}
    for ref in refs:
        mark = f"IN LIBRARY {ref.cited_doc_id[:12]} {titles.get(ref.cited_doc_id, '')[:60]}" if ref.cited_doc_id \
            else "not in your library"
        by_llm = f"  (LLM: {', '.join(ref.llm_fields)})" if ref.llm_fields else ""
        say(f"{ref.idx:>3} {'*' if ref.idx in cited else ' '} {entry_line(ref)[:300]}  [{mark}]{by_llm}")
    resolved = sum(1 for r in refs if r.cited_doc_id)
    print(f"{len(refs)} references, {resolved} in the library; {len(links)} citation links "
          f"(* cited in the text, {len(cited)} entries)")
    return 0


def _graph(lib: Library, ids: list[str], as_json: bool) -> int:
    rows = []
    for citing in ids or [d.id for d in lib.documents.list()]:
        for c in reference_panel(lib, citing).cites:
            rows.append({"citing": citing, "cited": c.other, "cited_name": c.name, "entry": c.entry.text,
                         "sentences": [{"page": x.page + 1, "bbox": x.bbox, "marker": x.marker,
                                        "sentence": x.sentence} for x in c.links]})
    if as_json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    titles = lib.documents.ready_titles()
    for row in rows:
        say(f"{row['citing'][:12]} {titles.get(row['citing'], '')[:50]}  CITES  {row['cited'][:12]} "
            f"{row['cited_name'][:70]}")
        for s in row["sentences"] or [{"page": "-", "marker": "", "sentence": "(listed in its references; no "
                                                                              "marker found in the text)"}]:
            say(f"    p. {s['page']}  {s['marker']}  {s['sentence']}")
    print(f"{len(rows)} citations between papers of the library")
    return 0
