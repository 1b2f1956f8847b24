"""`python -m core …`: batch work on a workspace through the same code paths as the pages."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from core.documents import add_mineru_output, add_pdf, delete_document, retry_document
from core.ingest import TIME_LEFT_MARK, process_queue, recover
from core.library import Library, open_library
from core.search import SearchFilters, search


def _inputs(paths: list[str]) -> list[Path]:
    out = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir() and not any(path.rglob("*content_list.json")):
            out.extend(sorted(p for p in path.rglob("*") if p.suffix.lower() == ".pdf"))
        else:
            out.append(path)
    return out


def _is_mineru_output(path: Path) -> bool:
    return (path.is_dir() and any(path.rglob("*content_list.json"))) or path.suffix.lower() == ".zip"


def cmd_ingest(lib: Library, args) -> int:
    recover(lib)
    for path in _inputs(args.paths):
        if not path.exists():
            print(f"{path}: no such file", file=sys.stderr)
            continue
        result = add_mineru_output(lib, path) if _is_mineru_output(path) else add_pdf(lib, path.name,
                                                                                      path.read_bytes())
        print(f"{result.outcome:9} {result.doc_id[:12]}  {result.filename}: {result.message}")

    last = {}

    def progress(doc_id: str, detail: str, fraction: float) -> None:
        stage = detail.split(TIME_LEFT_MARK)[0]  # the estimate changes every second; the stage does not
        if last.get(doc_id) != stage and not args.quiet:
            last[doc_id] = stage
            print(f"  {doc_id[:12]} {fraction:4.0%} {detail}", file=sys.stderr)

    failed = 0
    for doc in process_queue(lib, on_progress=progress):
        print(f"{doc.status.value:9} {doc.id[:12]}  {doc.display_title}: {doc.message}")
        failed += doc.status.value == "failed"
    return 1 if failed else 0


def cmd_search(lib: Library, args) -> int:
    filters = SearchFilters(doc_ids=_resolve_ids(lib, args.paper), kinds=args.kind or [],
                            sections=args.section or [])
    hits = search(lib, args.query, top_k=args.top_k, filters=filters)
    if args.json:
        print(json.dumps([{**asdict(h), "chunk": asdict(h.chunk)} for h in hits], indent=2))
        return 0
    for rank, hit in enumerate(hits, 1):
        print(f"{rank:2}. {hit.score:.3f}  {hit.doc_title} — p. {hit.page + 1} — {hit.chunk.section or '(no section)'}"
              f" [{hit.chunk.kind}]")
        print(f"    {' '.join(hit.window_text.split())[:300]}")
    if not hits:
        print("no results (is anything ready? see `python -m core docs`)")
    return 0


def cmd_docs(lib: Library, args) -> int:
    docs = lib.documents.list()
    if args.json:
        print(json.dumps([{**asdict(d), "status": d.status.value} for d in docs], indent=2))
        return 0
    for doc in docs:
        print(f"{doc.id[:12]}  {doc.status.value:9} {doc.pages:4}p  {doc.backend or '-':18} "
              f"{doc.display_title[:60]} — {doc.message}")
    if not docs:
        print("the library is empty")
    return 0


def _resolve_ids(lib: Library, prefixes: list[str] | None) -> list[str]:
    ids = []
    for prefix in prefixes or []:
        matches = [d.id for d in lib.documents.list() if d.id.startswith(prefix)]
        if len(matches) != 1:
            raise SystemExit(f"{prefix!r} matches {len(matches)} documents; give more of the id")
        ids.extend(matches)
    return ids


def cmd_delete(lib: Library, args) -> int:
    for doc_id in _resolve_ids(lib, args.ids):
        delete_document(lib, doc_id)
        print(f"deleted {doc_id[:12]}")
    return 0


def cmd_retry(lib: Library, args) -> int:
    for doc_id in _resolve_ids(lib, args.ids):
        retry_document(lib, doc_id)
    return cmd_ingest(lib, argparse.Namespace(paths=[], quiet=args.quiet))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core", description="PaperGraph command line")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("ingest", help="add PDFs (files or folders) or MinerU output folders/zips, then index them")
    p.add_argument("paths", nargs="+")
    p.add_argument("-q", "--quiet", action="store_true", help="no per-stage progress")
    p.set_defaults(func=cmd_ingest)
    p = sub.add_parser("search", help="semantic search over ready documents")
    p.add_argument("query")
    p.add_argument("-k", "--top-k", type=int, default=5)
    p.add_argument("--paper", action="append", help="document id (or prefix); repeatable")
    p.add_argument("--kind", action="append", choices=["text", "table", "image", "equation"])
    p.add_argument("--section", action="append", help="exact section heading; repeatable")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_search)
    p = sub.add_parser("docs", help="one line per document with its status and message")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_docs)
    p = sub.add_parser("delete", help="delete documents and everything derived from them")
    p.add_argument("ids", nargs="+")
    p.set_defaults(func=cmd_delete)
    p = sub.add_parser("retry", help="queue failed documents again and process them")
    p.add_argument("ids", nargs="+")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_retry)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    lib = open_library()
    return args.func(lib, args)
