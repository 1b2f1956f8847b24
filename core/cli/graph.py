"""The entity graph: stats, export, build, retry, communities, duplicates, merge."""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from core.cli.common import progress_printer, resolve_ids, say
from core.cli.documents import build_graph
from core.cli.gc import collect_at_start
from core.library import Library
from core.pipeline.graph.stage import retry_graph


def cmd_graph(lib: Library, args) -> int:
    from core.graph.stats import graph_stats

    if args.action == "stats":
        stats = graph_stats(lib, top=args.top)
        if args.json:
            print(json.dumps(asdict(stats), indent=2))
            return 0
        print(f"nodes {stats.nodes} ({stats.entities} entities, {stats.papers} papers); edges {stats.edges} "
              f"({stats.relations} relations, {stats.mentions} MENTIONED_IN); communities {stats.communities}")
        say("entity types: " + ", ".join(f"{t} {n}" for t, n in stats.entity_types.items()))
        say("papers by extractor: " + (", ".join(f"{e} {n}" for e, n in stats.extractors.items()) or "none"))
        for name, type_, degree in stats.top_entities:
            say(f"  {degree:5}  {name} ({type_})")
        if stats.pending_changes:
            print(f"{stats.pending_changes} changes not yet merged: run `python -m core graph build`")
        from core.models.llm.cache import usage_summary
        from core.presentation.display import llm_usage_text

        print(llm_usage_text(usage_summary(lib.llm_cache)))
        return 0
    if args.action == "export":
        from core.presentation.graph.export import export_graph, export_view_html

        if not args.out:
            raise SystemExit("graph export needs --out FILE")
        written = (export_view_html(lib, Path(args.out)) if args.format == "html"
                   else export_graph(lib.graph, args.format, Path(args.out)))
        for path in written:
            say(f"wrote {path}")
        return 0
    if args.action in ("build", "retry"):
        collect_at_start(lib)
    if args.action == "build":
        return 1 if build_graph(lib, None if args.quiet else progress_printer()) else 0
    if args.action == "retry":
        ids = resolve_ids(lib, args.ids) or [None]
        for doc_id in ids:
            retry_graph(lib, doc_id, reextract=args.reextract)
        return 1 if build_graph(lib, None if args.quiet else progress_printer()) else 0
    if args.action == "communities":
        from core.graph.communities.index import refresh_communities

        timings = refresh_communities(lib, force=True)
        print(f"communities refreshed: {json.dumps(timings)}")
        for report in lib.graph_sources.community_reports()[:args.top]:
            say(f"  #{report['community']} ({report['size']} entities) {report['title']}")
        return 0
    if args.action == "duplicates":
        from core.pipeline.graph.duplicates import suggest_duplicates

        for s in suggest_duplicates(lib, threshold=args.threshold, limit=args.top):
            say(f"{s.similarity:.3f}  {s.merge_name!r} → {s.keep_name!r}")
        return 0
    if args.action == "merge":
        from core.pipeline.graph.duplicates import merge_entities

        if len(args.ids) < 2:
            raise SystemExit("graph merge needs the entity to keep and at least one to merge into it")
        say(f"merged into {merge_entities(lib, args.ids[1:], into=args.ids[0])!r}")
        return 0
    raise SystemExit(f"unknown graph action {args.action!r}")
