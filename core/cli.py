"""`python -m core …`: batch work on a workspace through the same code paths as the pages."""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import asdict
from pathlib import Path

from core.library import Library, open_library
from core.pipeline.documents import add_mineru_output, add_pdf, delete_document, retry_document
from core.pipeline.graph.stage import process_graph_queue, recover_graph, retry_graph
from core.pipeline.ingest import process_queue, recover
from core.pipeline.status import TIME_LEFT_MARK
from core.query.search import SearchFilters, search


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

    progress = None if args.quiet else _progress_printer()
    failed = 0
    for doc in process_queue(lib, on_progress=progress):
        print(f"{doc.status.value:9} {doc.id[:12]}  {doc.display_title}: {doc.message}")
        failed += doc.status.value == "failed"
    if not args.no_graph:
        failed += _build_graph(lib, progress)
    return 1 if failed else 0


def _build_graph(lib: Library, progress) -> int:
    recover_graph(lib)
    failed = 0
    for doc in process_graph_queue(lib, on_progress=progress):
        print(f"graph {doc.graph_status:7} {doc.id[:12]}  {doc.display_title}: {doc.graph_message}")
        failed += doc.graph_status == "failed"
    return failed


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


def cmd_ask(lib: Library, args) -> int:
    from core.query.engine import QueryError, ask
    from core.query.records import QueryParams
    from core.query.report import dumps, result_text

    try:
        params = QueryParams.from_config(lib.settings.query, mode=args.mode, top_k=args.top_k,
                                         chunk_top_k=args.chunk_top_k, context_only=args.context_only,
                                         rerank=False if args.no_rerank else None,
                                         use_llm=False if args.no_llm else None,
                                         doc_ids=_resolve_ids(lib, args.paper) or None)
        streamed = []
        on_token = None if args.json or args.context_only else streamed.append
        result = ask(lib, args.question, params, on_token=on_token)
    except (QueryError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(dumps(result) if args.json else result_text(result))
    return 0


def cmd_eval(lib: Library, args) -> int:
    from core.eval.questions import QuestionSetError, parse_question_set
    from core.eval.report import dumps, run_json, summary_markdown
    from core.eval.runner import EvalOptions, Progress, run_eval, summarise
    from core.store.sqlite_eval import EvalStore

    path = Path(args.questions)
    try:
        questions = parse_question_set(path.read_bytes(), path.name)
    except OSError as exc:
        print(f"error: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    except QuestionSetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        for row_error in exc.errors:
            print(f"  {row_error}", file=sys.stderr)
        return 2
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    from core.query.records import ALL_MODES

    unknown = [m for m in modes if m not in ALL_MODES]
    if unknown or not modes:
        print(f"error: unknown mode(s) {', '.join(unknown) or '(none)'}: choose from {', '.join(ALL_MODES)}",
              file=sys.stderr)
        return 2
    if not any(d.status.value == "ready" for d in lib.documents.list()):
        print("error: no paper is ready in this workspace: ingest some first (python -m core ingest …)",
              file=sys.stderr)
        return 2
    options = EvalOptions(modes=modes, k=args.k, use_llm=not args.no_llm, ragas=not args.no_ragas,
                          ragas_judge=not args.no_judge, rerank=False if args.no_rerank else None,
                          limit=args.limit or 0, answer_style=args.answer_style)
    try:
        options.check()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    store = EvalStore(lib.db)
    qset = store.save_set(args.name or path.stem, questions, source=path.name)

    def progress(p: Progress) -> None:
        if not args.quiet:
            eta = f", about {p.eta_s:.0f} s left" if p.eta_s is not None else ""
            print(f"\r[{p.fraction:4.0%}] {p.message}{eta}   ", end="", file=sys.stderr, flush=True)

    def started(run) -> None:
        if not args.quiet:
            print(f"run {run.id}: {len(questions)} questions × {len(modes)} modes "
                  f"(cancel from the Evaluate page, or Ctrl-C)", file=sys.stderr)

    try:
        outcome = run_eval(lib, qset, options, on_progress=progress, on_start=started, label=args.label or "")
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted: the questions finished so far are saved; resume from the Evaluate page",
              file=sys.stderr)
        return 130
    if not args.quiet:
        print(file=sys.stderr)
    if outcome.judge_note:
        print(f"note: {outcome.judge_note}", file=sys.stderr)
    print(summary_markdown(summarise(outcome.results)))
    if args.out:
        Path(args.out).write_text(dumps(run_json(store, outcome.run)), encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
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
    return cmd_ingest(lib, argparse.Namespace(paths=[], quiet=args.quiet, no_graph=False))


def cmd_graph(lib: Library, args) -> int:
    from core.pipeline.graph.stats import graph_stats

    if args.action == "stats":
        stats = graph_stats(lib, top=args.top)
        if args.json:
            print(json.dumps(asdict(stats), indent=2))
            return 0
        print(f"nodes {stats.nodes} ({stats.entities} entities, {stats.papers} papers); edges {stats.edges} "
              f"({stats.relations} relations, {stats.mentions} MENTIONED_IN); communities {stats.communities}")
        print("entity types: " + ", ".join(f"{t} {n}" for t, n in stats.entity_types.items()))
        print("papers by extractor: " + (", ".join(f"{e} {n}" for e, n in stats.extractors.items()) or "none"))
        for name, type_, degree in stats.top_entities:
            print(f"  {degree:5}  {name} ({type_})")
        if stats.pending_changes:
            print(f"{stats.pending_changes} changes not yet merged: run `python -m core graph build`")
        from core.models.llm.cache import usage_summary
        from core.presentation.display import llm_usage_text

        print(llm_usage_text(usage_summary(lib.db)))
        return 0
    if args.action == "export":
        from core.presentation.graph.export import export_graph, export_view_html

        if not args.out:
            raise SystemExit("graph export needs --out FILE")
        written = (export_view_html(lib, Path(args.out)) if args.format == "html"
                   else export_graph(lib.graph, args.format, Path(args.out)))
        for path in written:
            print(f"wrote {path}")
        return 0
    if args.action == "build":
        return 1 if _build_graph(lib, None if args.quiet else _progress_printer()) else 0
    if args.action == "retry":
        ids = _resolve_ids(lib, args.ids) or [None]
        for doc_id in ids:
            retry_graph(lib, doc_id)
        return 1 if _build_graph(lib, None if args.quiet else _progress_printer()) else 0
    if args.action == "communities":
        from core.pipeline.graph.communities_index import refresh_communities

        timings = refresh_communities(lib, force=True)
        print(f"communities refreshed: {json.dumps(timings)}")
        for report in lib.graph_sources.community_reports()[:args.top]:
            print(f"  #{report['community']} ({report['size']} entities) {report['title']}")
        return 0
    if args.action == "duplicates":
        from core.pipeline.graph.duplicates import suggest_duplicates

        for s in suggest_duplicates(lib, threshold=args.threshold, limit=args.top):
            print(f"{s.similarity:.3f}  {s.merge_name!r} → {s.keep_name!r}")
        return 0
    if args.action == "merge":
        from core.pipeline.graph.duplicates import merge_entities

        if len(args.ids) < 2:
            raise SystemExit("graph merge needs the entity to keep and at least one to merge into it")
        print(f"merged into {merge_entities(lib, args.ids[1:], into=args.ids[0])!r}")
        return 0
    raise SystemExit(f"unknown graph action {args.action!r}")


def _progress_printer(every_s: float = 5.0):
    """Prints a document's progress when its stage changes, and otherwise at most every few seconds: counts
    ("chunk 12/40") and time-left estimates change all the time."""
    last: dict[str, tuple[str, float]] = {}

    def progress(doc_id: str, detail: str, fraction: float) -> None:
        stage = re.sub(r"\d+", "#", detail.split(TIME_LEFT_MARK)[0])
        previous, when = last.get(doc_id, ("", 0.0))
        now = time.monotonic()
        if stage != previous or now - when >= every_s:
            last[doc_id] = (stage, now)
            print(f"  {doc_id[:12]} {fraction:4.0%} {detail}", file=sys.stderr)

    return progress


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core", description="PaperGraph command line")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("ingest", help="add PDFs (files or folders) or MinerU output folders/zips, then index them")
    p.add_argument("paths", nargs="+")
    p.add_argument("-q", "--quiet", action="store_true", help="no per-stage progress")
    p.add_argument("--no-graph", action="store_true", help="parse and index only; build the graph later")
    p.set_defaults(func=cmd_ingest)
    p = sub.add_parser("search", help="semantic search over ready documents")
    p.add_argument("query")
    p.add_argument("-k", "--top-k", type=int, default=5)
    p.add_argument("--paper", action="append", help="document id (or prefix); repeatable")
    p.add_argument("--kind", action="append", choices=["text", "table", "image", "equation"])
    p.add_argument("--section", action="append", help="exact section heading; repeatable")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_search)
    p = sub.add_parser("ask", help="ask a question: retrieve (naive, local, global, hybrid, mix, community) and "
                       "answer with citations")
    p.add_argument("question")
    p.add_argument("--mode", default=None, help="naive | local | global | hybrid | mix | community (default: settings)")
    p.add_argument("--top-k", type=int, default=None, dest="top_k", help="entities / relations from the graph")
    p.add_argument("--chunk-top-k", type=int, default=None, dest="chunk_top_k", help="passages kept")
    p.add_argument("--context-only", action="store_true", help="print the assembled context, do not answer")
    p.add_argument("--no-rerank", action="store_true")
    p.add_argument("--no-llm", action="store_true", help="the LLM-free path even when an LLM is configured")
    p.add_argument("--paper", action="append", help="restrict to a paper (document id prefix); repeatable")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_ask)
    p = sub.add_parser("eval", help="score retrieval modes on a question set (JSONL, JSON or CSV): EM, F1, "
                                    "Recall@K, MRR, NDCG, evidence-in-context, RAGAS")
    p.add_argument("questions", help="question set: question, answers, evidence, doc_id, id per row")
    p.add_argument("--modes", default="naive,local,global,hybrid,mix", help="comma-separated")
    p.add_argument("--out", help="write the run (summary, every question's answers and scores) as JSON")
    p.add_argument("--k", type=int, default=10, help="K of Recall@K, complete@K and NDCG@K (Recall@5 too)")
    p.add_argument("--limit", type=int, help="only the first N questions")
    p.add_argument("--name", help="name the question set is kept under (default: the file's name)")
    p.add_argument("--label", help="a label for the run on the leaderboard")
    p.add_argument("--no-llm", action="store_true", help="extractive answers even when an LLM is configured")
    p.add_argument("--no-ragas", action="store_true", help="skip RAGAS's non-LLM metrics")
    p.add_argument("--no-judge", action="store_true", help="skip RAGAS's LLM-judged metrics")
    p.add_argument("--no-rerank", action="store_true")
    p.add_argument("--answer-style", choices=["paragraphs", "short"], default="paragraphs",
                   help="short: the LLM answers in a few words, what EM/F1 against short references can score")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_eval)
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
    p = sub.add_parser("graph", help="the entity graph: stats | export | build | retry | communities | duplicates "
                                     "| merge")
    p.add_argument("action", choices=["stats", "export", "build", "retry", "communities", "duplicates", "merge"])
    p.add_argument("ids", nargs="*", help="retry: document ids (default all); merge: KEEP MERGED [MERGED...]")
    p.add_argument("--format", choices=["graphml", "json", "csv", "cypher", "html"], default="graphml",
                   help="html: the Graph page's default view as a standalone page (the whole graph otherwise)")
    p.add_argument("--out", help="export: the file to write")
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--threshold", type=float, help="duplicates: cosine similarity (default from settings)")
    p.add_argument("--json", action="store_true")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_graph)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    lib = open_library()
    return args.func(lib, args)
