"""`python -m core results …`: the numbers the papers' tables report, as leaderboards across the library (the
Results page's, through core.service.results). show (default): filters and a format; datasets | metrics | methods:
the names with counts; rebuild [ID…]: read the records again from the stored parses (workspaces ingested before
results were read)."""
from __future__ import annotations

import sys

from core.cli.common import resolve_ids, say
from core.library import Library
from core.service import results as service
from core.service.errors import ServiceError
from core.service.records import ResultsView
from core.service.results_export import export

FORMATS = ("table", "csv", "json", "markdown", "latex")


def add_parser(sub) -> None:
    p = sub.add_parser("results", help="leaderboards of the results the papers' tables report: [show] with filters "
                                       "| datasets | metrics | methods | rebuild [ID…]")
    p.add_argument("action", nargs="?", default="show", choices=["show", "datasets", "metrics", "methods", "rebuild"])
    p.add_argument("ids", nargs="*", help="rebuild: document id prefixes (default: every ready paper)")
    p.add_argument("--dataset", help="a dataset as papers print it (case, spaces and punctuation aside)")
    p.add_argument("--metric", help="a metric, e.g. F1, Accuracy, MAP")
    p.add_argument("--method", help="a method, model or system")
    p.add_argument("--paper", help="a paper: an id prefix or words of its title")
    p.add_argument("--year", help="a year (2020) or a range (2018-2020)")
    p.add_argument("--setting", help="a split or setting as printed: test, dev, zero-shot…")
    p.add_argument("--query", help="words to find in the names, setting, table label or caption")
    p.add_argument("--limit", type=int, default=100, help="rows per leaderboard (default 100)")
    p.add_argument("--format", choices=FORMATS, default="table")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_results)


def cmd_results(lib: Library, args) -> int:
    try:
        if args.action == "rebuild":
            return _rebuild(lib, args)
        if args.action in ("datasets", "metrics", "methods"):
            for name in service.names(lib, args.action[:-1], dataset=args.dataset):
                say(f"{name.records:>6} records {name.papers:>4} papers  {name.name}")
            return 0
        view = service.leaderboard(lib, dataset=args.dataset, metric=args.metric, method=args.method,
                                   paper=args.paper, year=args.year, setting=args.setting, query=args.query,
                                   limit=args.limit)
    except ServiceError as exc:
        say(f"error: {exc}", file=sys.stderr)
        return 2
    if args.format != "table":
        sys.stdout.write(export(view, args.format))
        return 0
    _print_table(view)
    return 0


def _print_table(view: ResultsView) -> None:
    if not view.boards:
        say(view.note or "no results match")
        return
    for board in view.boards:
        towards = {"higher": "higher is better", "lower": "lower is better"}.get(board.direction,
                                                                                  "direction not stated")
        say(f"{board.dataset or '(dataset not named)'} — {board.metric or '(metric not named)'}  ({towards})")
        for row in board.rows:
            year = f" {row.year}" if row.year else ""
            setting = f" [{row.setting}]" if row.setting else ""
            say(f"  {row.rank:>3}. {row.method[:40]:<40} {row.value_text:>10}{setting}  "
                f"{row.paper[:50]}{year}, p. {row.page}, {row.cell}  {row.paper_id[:12]}")
        if board.more_rows:
            say(f"  … {board.more_rows} more (--limit)")
        say("")
    if view.more_boards:
        say(f"… {view.more_boards} more leaderboards: narrow with --dataset or --metric")


def _rebuild(lib: Library, args) -> int:
    from core.pipeline.result_records import rebuild_results  # the write side, only for this action

    ids = resolve_ids(lib, args.ids) if args.ids else None
    if args.ids and not ids:
        say("error: no paper matches those ids", file=sys.stderr)
        return 2
    done = rebuild_results(lib, ids, on_paper=None if args.quiet else
                           lambda doc_id, n: say(f"{doc_id[:12]} {n} results"))
    say(f"{len(done)} papers read, {sum(done.values())} results stored")
    return 0
