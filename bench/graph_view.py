"""Graph explorer benchmark: prints figures, asserts nothing.

    .venv/bin/python bench/graph_view.py [--nodes 50000] [--edges 200000] [--workspace DIR] [--repeat 3]

A synthetic graph (planted communities, six entity types, 100 papers with years, every entity MENTIONED_IN one
paper) is written to a real workspace's SQLite graph store. Then:
1. the explorer's index is loaded from the store (once per graph change in the app);
2. views of 300, 1,000 and 5,000 nodes are built server side (filter, rank, edges, and the static layout above
   ExplorerConfig.static_layout_above nodes) — the target is under 2 s for 1,000 nodes — for the default view,
   a type + year filtered view and a search;
3. each view is rendered to pyvis HTML (the page's other server-side cost) and its size reported;
4. with --browser, the Graph page is opened in Chromium for 300 / 1,000 / 5,000 nodes and the time the iframe
   took to draw and settle the graph (physics for 300, static layout above) is read from the page.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from core.graph.communities.detect import generate_graph  # noqa: E402
from core.library import open_library  # noqa: E402
from core.presentation.graph.explorer import ViewFilters, build_view  # noqa: E402
from core.presentation.graph.graph_index import build_index, load_index  # noqa: E402
from core.presentation.graph.render import RenderOptions, render_html  # noqa: E402
from core.schema.graph import MENTIONED_IN, GraphEdge, GraphNode, PaperRecord  # noqa: E402
from core.settings.workspace import Workspace  # noqa: E402

PAPERS = 100


def write_synthetic_graph(lib, n_nodes: int, n_edges: int) -> float:
    started = time.perf_counter()
    graph = generate_graph(n_nodes, n_edges, seed=11)
    docs = [f"{i:064x}" for i in range(PAPERS)]
    for i, doc in enumerate(docs):  # paper records carry the years the year filter reads
        lib.graph_sources.replace_doc(doc, [], [], PaperRecord(doc_id=doc, title=f"Paper {i}", year=2000 + i % 25))
    nodes = [GraphNode(key=f"paper:{d}", name=f"Paper {i}", type="paper", description=f"Paper {i}",
                       doc_ids=[d], year=2000 + i % 25) for i, d in enumerate(docs)]
    edges = []
    for i, (key, data) in enumerate(graph.nodes(data=True)):
        doc = docs[(i // 50) % PAPERS]  # a planted community comes from one paper
        nodes.append(GraphNode(key=key, name=data["name"], type=data["type"], description=data["description"],
                               source_chunks=[f"{doc}:{i % 40}"], doc_ids=[doc], extractors=["synthetic"],
                               community=i // 50))
        edges.append(GraphEdge(source=key, target=f"paper:{doc}", relation=MENTIONED_IN, weight=1.0,
                               source_chunks=[f"{doc}:{i % 40}"], doc_ids=[doc]))
    for a, b, data in graph.edges(data=True):
        lo, hi = sorted((a, b))
        edges.append(GraphEdge(source=lo, target=hi, keywords=data["keywords"], description=data["description"],
                               weight=data["weight"], source_chunks=[f"{docs[0]}:0"], doc_ids=[docs[0]]))
    lib.graph.apply(nodes, edges)
    lib.graph_sources.clear_dirty(*lib.graph_sources.dirty())
    return time.perf_counter() - started


def timed(fn, repeat: int):
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=50_000)
    parser.add_argument("--edges", type=int, default=200_000)
    parser.add_argument("--workspace", help="default: a temporary folder (an existing graph there is reused)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--browser", action="store_true", help="also time drawing in Chromium (/usr/bin/chromium)")
    args = parser.parse_args()
    root = Path(args.workspace or tempfile.mkdtemp(prefix="bench-graph-view-"))
    lib = open_library(Workspace(root).ensure())
    config = lib.settings.explorer

    print("| measure | value |\n|---|---|")
    if not lib.graph.counts()[0]:
        print(f"| write the synthetic graph to SQLite | {write_synthetic_graph(lib, args.nodes, args.edges):.1f} s |")
    nodes, edges = lib.graph.counts()
    print(f"| graph in the store | {nodes:,} nodes, {edges:,} edges |")
    load_s, index = timed(lambda: build_index(lib), args.repeat)
    print(f"| explorer index, loaded from the store (once per graph change) | **{load_s:.2f} s** |")
    cached_s, _ = timed(lambda: load_index(lib), args.repeat)  # first call loads, the rest hit the cache
    print(f"| explorer index, cached (graph unchanged: version check only) | {cached_s * 1000:.1f} ms |")
    print(f"| static layout above | {config.static_layout_above} nodes |\n")

    print("| view | nodes | edges | filter + rank + edges | layout | **build (server side)** | render HTML | "
          "HTML size |\n|---|---|---|---|---|---|---|---|")
    types = index.types[:2]
    for size in (300, 1_000, 5_000):
        for label, filters in (("default (most connected)", ViewFilters(max_nodes=size)),
                               (f"types {'+'.join(types)}, years 2005-2015",
                                ViewFilters(max_nodes=size, types=tuple(types), years=(2005, 2015))),
                               ("search 'entity 12'", ViewFilters(max_nodes=size, search="entity 12"))):
            build_s, view = timed(lambda f=filters: build_view(index, f, config), args.repeat)
            render_s, page = timed(lambda v=view: render_html(v, RenderOptions(type_order=index.types),
                                                              config=config), 1)
            t = view.timings
            print(f"| {size:,}: {label} | {len(view.nodes):,} | {len(view.edges):,} | "
                  f"{(t['filter_s'] + t['rank_edges_s']) * 1000:.0f} ms | {t['layout_s'] * 1000:.0f} ms | "
                  f"**{build_s:.2f} s** | {render_s:.2f} s | {len(page) / 1e6:.1f} MB |")
    hub = max((k for k in index.nodes if not k.startswith("paper:")), key=index.degree)
    for depth in (1, 2, 3):
        build_s, view = timed(lambda d=depth: build_view(index, ViewFilters(focus=hub, depth=d, max_nodes=1000),
                                                         config), args.repeat)
        print(f"| neighbourhood of the top hub, depth {depth} (max 1,000) | {len(view.nodes):,} | "
              f"{len(view.edges):,} | | | **{build_s:.2f} s** | | |")
    import networkx as nx

    from core.presentation.graph.paths import shortest_paths

    source = sorted(k for k in index.nodes if not k.startswith("paper:"))[0]
    ring = nx.single_source_shortest_path_length(nx.Graph((a, b) for a, n in index.related.items() for b in n),
                                                 source, cutoff=4)
    target = sorted(k for k, d in ring.items() if d == 4)[0]
    path_s, found = timed(lambda: shortest_paths(index, source, target), args.repeat)
    print(f"\n| up to 3 shortest paths between entities 4 hops apart | {len(found)} path(s) of "
          f"{[len(p) - 1 for p in found]} hops in **{path_s:.2f} s** |")
    if args.browser:
        browser_timings(root, (300, 1_000, 5_000))
    print(f"\nworkspace: {root}")
    return 0


def browser_timings(root: Path, sizes) -> None:
    """Open the Graph page of `root` in Chromium and read how long each view took to draw and settle."""
    import json
    import signal
    import subprocess
    import urllib.parse

    from playwright.sync_api import sync_playwright

    from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, _free_port, _wait_healthy

    port, log = _free_port(), root / "bench-streamlit.log"
    env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(root), PYTHONUNBUFFERED="1")
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                                 "--server.address", "127.0.0.1", "--server.headless", "true",
                                 "--browser.gatherUsageStats", "false"], cwd=REPO, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    print("\n| view in Chromium | nodes drawn | page load to graph settled | in the iframe: load to settled |\n"
          "|---|---|---|---|")
    try:
        _wait_healthy(url, proc, log)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            for size in sizes:
                started = time.perf_counter()
                page.goto(f"{url}/graph?view=" + urllib.parse.quote(json.dumps({"max_nodes": size})))
                frame = page.locator("iframe").first.element_handle(timeout=120_000).content_frame()
                frame.wait_for_function("() => document.body && document.body.getAttribute('data-graph-stable')",
                                        timeout=120_000)
                total = time.perf_counter() - started
                drawn = frame.evaluate("() => nodes.length")
                settled = int(frame.evaluate("() => document.body.getAttribute('data-graph-settled-ms')"))
                print(f"| max {size:,} | {drawn:,} | {total:.1f} s | **{settled / 1000:.1f} s** |")
            browser.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
