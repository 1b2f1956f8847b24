"""Ingest benchmark: parse, chunk, embed and index ../shared/corpus/papers into a fresh workspace, then search.

Prints one table: pages, parse CPU-s, pages per CPU-second (parse alone and end to end, child processes
included), chunks, embedded windows per second, and search latency p50/p95 over 200 queries.
With --text N: N short text documents (HotpotQA paragraphs, ../shared/corpus/hotpotqa/corpus.jsonl) through the
product path instead (core.pipeline.documents.add_document, then core.pipeline.run.ingest_and_graph as `core
ingest`: the ingest queue with the LLM-free graph stage following it): documents per second to searchable (the
last one ready) and end to end (graph queue empty, communities refreshed), CPU-seconds, and the load average;
--profile FILE writes a cProfile of the graph stage's thread.
Usage: python bench/ingest.py [PDF_DIR] [--keep WORKSPACE] [--text N [--profile FILE]]
"""
from __future__ import annotations

import argparse
import cProfile
import json
import os
import random
import re
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core.library import open_library  # noqa: E402
from core.pipeline.documents import add_document, add_pdf  # noqa: E402
from core.pipeline.ingest import process_queue  # noqa: E402
from core.pipeline.run import ingest_and_graph  # noqa: E402
from core.query.search import search  # noqa: E402
from core.schema.records import DocStatus  # noqa: E402
from core.settings.workspace import Workspace  # noqa: E402

DEFAULT_DIR = REPO.parent / "shared" / "corpus" / "papers"
HOTPOT = REPO.parent / "shared" / "corpus" / "hotpotqa" / "corpus.jsonl"


def cpu_seconds() -> float:
    """This process's CPU and its finished children's. The compute pool's workers are alive until the process
    ends, so their CPU is not here: each document's result carries it (timings["compute_cpu_s"])."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def make_queries(lib, n: int, seed: int = 7) -> list[str]:
    """Questions a reader might type: 6–12 word spans taken from random chunks of the collection."""
    rng = random.Random(seed)
    chunks = [c for d in lib.documents.list() for c in lib.chunks.by_doc(d.id)]
    queries = []
    while len(queries) < n and chunks:
        words = re.findall(r"[A-Za-z][A-Za-z-]+", rng.choice(chunks).text)
        if len(words) < 12:
            continue
        start = rng.randrange(0, len(words) - 11)
        queries.append(" ".join(words[start:start + rng.randint(6, 12)]))
    return queries


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pdf_dir", nargs="?", default=str(DEFAULT_DIR))
    parser.add_argument("--keep", help="workspace folder to keep (default: a temporary one)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--text", type=int, default=0, help="N short text documents instead of the PDFs")
    parser.add_argument("--profile", help="with --text: write a cProfile of the graph stage to this file")
    args = parser.parse_args()
    if args.text:
        return text_documents(args)
    pdfs = sorted(Path(args.pdf_dir).glob("*.pdf"))
    if not pdfs:
        print(f"no PDFs in {args.pdf_dir}")
        return 1
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="papergraph-bench-"))
    lib = open_library(Workspace(root))

    cpu0, wall0 = cpu_seconds(), time.perf_counter()
    lib.embedder()  # one-time model load, reported on its own line
    load_cpu, load_wall = cpu_seconds() - cpu0, time.perf_counter() - wall0

    cpu1, wall1 = cpu_seconds(), time.perf_counter()
    for pdf in pdfs:
        add_pdf(lib, pdf.name, pdf.read_bytes())
    docs = process_queue(lib)
    ingest_cpu, ingest_wall = cpu_seconds() - cpu1, time.perf_counter() - wall1
    ingest_cpu += sum(d.timings.get("compute_cpu_s", 0.0) for d in docs)  # the workers' (their MinerU child too)

    ready = [d for d in docs if d.status == DocStatus.READY]
    pages = sum(d.pages for d in ready)
    parse_cpu = sum(d.timings.get("parse_cpu_s", 0.0) for d in ready)
    embed_s = sum(d.timings.get("embed_s", 0.0) for d in ready)
    windows = lib.windows.count()
    chunks = sum(d.chunk_count for d in ready)

    queries = make_queries(lib, args.queries)
    search(lib, "warm up")
    latencies = []
    for q in queries:
        t = time.perf_counter()
        search(lib, q, top_k=10)
        latencies.append((time.perf_counter() - t) * 1000)

    rows = [
        ("documents ready / total", f"{len(ready)} / {len(docs)}"),
        ("pages", f"{pages}"),
        ("parse CPU-s (incl. child processes)", f"{parse_cpu:.1f}"),
        ("parse pages per CPU-second", f"{pages / max(parse_cpu, 1e-9):.2f}"),
        ("ingest CPU-s end to end", f"{ingest_cpu:.1f}"),
        ("ingest wall-s end to end", f"{ingest_wall:.1f}"),
        ("pages per CPU-second end to end", f"{pages / max(ingest_cpu, 1e-9):.2f}"),
        ("  … counting the one-time model load", f"{pages / max(ingest_cpu + load_cpu, 1e-9):.2f}"),
        ("embedding model load (wall-s / CPU-s)", f"{load_wall:.1f} / {load_cpu:.1f}"),
        ("chunks", f"{chunks}"),
        ("embedded windows", f"{windows}"),
        ("embedded windows per second (wall)", f"{windows / max(embed_s, 1e-9):.1f}"),
        (f"search p50 / p95 over {len(latencies)} queries (ms)",
         f"{statistics.median(latencies):.1f} / {percentile(latencies, 95):.1f}" if latencies else "-"),
    ]
    width = max(len(k) for k, _ in rows)
    print(f"\nPaperGraph ingest benchmark — {len(pdfs)} PDFs from {args.pdf_dir}")
    print("-" * (width + 16))
    for key, value in rows:
        print(f"{key:<{width}}  {value:>12}")
    for d in docs:
        if d.status != DocStatus.READY:
            print(f"  {d.filename}: {d.status.value} — {d.message}")
    if not args.keep:
        print(f"(workspace {root} is temporary)")
    return 0


def load() -> str:
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


def _profile_graph_thread(profiler: cProfile.Profile) -> None:
    """cProfile the graph stage's thread (core.pipeline.run starts it): a profiler enables in its own thread only."""
    def start(*_):
        sys.setprofile(None)
        if threading.current_thread().name == "papergraph-graph":
            profiler.enable()
    threading.setprofile(start)


def text_documents(args) -> int:
    """Short text documents through the product path (core.pipeline.run.ingest_and_graph, as `core ingest`): the
    ingest queue and the graph stage following it. To searchable: until the last document became ready; end to
    end: until the graph queue is empty and communities are refreshed."""
    if not HOTPOT.exists():
        print(f"{HOTPOT} is missing")
        return 1
    with HOTPOT.open(encoding="utf-8") as f:
        rows = [json.loads(line) for _, line in zip(range(args.text), f)]
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="papergraph-bench-"))
    lib = open_library(Workspace(root))
    lib.embedder()  # one-time model load, outside the figures
    print(f"load average before: {load()}")
    profiler = cProfile.Profile() if args.profile else None
    if profiler:
        _profile_graph_thread(profiler)
    last_ready = {}

    def ready(_docs) -> None:
        last_ready.update(wall=time.perf_counter(), cpu=cpu_seconds(), load=load())

    cpu0, wall0 = cpu_seconds(), time.perf_counter()
    for r in rows:
        add_document(lib, f"{r['title'][:80]}.txt", f"{r['title']}\n\n{r['text']}\n".encode())
    run = ingest_and_graph(lib, on_ready=ready)
    wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
    if profiler:
        profiler.dump_stats(args.profile)
    docs = run.ingested
    workers_cpu = sum(d.timings.get("compute_cpu_s", 0.0) for d in docs)
    searchable_wall = last_ready.get("wall", wall0) - wall0
    searchable_cpu = last_ready.get("cpu", cpu0) - cpu0 + workers_cpu  # the graph thread's CPU so far included
    ready_n = sum(d.status == DocStatus.READY for d in docs)
    # Documents that shared a compute task or a commit each count as a share of one.
    tasks = round(sum(1 / d.timings.get("compute_batch_docs", 1) for d in docs))
    commits = round(sum(1 / d.timings.get("commit_batch_docs", 1) for d in docs))
    batches = round(sum(1 / d.timings.get("graph_batch_docs", 1) for d in run.graphed))
    n = len(rows)
    rows_out = [
        ("documents ready / graphed / total", f"{ready_n} / {len(run.graphed)} / {n}"),
        ("to searchable: wall-s / CPU-s", f"{searchable_wall:.1f} / {searchable_cpu:.1f}"),
        ("to searchable: documents per second", f"{n / max(searchable_wall, 1e-9):.1f}  "
                                                f"(load {last_ready.get('load', '-')})"),
        ("to searchable: compute tasks / commits", f"{tasks} / {commits}"),
        ("graph stage: batches", f"{batches}"),
        ("graph after the last commit: wall-s", f"{wall - searchable_wall:.1f}"),
        ("end to end: wall-s / CPU-s", f"{wall:.1f} / {cpu + workers_cpu:.1f}"),
        ("end to end: documents per second", f"{n / wall:.1f}  (load {load()})"),
        ("end to end: documents per CPU-second", f"{n / (cpu + workers_cpu):.1f}"),
        ("graph nodes / edges", " / ".join(map(str, lib.graph.counts()))),
    ]
    width = max(len(k) for k, _ in rows_out)
    print(f"\nPaperGraph short-document benchmark — {n} HotpotQA paragraphs")
    for key, value in rows_out:
        print(f"{key:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
