"""Scale benchmark: parallel compute workers, Ray vs local, and the cost of one more paper in a bigger workspace.

1. The shared papers (../shared/corpus/papers; skipped when absent) ingested with the local backend at 1 and 2
   workers: wall time, CPU-seconds (the writer's process plus every worker's task), their ratio, pages per
   CPU-second to searchable and end to end including the LLM-free graph (run once, after the 2-worker ingest).
2. The same papers with the Ray backend (a local instance, 2 worker processes; skipped without `make ray`):
   wall, CPU, and whether every count (documents ready, pages, items, chunks, windows) equals the local run's.
3. Adding paper N+1 through the CLI's own path (recover, garbage collection, ingest, graph stage, communities) to a
   workspace of generated papers (tests/pdfs.py, builtin parser, LLM-free graph) of each size in --sizes: seconds
   per phase and CPU-seconds, every size warm (models loaded, compute workers started, by a scratch workspace's
   two papers first).

The machine may be shared: the load average is printed with every section, so noisy numbers can be told apart.
Usage: python bench/scale.py [--papers N] [--sizes 10,100] [--skip shared,ray,add] [--workdir DIR --round K]
       [--profile-add]
"""
from __future__ import annotations

import argparse
import cProfile
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core.cli.gc import collect_at_start  # noqa: E402
from core.graph.communities.index import refresh_communities  # noqa: E402
from core.library import Library, open_library  # noqa: E402
from core.pipeline.compute import RayUnavailable, compute_backend  # noqa: E402
from core.pipeline.compute.local import WORKER_THREADS  # noqa: E402
from core.pipeline.documents import add_document, add_pdf  # noqa: E402
from core.pipeline.gc import collect_garbage  # noqa: E402
from core.pipeline.graph.stage import process_graph_queue, recover_graph  # noqa: E402
from core.pipeline.ingest import process_queue, recover  # noqa: E402
from core.schema.records import DocStatus  # noqa: E402
from core.settings.config import Settings  # noqa: E402
from core.settings.workspace import Workspace  # noqa: E402
from tests import pdfs  # noqa: E402

PAPERS = REPO.parent / "shared" / "corpus" / "papers"
_SYLLABLES = ["ka", "lo", "mi", "ren", "tor", "vex", "qua", "zi", "dun", "pha", "sol", "ber", "nix", "gal", "tem"]


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def load() -> str:
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


def row(*cells) -> None:
    print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)


def workspace(root: Path, parser: str = "mineru") -> Library:
    ws = Workspace(root).ensure()
    settings = Settings()
    settings.parsing.backend = parser
    ws.save_settings(settings)
    return open_library(ws)


def counts(lib: Library) -> dict:
    docs = lib.documents.list()
    return {"ready": sum(d.status == DocStatus.READY for d in docs), "pages": sum(d.pages for d in docs),
            "items": sum(sum(d.item_counts.values()) for d in docs), "chunks": sum(d.chunk_count for d in docs),
            "windows": lib.windows.count()}


def ingest(lib: Library, files: list[Path], backend) -> dict:
    for path in files:
        add_pdf(lib, path.name, path.read_bytes())
    cpu0, t0 = own_cpu(), time.perf_counter()
    done = process_queue(lib, backend=backend)
    wall = time.perf_counter() - t0
    # Worker CPU comes with each result (its process and MinerU's child); the writer's is this process's.
    cpu = own_cpu() - cpu0 + sum(d.timings.get("compute_cpu_s", 0.0) for d in done)
    return {"wall": wall, "cpu": cpu, "pages": sum(d.pages for d in done), "failed": [d.message for d in done
                                                                                     if d.status != "ready"]}


def shared_section(args, tmp: Path) -> None:
    files = sorted(PAPERS.glob("*.pdf"))[:args.papers or None]
    if not files:
        print(f"shared papers: none under {PAPERS}; skipped\n")
        return
    print(f"## Shared papers: {len(files)} PDFs, load average {load()} (1/5/15 min) before\n")
    row("run", "wall s", "CPU-s", "pages", "pages/CPU-s", "load after")
    row(*["---"] * 6)
    runs, results = {}, {}
    for workers in (1, 2):
        lib = workspace(tmp / f"shared-w{workers}")
        runs[workers] = r = ingest(lib, files, compute_backend(lib.settings.compute, "local", workers))
        results[workers] = counts(lib)
        row(f"local, {workers} worker{'s' if workers > 1 else ''}", f"{r['wall']:.0f}", f"{r['cpu']:.0f}",
            r["pages"], f"{r['pages'] / r['cpu']:.2f}", load())
        if r["failed"]:
            print("failed:", r["failed"])
    local = counts(lib)
    cpu0, t0 = own_cpu(), time.perf_counter()
    process_graph_queue(lib)
    graph_wall, graph_cpu = time.perf_counter() - t0, own_cpu() - cpu0
    r2 = runs[2]
    row("LLM-free graph (after 2 workers)", f"{graph_wall:.0f}", f"{graph_cpu:.0f}", r2["pages"],
        f"{r2['pages'] / graph_cpu:.2f}", load())
    row("end to end, 2 workers + graph", f"{r2['wall'] + graph_wall:.0f}", f"{r2['cpu'] + graph_cpu:.0f}",
        r2["pages"], f"{r2['pages'] / (r2['cpu'] + graph_cpu):.2f}", "")
    print(f"\nwall-clock throughput, 2 workers vs 1: {runs[1]['wall'] / r2['wall']:.2f}x; "
          f"CPU-s 2 vs 1: {r2['cpu'] / runs[1]['cpu']:.2f}; each worker {WORKER_THREADS} thread; "
          f"same counts 1 vs 2 workers: {results[1] == results[2]} {results[2]}\n")
    if "ray" in args.skip:
        return
    lib = workspace(tmp / "shared-ray")
    try:
        backend = compute_backend(lib.settings.compute, "ray", 2)
    except RayUnavailable as exc:
        print(f"ray: {exc}; skipped\n")
        return
    r = ingest(lib, files, backend)
    ray_counts = counts(lib)
    print(f"## Ray (local instance, 2 workers) vs local (2 workers), load average {load()}\n")
    row("backend", "wall s", "CPU-s", "ready", "pages", "items", "chunks", "windows")
    row(*["---"] * 8)
    row("local", f"{r2['wall']:.0f}", f"{r2['cpu']:.0f}", *local.values())
    row("ray", f"{r['wall']:.0f}", f"{r['cpu']:.0f}", *ray_counts.values())
    print(f"\nsame counts: {ray_counts == local}\n")


def _paper_content(n: int) -> tuple[str, list[tuple[str, list[str]]]]:
    """A paper's title and sections, with its own made-up method, dataset and metric names."""
    def name(k: int) -> str:
        return "".join(_SYLLABLES[(n * 7 + k * 3 + i) % len(_SYLLABLES)] for i in range(3)).capitalize()

    method, data, metric, base = name(1), name(2), name(3), name(4)
    sections = [("1 Introduction", [f"We present {method}Net, a method for sparse {data} graphs. {method}Net "
                                    f"improves {metric} over {base}Former on the {data}Bench benchmark."]),
                ("2 Results", [f"On {data}Bench, {method}Net reaches 8{n % 10}.{n % 7} {metric} while {base}Former "
                               f"reaches 7{n % 9}.1. Paper {n} also studies {name(5)} regularisation."])]
    return f"{method}Net: sparse {data} graphs ({n})", sections


def synthetic_paper(folder: Path, n: int) -> Path:
    """A one-page paper with its own made-up method, dataset and metric names, so each adds to the graph."""
    title, sections = _paper_content(n)
    return pdfs.make_paper_pdf(folder / f"synthetic-{n:04d}.pdf", title=title, sections=sections, pages=1,
                               with_figure=False)


def add_base_paper(lib: Library, folder: Path, n: int, base: str) -> None:
    """Paper n of a workspace's base collection: the generated PDF, or (--base text, ~10x cheaper to build) the
    same title and sections as Markdown through the product's text path (headings become sections)."""
    if base == "pdf":
        path = synthetic_paper(folder, n)
        add_pdf(lib, path.name, path.read_bytes())
        return
    title, sections = _paper_content(n)
    body = "\n\n".join(f"## {heading}\n\n" + "\n\n".join(paras) for heading, paras in sections)
    add_document(lib, f"synthetic-{n:04d}.md", f"# {title}\n\n{body}\n".encode())


def add_one(lib: Library, path: Path, profile_to: Path | None = None) -> dict:
    """What `python -m core ingest PATH` does, phase by phase; the ingest's own timings (parse, chunk, embed,
    index) beside them, and CPU-seconds (this process, plus the compute worker's task). With `profile_to`, a
    cProfile of the whole add is written there (pstats format), so what grows with the collection can be found
    by comparing two sizes."""
    phases = {}
    prof = cProfile.Profile() if profile_to else None
    cpu0 = own_cpu()
    if prof:
        prof.enable()
    t = time.perf_counter()
    if recover(lib):  # as cmd_ingest: the full collection only after an interrupted run
        collect_at_start(lib)
    phases["recover"] = time.perf_counter() - t
    add_pdf(lib, path.name, path.read_bytes())
    t = time.perf_counter()
    (doc,) = process_queue(lib, backend=compute_backend(lib.settings.compute, "local", 2))
    phases["ingest"] = time.perf_counter() - t
    assert doc.status == DocStatus.READY, doc.message
    phases.update({f"  ingest: {k}": float(v) for k, v in sorted(doc.timings.items())
                   if isinstance(v, (int, float)) and not isinstance(v, bool)})
    t = time.perf_counter()
    recover_graph(lib)
    process_graph_queue(lib, communities=False)
    phases["graph"] = time.perf_counter() - t
    t = time.perf_counter()
    refreshed = refresh_communities(lib) or {}  # what process_graph_queue runs last, timed on its own
    phases["communities"] = time.perf_counter() - t
    phases["  communities: full (1) or partial (0)"] = refreshed.get("full", 0.0)
    phases["  communities: entities recomputed"] = refreshed.get("region", 0.0)
    phases["total"] = phases["recover"] + phases["ingest"] + phases["graph"] + phases["communities"]
    if prof:
        prof.disable()
        prof.dump_stats(str(profile_to))
    phases["CPU-s: this process"] = own_cpu() - cpu0
    phases["CPU-s: this process + compute worker"] = phases["CPU-s: this process"] + float(
        doc.timings.get("compute_cpu_s", 0.0))
    t = time.perf_counter()
    collect_garbage(lib)
    phases["full gc (core gc, app start-up; not in total)"] = time.perf_counter() - t
    return phases


def warm_up(tmp: Path, folder: Path) -> None:
    """Two papers through a scratch workspace first, so every size's add finds the models loaded, the compute
    pool's two workers started (each with its embedding model) and the imports done: the sizes then compare what
    grows with the collection, not which one paid for loading (spaCy alone took a minute on a busy machine)."""
    shutil.rmtree(tmp / "warm-up", ignore_errors=True)  # a reused --workdir: papers already there warm nothing
    lib = workspace(tmp / "warm-up", parser="builtin")
    for n in (90001, 90002):
        path = synthetic_paper(folder, n)
        add_pdf(lib, path.name, path.read_bytes())
    process_queue(lib, backend=compute_backend(lib.settings.compute, "local", 2))
    process_graph_queue(lib)


def add_section(args, tmp: Path) -> None:
    sizes = [int(s) for s in args.sizes.split(",")]
    folder = tmp / "synthetic"
    folder.mkdir(exist_ok=True)
    print(f"## Adding paper N+1 (a generated one-page PDF, builtin parser, LLM-free graph) to N generated papers "
          f"({args.base}), load {load()}\n")
    results = {}
    for size in sizes:
        lib = workspace(tmp / f"add-{size}", parser="builtin")
        t, cpu0 = time.perf_counter(), own_cpu()
        for n in range(size):  # a reused --workdir adds nothing twice (adding deduplicates by content)
            add_base_paper(lib, folder, n, args.base)
        process_queue(lib, backend=compute_backend(lib.settings.compute, "local", 2))
        process_graph_queue(lib)
        built, built_cpu = time.perf_counter() - t, own_cpu() - cpu0
        print(f"workspace of {size}: built in {built:.0f} s ({size / max(built, 1e-9):.1f} papers/s, writer "
              f"{built_cpu:.0f} CPU-s), {lib.windows.count()} windows, "
              f"{sum(1 for _ in lib.graph.all_nodes())} graph nodes; load {load()}")
    warm_up(tmp, folder)
    for size in sizes:
        lib = workspace(tmp / f"add-{size}", parser="builtin")
        extra = synthetic_paper(folder, 100000 + size + args.round)
        print(f"adding paper {size + 1}: load before {load()}", end="", flush=True)
        results[size] = add_one(lib, extra, tmp / f"add-{size}.prof" if args.profile_add else None)
        print(f", after {load()}")
    print()
    row("phase", *[f"paper {s + 1} (s)" for s in sizes], f"ratio {sizes[-1] + 1} / {sizes[0] + 1}")
    row(*["---"] * (len(sizes) + 2))
    for phase in results[sizes[0]]:
        values = [results[s].get(phase, 0.0) for s in sizes]
        row(phase, *[f"{v:.2f}" for v in values], f"{values[-1] / max(values[0], 1e-9):.2f}")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=0, help="only the first N shared papers (default all)")
    parser.add_argument("--sizes", default="10,100", help="workspace sizes for the N+1 measurement")
    parser.add_argument("--skip", default="", help="comma-separated: shared, ray, add")
    parser.add_argument("--workdir", help="keep the workspaces here (reused by the next run: only paper N+1 is "
                                          "added; pass a new --round so it is a paper not added before)")
    parser.add_argument("--base", choices=("pdf", "text"), default="pdf",
                        help="the N papers as generated PDFs, or the same content as Markdown (cheaper to build)")
    parser.add_argument("--round", type=int, default=0, help="which extra paper to add (with a reused --workdir)")
    parser.add_argument("--profile-add", action="store_true",
                        help="write a cProfile of each size's add (add-N.prof in the work folder)")
    args = parser.parse_args()
    args.skip = set(filter(None, args.skip.split(",")))
    tmp = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="papergraph-scale-"))
    tmp.mkdir(parents=True, exist_ok=True)
    print(f"# bench/scale.py — {os.cpu_count()} cores, load average {load()} (1/5/15 min)\n")
    try:
        if "shared" not in args.skip:
            shared_section(args, tmp)
        if "add" not in args.skip:
            add_section(args, tmp)
    finally:
        if not args.workdir:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
