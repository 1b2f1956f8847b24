"""Graph benchmark over ../shared/corpus/papers: prints figures, asserts nothing.

    .venv/bin/python bench/graph.py [--papers DIR] [--workspace DIR] [--skip-llm] [--skip-leiden]

1. Parse and index every paper (LLM-free graph off), as `ingest` does.
2. LLM-free graph of all papers but the last: extraction chunks/s, nodes, edges, merge time.
3. The last paper added to that workspace: its extraction time, and what persisting it costs beyond that
   (commit of contributions + merge + graph write; entity/relation embedding shown apart).
4. Communities on the real graph.
5. The same papers through the LLM extractor against a local OpenAI-protocol replay server: LLM calls per
   chunk, then again after re-extracting unchanged papers (must be 0).
6. Leiden on a generated 50k-node / 200k-edge graph.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from bench.common import cpu, row  # noqa: E402
from core.graph.stats import graph_stats  # noqa: E402
from core.library import open_library  # noqa: E402
from core.pipeline.documents import add_pdf  # noqa: E402
from core.pipeline.graph.build import clear_graph  # noqa: E402
from core.pipeline.graph.stage import process_graph_queue, retry_graph  # noqa: E402
from core.pipeline.ingest import process_queue  # noqa: E402
from core.schema.records import GraphStatus  # noqa: E402
from core.settings.workspace import Workspace  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--papers", default=str(REPO.parent / "shared" / "corpus" / "papers"))
    parser.add_argument("--workspace", help="default: a temporary folder")
    parser.add_argument("--skip-llm", action="store_true")
    parser.add_argument("--skip-leiden", action="store_true")
    args = parser.parse_args()
    pdf_paths = sorted(Path(args.papers).glob("*.pdf"))
    if len(pdf_paths) < 2:
        print(f"need at least two PDFs in {args.papers}", file=sys.stderr)
        return 2
    root = Path(args.workspace or tempfile.mkdtemp(prefix="bench-graph-"))
    ws = Workspace(root).ensure()
    lib = open_library(ws)

    print("| measure | value |\n|---|---|")
    for path in pdf_paths:
        add_pdf(lib, path.name, path.read_bytes())
    process_queue(lib)
    ready = lib.documents.ready_papers()
    # A workspace given again keeps its parse and index; its graph is built from scratch.
    clear_graph(lib)
    parse_cpu = sum(d.timings.get("parse_cpu_s", 0.0) for d in ready)
    pages = sum(d.pages for d in ready)
    row("papers ready / pages", f"{len(ready)} / {pages}")
    parse_wall = sum(d.timings.get("parse_s", 0.0) for d in ready)
    row("parse CPU-s / wall-s (MinerU, child processes included)", f"{parse_cpu:.1f} / {parse_wall:.1f}")
    lib.embedder()  # loaded once; not part of the graph stage's cost

    # 2. all papers but the last, LLM-free
    last = ready[-1]
    lib.documents.set_graph_status(last.id, GraphStatus.NONE)  # held back for step 3
    chunks_first = sum(len(lib.chunks.by_doc(d.id)) for d in ready[:-1])
    c0, t0 = cpu(), time.perf_counter()
    built = process_graph_queue(lib, communities=False)
    graph_cpu, graph_wall = cpu() - c0, time.perf_counter() - t0
    extract_s = sum(d.timings.get("graph_extract_s", 0.0) for d in built)
    merge_s = sum(d.timings.get("graph_merge_s", 0.0) + d.timings.get("graph_store_s", 0.0) for d in built)
    vectors_s = sum(d.timings.get("graph_vectors_s", 0.0) for d in built)
    row(f"LLM-free extraction, {len(built)} papers", f"{chunks_first} chunks in {extract_s:.1f} s → "
        f"**{chunks_first / max(extract_s, 1e-9):.1f} chunks/s**")
    row("merge + graph write (all papers)", f"{merge_s:.2f} s")
    row("entity + relation embedding (all papers)", f"{vectors_s:.1f} s")
    row(f"graph stage, {len(built)} papers: CPU-s / wall-s", f"{graph_cpu:.1f} / {graph_wall:.1f}")

    # 3. one more paper into the workspace
    lib.documents.set_graph_status(last.id, GraphStatus.PENDING)
    c1, t1 = cpu(), time.perf_counter()
    (doc,) = process_graph_queue(lib, communities=False)
    graph_cpu += cpu() - c1
    graph_wall += time.perf_counter() - t1
    t = doc.timings
    vector_io = t["graph_vectors_s"] - t["graph_embed_s"]
    persist = t["graph_commit_s"] + t["graph_merge_s"] + t["graph_store_s"] + vector_io
    row(f"adding paper {len(ready)} ({len(lib.chunks.by_doc(doc.id))} chunks): extraction",
        f"{t['graph_extract_s']:.2f} s")
    row("  persisting it: commit + merge + graph write + vector reads/writes",
        f"**{persist:.3f} s** (commit {t['graph_commit_s']:.3f}, merge {t['graph_merge_s']:.3f}, graph write "
        f"{t['graph_store_s']:.3f}, Chroma {vector_io:.3f})")
    row("  computing its entity + relation embeddings", f"{t['graph_embed_s']:.2f} s")
    stats = graph_stats(lib)
    row("graph (LLM-free)", f"{stats.nodes} nodes ({stats.entities} entities, {stats.papers} papers), "
        f"{stats.edges} edges ({stats.relations} relations, {stats.mentions} MENTIONED_IN)")
    row("graph stage, all 10 papers: CPU-s / wall-s", f"{graph_cpu:.1f} / {graph_wall:.1f}")
    row("graph stage vs parsing", f"CPU {graph_cpu:.1f} vs {parse_cpu:.1f} "
        f"({'within' if graph_cpu <= parse_cpu else 'OVER'}); wall {graph_wall:.1f} vs {parse_wall:.1f} "
        f"({'within' if graph_wall <= parse_wall else 'OVER'})")

    # 4. communities
    from core.graph.communities.index import refresh_communities

    timings = refresh_communities(lib, force=True)
    reports = lib.graph_sources.community_reports()
    row("communities on the real graph", f"{len(reports)} reports; Leiden {timings['leiden_s']:.2f} s, "
        f"reports {timings['reports_s']:.2f} s")

    # 5. LLM extractor through a replay server
    llm_settings_saved = False
    if not args.skip_llm:
        sys.path.insert(0, str(REPO))
        from tests.graph_papers import extraction_reply
        from tests.openai_server import OpenAIReplayServer

        with OpenAIReplayServer(default=extraction_reply, model="replay-bench") as server:
            settings = ws.settings(apply_environment=False)
            settings.llm.provider, settings.llm.base_url, settings.llm.model = "openai", server.url, server.model
            ws.save_settings(settings)
            llm_settings_saved = True
            llm_lib = open_library(ws)
            retry_graph(llm_lib)
            n_chunks = sum(len(llm_lib.chunks.by_doc(d.id)) for d in ready)
            t0 = time.perf_counter()
            process_graph_queue(llm_lib, communities=False)
            calls = len(server.chat_requests)
            row("LLM extraction (replay server)", f"{calls} calls for {n_chunks} chunks → "
                f"**{calls / n_chunks:.2f} calls per chunk** ({time.perf_counter() - t0:.1f} s)")
            retry_graph(llm_lib)
            process_graph_queue(llm_lib, communities=False)
            row("re-extracting the unchanged papers", f"**{len(server.chat_requests) - calls} LLM calls**")
            llm_stats = graph_stats(llm_lib)
            row("graph (LLM, replayed)", f"{llm_stats.nodes} nodes, {llm_stats.edges} edges")

    # 6. Leiden at scale
    if not args.skip_leiden:
        from core.graph.communities.detect import detect_communities, generate_graph

        big = generate_graph(50_000, 200_000, seed=7)
        t0 = time.perf_counter()
        assignment = detect_communities(big)
        row("Leiden, generated 50k nodes / 200k edges", f"**{time.perf_counter() - t0:.2f} s**, "
            f"{len(set(assignment.values()))} communities")
    if not args.skip_llm and llm_settings_saved:  # leave the workspace LLM-free for the next run
        settings = ws.settings(apply_environment=False)
        settings.llm.provider = "none"
        ws.save_settings(settings)
    print(f"\nworkspace: {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
