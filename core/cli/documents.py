"""Documents: ingest, search, docs, delete, retry."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from core.cli.common import input_paths, is_mineru_output, progress_printer, read_regular_file, resolve_ids, say
from core.cli.gc import collect_at_start
from core.library import Library
from core.pipeline.compute import RayUnavailable, compute_backend
from core.pipeline.compute.throughput import Throughput
from core.pipeline.documents import add_document, add_mineru_output, delete_document, retry_document
from core.pipeline.graph.stage import process_graph_queue, recover_graph
from core.pipeline.ingest import recover
from core.pipeline.parsing.budget import describe as describe_budget
from core.pipeline.run import ingest_and_graph
from core.query.search import SearchFilters, search
from core.schema.records import DocStatus, Document, GraphStatus


def cmd_ingest(lib: Library, args) -> int:
    # The full garbage collection scans every store (all windows' metadata, the whole graph): adding a paper to a
    # big workspace must not pay for it each time. It runs after an interrupted run, at the app's start-up and as
    # `python -m core gc`.
    if recover(lib):
        collect_at_start(lib)
    failed = 0
    skipped: list[tuple[Path, str]] = []
    named = {Path(raw) for raw in args.paths}
    for path in input_paths(args.paths, skipped):
        if not path.exists():
            say(f"{path}: no such file", file=sys.stderr)
            continue
        try:
            if is_mineru_output(path):
                result = add_mineru_output(lib, path)
            else:  # a file found in a folder is opened without following a link swapped in since
                data = path.read_bytes() if path in named else read_regular_file(path)
                result = add_document(lib, path.name, data)
        except ValueError as exc:  # e.g. a MinerU output folder holding a symlink: refused, nothing added
            say(f"refused   {path}: {exc}", file=sys.stderr)
            failed += 1
            continue
        except OSError as exc:  # unreadable, or a link swapped in after the folder was listed (ELOOP)
            say(f"refused   {path}: cannot read it ({exc.strerror or exc})", file=sys.stderr)
            failed += 1
            continue
        say(f"{result.outcome:9} {result.doc_id[:12]}  {result.filename}: {result.message}")
    for path, reason in skipped:
        say(f"skipped   {path}: {reason}", file=sys.stderr)

    progress = None if args.quiet else progress_printer()
    try:
        backend = compute_backend(lib.settings.compute, getattr(args, "backend", None), getattr(args, "workers", None))
    except RayUnavailable as exc:
        say(f"{exc}; the documents stay queued", file=sys.stderr)
        return 2
    say(describe_budget(lib.settings.parsing, backend.workers), file=sys.stderr)  # the cap each parse runs under
    throughput = Throughput()
    # The graph of the papers indexed first is built while the workers compute the next ones (core.pipeline.run).
    run = ingest_and_graph(lib, graph=not args.no_graph, on_progress=progress, on_deleted=_report_deleted,
                           backend=backend, throughput=throughput)
    for doc in run.ingested:
        say(f"{doc.status.value:9} {doc.id[:12]}  {doc.display_title}: {doc.message}")
        failed += doc.status == DocStatus.FAILED
    if throughput.docs and not args.quiet:
        say(throughput.summary(), file=sys.stderr)
    return 1 if failed + _report_graphs(run.graphed) else 0


def _report_deleted(doc: Document) -> None:
    say(f"{'deleted':9} {doc.id[:12]}  {doc.display_title}: deleted while being indexed")


def build_graph(lib: Library, progress) -> int:
    recover_graph(lib)
    return _report_graphs(process_graph_queue(lib, on_progress=progress))


def _report_graphs(docs: list[Document]) -> int:
    """One line per paper whose graph was built; returns how many failed."""
    for doc in docs:
        say(f"graph {doc.graph_status.value:7} {doc.id[:12]}  {doc.display_title}: {doc.graph_message}")
    return sum(doc.graph_status == GraphStatus.FAILED for doc in docs)


def cmd_search(lib: Library, args) -> int:
    filters = SearchFilters(doc_ids=resolve_ids(lib, args.paper), kinds=args.kind or [],
                            sections=args.section or [])
    hits = search(lib, args.query, top_k=args.top_k, filters=filters)
    if args.json:
        print(json.dumps([{**asdict(h), "chunk": asdict(h.chunk)} for h in hits], indent=2))
        return 0
    for rank, hit in enumerate(hits, 1):
        say(f"{rank:2}. {hit.score:.3f}  {hit.doc_title} — p. {hit.page + 1} — {hit.chunk.section or '(no section)'}"
              f" [{hit.chunk.kind}]")
        say(f"    {' '.join(hit.window_text.split())[:300]}")
    if not hits:
        print("no results (is anything ready? see `python -m core docs`)")
    return 0


def cmd_docs(lib: Library, args) -> int:
    docs = lib.documents.list()
    if args.json:
        print(json.dumps([{**asdict(d), "status": d.status.value} for d in docs], indent=2))
        return 0
    for doc in docs:
        say(f"{doc.id[:12]}  {doc.status.value:9} {doc.pages:4}p  {doc.backend or '-':18} "
              f"{doc.display_title[:60]} — {doc.message}")
    if not docs:
        print("the library is empty")
    return 0


def cmd_delete(lib: Library, args) -> int:
    for doc_id in resolve_ids(lib, args.ids):
        delete_document(lib, doc_id)
        print(f"deleted {doc_id[:12]}")
    return 0


def cmd_retry(lib: Library, args) -> int:
    for doc_id in resolve_ids(lib, args.ids):
        cap = retry_document(lib, doc_id, memory_gb=getattr(args, "memory_gb", None) or 0.0)
        if cap:  # what MinerU's child will get, said before the parse starts: lower, higher or cut by the machine
            say(f"retry     {doc_id[:12]}  {cap}", file=sys.stderr)
    return cmd_ingest(lib, argparse.Namespace(paths=[], quiet=args.quiet, no_graph=False))
