"""`python -m core …`: batch work on a workspace through the same code paths as the pages. One module per group of
commands; this one builds the parser and runs the chosen command."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from core.cli.api import add_parsers as add_api_parsers
from core.cli.arguments import undecodable_argument
from core.cli.asking import cmd_ask, cmd_eval
from core.cli.documents import cmd_delete, cmd_docs, cmd_ingest, cmd_retry, cmd_search
from core.cli.gc import cmd_gc
from core.cli.graph import cmd_graph
from core.cli.imports import add_parsers as add_import_parsers
from core.cli.papers import add_parsers as add_papers_parsers
from core.cli.reembed import cmd_reembed
from core.cli.refs import add_parser as add_refs_parser
from core.cli.results import add_parser as add_results_parser
from core.cli.settings import cmd_settings
from core.cli.users import add_parser as add_users_parser
from core.library import open_library
from core.pipeline.ingest import ORPHAN_AGE_S
from core.query.routes import default_modes
from core.schema.modes import Mode, Reader
from core.settings.config import COMPUTE_BACKENDS
from core.settings.workspace import WORKSPACE_ENV, Workspace, workspace_root

BROKEN_PIPE_EXIT = 128 + 13  # what a shell reports for a program ended by SIGPIPE (`yes | head`)
# Every other command reads or changes what an ingest made (serve takes uploads, the imports bring PDFs).
CREATES_WORKSPACE = {"ingest", "serve", "import-bib", "import-zotero"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core", description="PaperGraph command line")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("ingest", help="add PDFs, Markdown, text or HTML files (files or folders) or MinerU output "
                                     "folders/zips, then index them")
    p.add_argument("paths", nargs="+")
    p.add_argument("-q", "--quiet", action="store_true", help="no per-stage progress")
    p.add_argument("--no-graph", action="store_true", help="parse and index only; build the graph later")
    p.add_argument("--backend", choices=list(COMPUTE_BACKENDS), help="where parsing and embedding run: local "
                   "worker processes or a Ray cluster (RAY_ADDRESS, else a local Ray instance); default: settings")
    p.add_argument("--workers", type=int, help="documents computed at once, one core each (default: settings; 0: one "
                                               "per core)")
    p.set_defaults(func=cmd_ingest)
    p = sub.add_parser("search", help="semantic search over ready documents")
    p.add_argument("query")
    p.add_argument("-k", "--top-k", type=int, default=5)
    p.add_argument("--paper", action="append", help="document id (or prefix); repeatable")
    p.add_argument("--kind", action="append", choices=["text", "table", "image", "equation"])
    p.add_argument("--section", action="append", help="exact section heading; repeatable")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_search)
    p = sub.add_parser("ask", help=f"ask a question: retrieve ({', '.join(Mode)}) and answer with citations")
    p.add_argument("question")
    p.add_argument("--mode", default=None, choices=list(Mode), help="the retrieval mode (default: settings)")
    p.add_argument("--top-k", type=int, default=None, dest="top_k", help="entities / relations from the graph")
    p.add_argument("--chunk-top-k", type=int, default=None, dest="chunk_top_k", help="passages kept")
    p.add_argument("--context-only", action="store_true", help="print the assembled context, do not answer")
    p.add_argument("--no-rerank", action="store_true")
    p.add_argument("--no-llm", action="store_true", help="the LLM-free path even when an LLM is configured")
    p.add_argument("--reader", default=None, choices=[r.value for r in Reader.choosable()],
                   help="how the answer is read (default: settings): extractive, select, write or auto")
    p.add_argument("--paper", action="append", help="restrict to a paper (document id prefix); repeatable")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_ask)
    p = sub.add_parser("eval", help="score retrieval modes on a question set (JSONL, JSON or CSV): EM, F1, "
                                    "Recall@K, MRR, NDCG, evidence-in-context, RAGAS")
    p.add_argument("questions", help="question set: question, answers, evidence, doc_id, id per row")
    p.add_argument("--modes", help=f"comma-separated, of {', '.join(Mode)} (default: "
                                   f"{','.join(default_modes(list(Mode)))})")
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
    p = sub.add_parser("reembed", help="rewrite every stored vector with the configured embedding model and "
                                       "variant (needed after switching to another vector space)")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_reembed)
    p = sub.add_parser("docs", help="one line per document with its status and message")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_docs)
    p = sub.add_parser("delete", help="delete documents and everything derived from them")
    p.add_argument("ids", nargs="+")
    p.set_defaults(func=cmd_delete)
    p = sub.add_parser("gc", help="remove orphans: vectors, chunks, graph records, folders and staging files that "
                                  "no registered document owns (also run by ingest and graph build)")
    p.add_argument("--min-age", type=float, default=ORPHAN_AGE_S, dest="min_age",
                   help="seconds: younger folders and staging files may be an upload being written "
                        f"(default {ORPHAN_AGE_S:.0f})")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_gc)
    p = sub.add_parser("retry", help="queue failed documents again and process them")
    p.add_argument("ids", nargs="+")
    p.add_argument("--memory-gb", type=float, dest="memory_gb",
                   help="parse with MinerU again, every page, its child allowed this much memory (for a document "
                        "MinerU was stopped on, or less than the usual share to hold it lower; at most what the "
                        "other workers leave of 80%% of the machine: the cap given is printed, and said in the "
                        "document's message when it is not the one asked)")
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
    p.add_argument("--reextract", action="store_true",
                   help="retry: read every chunk again with the current extractor (a workspace built by an older "
                        "PaperGraph gets the current entities and the retrieval phrases)")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_graph)
    p = sub.add_parser("settings", help="the workspace's settings: show (as JSON) | presets | preset NAME (apply "
                                        "a named preset, e.g. offline, ollama, openai, and save)")
    p.add_argument("action", choices=["show", "presets", "preset"])
    p.add_argument("name", nargs="?", help="preset: the preset to apply")
    p.set_defaults(func=cmd_settings)
    add_papers_parsers(sub)
    add_import_parsers(sub)
    add_refs_parser(sub)
    add_results_parser(sub)
    add_users_parser(sub)
    add_api_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        code = _run(argv)
        sys.stdout.flush()  # here, not at exit: a reader gone by then gives a traceback outside this handler
        return code
    except BrokenPipeError:
        # `core docs | head`: the reader has gone. Python would print a traceback, then another one when it
        # flushes stdout at exit; point stdout at /dev/null and end as a program killed by SIGPIPE reports.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return BROKEN_PIPE_EXIT


def _run(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if problem := undecodable_argument(args):
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if getattr(args, "workspace", None):  # serve, mcp: --workspace instead of $PAPERGRAPH_WORKSPACE
        os.environ[WORKSPACE_ENV] = str(Path(args.workspace).expanduser().resolve())
    if before_open := getattr(args, "before_open", None):  # serve: refuses to start before creating anything
        before_open(args)
    if args.command == "users":  # the accounts file only, outside any workspace
        return args.func(args)
    if args.command == "settings":  # settings.json only: no database is opened or created for it
        workspace = Workspace(workspace_root())  # show / presets only read: a preset creates the folder
        return args.func(workspace.ensure() if args.action == "preset" else workspace, args)
    if args.command not in CREATES_WORKSPACE:
        workspace = Workspace(workspace_root())
        # Opening it would create data/ just to say it is empty. Settings alone make a workspace (a preset applied).
        if not (workspace.db_path.exists() or workspace.settings_path.exists()):
            print(f"no workspace at {workspace.root} yet: nothing has been ingested there (`python -m core ingest` "
                  f"creates it; {WORKSPACE_ENV} chooses another folder)", file=sys.stderr)
            return 0 if args.command == "docs" else 2  # as `eval` with no paper ready: nothing to work on
    lib = open_library()
    return args.func(lib, args)
