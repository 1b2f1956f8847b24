"""Retrieval latency at scale, every mode, on the embedded store or a Chroma server: prints figures, asserts nothing.

    .venv/bin/python bench/scale_query.py [--workspace DIR] [--chunks 100000] [--chroma HOST:PORT]
                                          [--modes naive,ppr] [--queries 30] [--profile MODE]

A generated workspace as `bench/query.py synthetic` builds it (random unit vectors, Zipf-distributed words, a
random graph of N/2 entities and N relations), plus what that one leaves out and the current modes read: the
retrieval phrase layer (PHRASES_PER_CHUNK phrase keys per chunk in graph_phrases, read by the mention index as
"~" nodes, most of them named by a few passages as real phrases are) and community reports over the entities
(the community mode, extractive: no LLM). Then retrieval p50/p95 per mode, every mode including ppr and
community, with the first load of the mention index and the community report vectors timed apart.
The community report vectors are what a communities refresh stores (core.graph.communities.vectors): the
generated reports are written directly, so they are embedded and stored here once, timed ("report vectors"), and
the first community question in a process reads them instead of embedding 1,500 texts.
--chroma HOST:PORT reads the vectors from a `chroma run` server (the settings' Chroma server fields, for this run
only), else the workspace's embedded Chroma. To serve a generated workspace's vectors, copy its chroma/ folder and
start the server on the copy (`cp -r WS/chroma /tmp/chroma && .venv/bin/chroma run --path /tmp/chroma --port
8765`): an embedded client and a server must not open one folder together.
--profile MODE: cProfile of --queries queries of that mode, the top functions by cumulative time. A reused
workspace is not regenerated.
"""
from __future__ import annotations

import argparse
import cProfile
import itertools
import os
import pstats
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from bench.common import cpu  # noqa: E402
from bench.query import SYNTHETIC_PER_DOC, Synthetic, _mark_ready, pct, row  # noqa: E402
from core.graph.communities.vectors import report_vectors  # noqa: E402
from core.graph.mention_index import mention_index  # noqa: E402
from core.library import Library, open_library  # noqa: E402
from core.query.engine import Embeddings  # noqa: E402
from core.query.keywords import question_keywords  # noqa: E402
from core.query.records import QueryParams  # noqa: E402
from core.query.rerank import FusionReranker  # noqa: E402
from core.query.routes import route_of  # noqa: E402
from core.schema.modes import Mode  # noqa: E402
from core.schema.records import Document  # noqa: E402
from core.settings.config import Settings  # noqa: E402
from core.settings.workspace import Workspace  # noqa: E402
from core.store.sqlite_phrases import write_phrases  # noqa: E402

PER_DOC = SYNTHETIC_PER_DOC
PHRASES_PER_CHUNK = 8
DOCS_PER_BATCH = 10
COMMUNITY_SIZE = 200


def uptime() -> str:
    return os.popen("uptime").read().strip()


def open_workspace(path: str | None, chroma: str | None) -> Library:
    ws = Workspace(Path(path or tempfile.mkdtemp(prefix="bench-scale-query-"))).ensure()
    if not ws.settings_path.exists():
        ws.save_settings(Settings())
    lib = open_library(ws)
    if chroma:  # this run only: the workspace's own settings keep its embedded store
        host, _, port = chroma.partition(":")
        lib.settings.store.chroma_host, lib.settings.store.chroma_port = host, int(port)
    return lib


def store_report_vectors(lib: Library) -> None:
    """What a communities refresh does after writing the reports: their vectors stored, embedded where missing."""
    t, c = time.perf_counter(), cpu()
    report_vectors(lib, lib.graph_sources.community_reports())
    print(f"report vectors stored (embedded where missing): {time.perf_counter() - t:.1f} s, {cpu() - c:.1f} CPU-s "
          f"[{uptime()}]", flush=True)


def generate(lib: Library, n: int, rng: random.Random) -> list[str]:
    """Fill the workspace with n chunks and their graph; returns the vocabulary (questions are drawn from it)."""
    gen = Synthetic(rng, lib.embedder().dim)
    if lib.windows.count() >= n:
        return gen.vocab
    # Phrases: two-word keys; a pool of n*2 so a phrase is named by ~4 passages on average (most pass the
    # mention index's MAX_PHRASE_PASSAGES cut), with a Zipf head that does not.
    phrases = [f"{rng.choice(gen.vocab)} {rng.choice(gen.vocab)}" for _ in range(n * 2)]
    phrase_cum = list(itertools.accumulate(1 / (i + 1) ** 0.6 for i in range(len(phrases))))
    t, c0 = time.perf_counter(), cpu()
    for first in range(0, n // PER_DOC, DOCS_PER_BATCH):  # vectors written DOCS_PER_BATCH papers at a time
        batch = []
        for d in range(first, min(first + DOCS_PER_BATCH, n // PER_DOC)):
            doc_id = f"synthetic{d:06d}"
            lib.documents.insert(Document(id=doc_id, filename=f"{doc_id}.pdf", title=doc_id))
            chunks = gen.chunks(doc_id)
            lib.chunks.put_doc_chunks(doc_id, chunks)
            with lib.graph_sources.db.transaction() as conn:
                write_phrases(conn, doc_id, [(c.id, p) for c in chunks for p in
                                             rng.choices(phrases, cum_weights=phrase_cum, k=PHRASES_PER_CHUNK)])
            batch.extend(chunks)
        gen.add_windows(lib, batch)
        for doc_id in dict.fromkeys(c.doc_id for c in batch):
            _mark_ready(lib, doc_id, "synthetic", chunk_count=PER_DOC)
        if first % 100 == 0:
            print(f"  {len(batch) + first * PER_DOC} chunks ({time.perf_counter() - t:.0f} s)", file=sys.stderr,
                  flush=True)
    chunk_s = time.perf_counter() - t
    keys = gen.add_graph(lib, n)
    reports = [{"community": i, "title": f"community {i} {rng.choice(gen.vocab)}", "summary": gen.words(40),
                "rating": 5.0, "findings": [gen.words(25) for _ in range(5)],
                "entities": keys[i * COMMUNITY_SIZE:(i + 1) * COMMUNITY_SIZE]}
               for i in range(max(1, len(keys) // COMMUNITY_SIZE))]
    lib.graph_sources.put_community_reports(reports, version="synthetic")
    total = time.perf_counter() - t
    print(f"generated: {n} chunks in {chunk_s:.0f} s ({n / max(chunk_s, 1e-9):.0f} chunks/s with vectors, FTS "
          f"rows and phrases), everything in {total:.0f} s, {cpu() - c0:.0f} CPU-s [{uptime()}]")
    return gen.vocab


def retrieve(lib: Library, question: str, mode: Mode, embed: Embeddings, reranker: FusionReranker) -> None:
    route = route_of(mode)
    keywords = question_keywords(question, None) if route.keywords else None
    route.run(lib, question, QueryParams(mode=mode), keywords=keywords, llm=None, embed=embed, reranker=reranker)


def measure(lib: Library, questions: list[str], modes: list[Mode]) -> None:
    lib.embedder()
    reranker = FusionReranker(lib)
    t = time.perf_counter()
    mention_index(lib)
    print(f"mention index first load: {time.perf_counter() - t:.1f} s [{uptime()}]")
    for mode in modes:  # warm: spaCy, FTS5, Chroma segments, community report vectors
        t, c = time.perf_counter(), cpu()
        for question in questions[:2]:
            retrieve(lib, question, mode, Embeddings(lib), reranker)
        print(f"  warm {mode} (the first two questions): {time.perf_counter() - t:.1f} s, {cpu() - c:.1f} CPU-s",
              file=sys.stderr, flush=True)
    # CPU ms of this process beside the wall ms: on a shared machine the wall time is mostly waiting for a core
    # (a Chroma server's own CPU is not in it).
    row("mode", "p50 ms", "p95 ms", "max ms", "CPU p50 ms", "CPU p95 ms", "queries")
    row(*["---"] * 7)
    for mode in modes:
        times, cpus = [], []
        for question in questions:
            t, c = time.perf_counter(), time.process_time()
            retrieve(lib, question, mode, Embeddings(lib), reranker)
            times.append((time.perf_counter() - t) * 1000)
            cpus.append((time.process_time() - c) * 1000)
        row(mode, f"{pct(times, .5):.0f}", f"{pct(times, .95):.0f}", f"{max(times):.0f}", f"{pct(cpus, .5):.0f}",
            f"{pct(cpus, .95):.0f}", len(times))
    print(f"[{uptime()}]")


def profile(lib: Library, questions: list[str], mode: Mode, top: int = 30) -> None:
    reranker = FusionReranker(lib)
    retrieve(lib, questions[0], mode, Embeddings(lib), reranker)
    prof = cProfile.Profile()
    prof.enable()
    for question in questions:
        retrieve(lib, question, mode, Embeddings(lib), reranker)
    prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(top)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workspace")
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--chroma", help="HOST:PORT of a `chroma run` server")
    parser.add_argument("--modes", default=",".join(Mode))
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--profile", help="cProfile --queries queries of this mode instead of the table")
    parser.add_argument("--generate-only", action="store_true")
    parser.add_argument("--no-report-vectors", action="store_true",
                        help="leave reports without stored vectors: the first community question embeds them")
    args = parser.parse_args()
    lib = open_workspace(args.workspace, args.chroma)
    rng = random.Random(7)
    vocab = generate(lib, args.chunks, rng)
    print(f"workspace {lib.workspace.root}: {lib.windows.count()} windows, graph {lib.graph.counts()}, "
          f"chroma {args.chroma or 'embedded'}", flush=True)
    if not args.no_report_vectors:
        store_report_vectors(lib)
    if args.generate_only:
        return 0
    questions = [" ".join(rng.choices(vocab[:3000], k=8)) + "?" for _ in range(args.queries)]
    if args.profile:
        profile(lib, questions, Mode(args.profile))
    else:
        measure(lib, questions, [Mode(m) for m in args.modes.split(",")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
