"""API overhead benchmark: prints figures, asserts nothing.

    .venv/bin/python bench/api.py --workspace WS [--rounds 30] [--in-place]

p50/p95 latency of search and of the LLM-free ask (mix mode) through REST and MCP (streamable HTTP) against the
same calls made in-process on the service layer (core/service/). The server is `python -m core serve` in its own
process on a free loopback port (no rate limit, no history); the clients and the in-process calls run here. Rounds
interleave the three faces query by query, so a change of machine load hits all of them alike; compare the
overhead (face minus in-process), not absolute figures from another day (docs: machines differ up to 2.5x).

The workspace is copied to a temporary folder first (unless --in-place), so the benchmark changes nothing of it.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

QUERIES = ["citation graph of scientific papers", "document embeddings evaluated on classification",
           "pretrained language model for scientific text", "datasets released with the paper",
           "named entity recognition in biomedical abstracts"]
QUESTIONS = ["Which datasets are used to evaluate the model?", "What is the main contribution of the paper?",
             "How are the document representations trained?", "Which baselines are compared?",
             "What corpus is the language model pretrained on?"]


def load() -> str:
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def start_server(root: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "PAPERGRAPH_CONFIG_DIR": tempfile.mkdtemp(prefix="bench-api-config-")}
    server = subprocess.Popen([sys.executable, "-m", "core", "serve", "--workspace", str(root), "--port", str(port),
                               "--rate-limit", "0", "--no-history"], cwd=REPO, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    import httpx

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit(f"the API server did not start: {server.stderr.read().decode()[-2000:]}")


async def measure(lib, url: str, rounds: int) -> dict[tuple[str, str], list[float]]:
    import httpx
    from mcp import Client

    from core.service import ask, search

    times: dict[tuple[str, str], list[float]] = {}

    def record(face: str, op: str, started: float) -> None:
        times.setdefault((face, op), []).append((time.perf_counter() - started) * 1000)

    async with httpx.AsyncClient(base_url=url, timeout=120) as rest, Client(f"{url}/mcp") as mcp:
        for warm in (True, False):
            for _ in range(2 if warm else rounds):
                for query, question in zip(QUERIES, QUESTIONS):
                    for op, arg in (("search", query), ("ask", question)):
                        started = time.perf_counter()
                        if op == "search":
                            search.search(lib, arg, top_k=5)
                        else:
                            ask.ask(lib, arg, "mix", use_llm=False, save=False)
                        warm or record("in-process", op, started)
                        started = time.perf_counter()
                        if op == "search":
                            r = await rest.get("/api/search", params={"q": arg, "top_k": 5})
                        else:
                            r = await rest.post("/api/ask", json={"question": arg, "mode": "mix", "use_llm": False})
                        r.raise_for_status()
                        warm or record("REST", op, started)
                        started = time.perf_counter()
                        if op == "search":
                            result = await mcp.call_tool("search_papers", {"query": arg, "top_k": 5})
                        else:
                            result = await mcp.call_tool("ask", {"question": arg, "mode": "mix", "use_llm": False})
                        assert not result.is_error, result.content
                        warm or record("MCP", op, started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--rounds", type=int, default=30, help="times each query is asked of each face")
    parser.add_argument("--in-place", action="store_true", help="use the workspace itself, not a copy")
    args = parser.parse_args()

    from core.library import open_library
    from core.settings.workspace import Workspace

    source = Path(args.workspace).expanduser().resolve()
    tmp = None
    if not args.in_place:
        tmp = Path(tempfile.mkdtemp(prefix="bench-api-"))
        root = tmp / source.name
        shutil.copytree(source, root, ignore=shutil.ignore_patterns("staging", "*.lock"))
    else:
        root = source
    lib = open_library(Workspace(root))
    port = free_port()
    print(f"workspace {source} ({len(lib.documents.ready_papers())} ready papers), {args.rounds} rounds × "
          f"{len(QUERIES)} queries per face; load average before: {load()}", flush=True)
    server = start_server(root, port)
    try:
        times = asyncio.run(measure(lib, f"http://127.0.0.1:{port}", args.rounds))
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"load average after: {load()}\n")
    print("| operation | face | n | p50 ms | p95 ms | overhead p50 ms | overhead p95 ms |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for op in ("search", "ask"):
        base = times[("in-process", op)]
        for face in ("in-process", "REST", "MCP"):
            values = times[(face, op)]
            p50, p95 = statistics.median(values), percentile(values, 0.95)
            extra = ("", "") if face == "in-process" else (f"{p50 - statistics.median(base):+.1f}",
                                                         f"{p95 - percentile(base, 0.95):+.1f}")
            print(f"| {op}{' (LLM-free, mix)' if op == 'ask' else ''} | {face} | {len(values)} | {p50:.1f} | "
                  f"{p95:.1f} | {extra[0]} | {extra[1]} |")


if __name__ == "__main__":
    main()
