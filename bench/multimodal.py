"""Tables, figures and equations benchmark over ../shared/corpus/papers: prints figures, asserts nothing.

    .venv/bin/python bench/multimodal.py [--papers DIR] [--workspace DIR]

1. Parse and index every paper (a workspace given again keeps its parse).
2. Items by type.
3. Offline descriptions: items/s (PyMuPDF text in the box, OCR for raster figures, table rows).
4. Re-index every paper so its item chunks hold caption + description (as ingest does now).
5. Recall@5 of table and figure items by a query made from their caption (label stripped), core.query.search.
6. The VLM path against a local OpenAI-protocol replay server: calls per paper, then again (must be 0).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from bench.common import cpu, row  # noqa: E402
from core.content.media_doc import load_media_doc  # noqa: E402
from core.content.media_items import caption_label  # noqa: E402
from core.library import open_library  # noqa: E402
from core.pipeline.documents import add_pdf  # noqa: E402
from core.pipeline.ingest import process_queue, reindex_items  # noqa: E402
from core.pipeline.media.describe import describe_document_media, offline_descriptions  # noqa: E402
from core.pipeline.status import StageReporter  # noqa: E402
from core.query.search import search  # noqa: E402
from core.schema.records import GraphStatus  # noqa: E402
from core.settings.workspace import Workspace  # noqa: E402
from tests.openai_server import OpenAIReplayServer, Reply  # noqa: E402


def caption_query(caption: str, words: int = 14) -> str:
    """The caption a user half-remembers: without its label, its first words."""
    text = re.sub(r"^\s*(table|tab\.|figure|fig\.)\s*\S+", "", caption, flags=re.I) if caption_label(caption) \
        else caption
    text = re.sub(r"^[^A-Za-z]*", "", text)
    return " ".join(text.split()[:words])


def replay_vlm(body: dict) -> Reply:
    user = next(m for m in body["messages"] if m["role"] == "user")
    text = next(p["text"] for p in user["content"] if p["type"] == "text")
    return Reply(content=json.dumps({"description": "Replayed description of " + text.splitlines()[1],
                                     "entities": [{"name": "ReplayEntity", "type": "concept"}]}))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--papers", default=str(REPO.parent / "shared" / "corpus" / "papers"))
    parser.add_argument("--workspace", help="default: a temporary folder")
    parser.add_argument("--skip-vlm", action="store_true")
    args = parser.parse_args()
    root = Path(args.workspace or tempfile.mkdtemp(prefix="bench-multimodal-"))
    lib = open_library(Workspace(root).ensure())
    print("| measure | value |\n|---|---|")
    if not lib.documents.ready_papers():
        pdf_paths = sorted(Path(args.papers).glob("*.pdf"))
        if not pdf_paths:
            print(f"no PDFs in {args.papers}", file=sys.stderr)
            return 2
        for path in pdf_paths:
            add_pdf(lib, path.name, path.read_bytes())
        process_queue(lib)
    ready = lib.documents.ready_papers()
    docs = {d.id: load_media_doc(lib, d.id) for d in ready}
    counts = Counter(i.type for m in docs.values() for i in m.media)
    row("papers / pages", f"{len(ready)} / {sum(d.pages for d in ready)}")
    row("items: tables / figures / equations", f"{counts['table']} / {counts['image']} / {counts['equation']}")
    captioned = Counter(i.type for m in docs.values() for i in m.media if i.caption)
    row("items with a caption: tables / figures", f"{captioned['table']} / {captioned['image']}")

    lib.embedder()
    c0, t0 = cpu(), time.perf_counter()
    described = [d for doc in ready for d in offline_descriptions(lib, doc.id, docs[doc.id].items)]
    wall, used = time.perf_counter() - t0, cpu() - c0
    row("offline descriptions: items / wall-s / CPU-s", f"{len(described)} / {wall:.2f} / {used:.2f}")
    row("offline descriptions per second (wall)", f"{len(described) / max(wall, 1e-9):.1f}")
    empty = sum(1 for d in described if "read no text" in d.text)
    row("items with nothing readable (described by kind and page only)", empty)

    t0 = time.perf_counter()
    for doc in ready:
        reindex_items(lib, doc, docs[doc.id].items, StageReporter(lib, doc.id, None))
    row("re-index with descriptions (all papers, s)", f"{time.perf_counter() - t0:.1f}")

    # Tables and figures are entities too: build the (LLM-free) graph, so every mode can reach them.
    from core.pipeline.graph.stage import process_graph_queue
    from core.query.engine import ask
    from core.query.records import QueryParams

    for doc in ready:
        lib.documents.set_graph_status(doc.id, GraphStatus.PENDING)
    t0 = time.perf_counter()
    process_graph_queue(lib)
    media_entities = sum(1 for n in lib.graph.all_nodes() if n.type in ("table", "figure", "equation"))
    row("graph with media entities (s) / table, figure and equation entities",
        f"{time.perf_counter() - t0:.1f} / {media_entities}")

    queries = []
    for doc in ready:
        chunks = {c.item_indices[0]: c.id for c in lib.chunks.by_doc(doc.id) if c.kind in ("table", "image")}
        for item in docs[doc.id].media:
            if item.type not in ("table", "image") or not item.caption or item.index not in chunks:
                continue
            query = caption_query(item.caption)
            if len(query.split()) >= 3:
                queries.append((item.type, query, chunks[item.index]))
    for mode in ("search", "naive", "local", "global", "hybrid", "mix"):
        found, asked = Counter(), Counter()
        for kind, query, chunk_id in queries:
            asked[kind] += 1
            if mode == "search":
                hits = [h.chunk.id for h in search(lib, query, top_k=5)]
            else:
                result = ask(lib, query, QueryParams(mode=mode, chunk_top_k=5, context_only=True), save=False)
                hits = [c.id for c in result.retrieval.chunks[:5]]
            found[kind] += chunk_id in hits
        total_found, total = sum(found.values()), sum(asked.values())
        row(f"recall@5 by caption query, {mode}: tables / figures / all",
            f"{found['table']}/{asked['table']} / {found['image']}/{asked['image']} / {total_found}/{total} = "
            f"{total_found / max(total, 1):.2f}")

    if args.skip_vlm:
        return 0
    with OpenAIReplayServer(default=replay_vlm, model="replay-vision") as server:
        lib.settings.vlm.provider, lib.settings.vlm.base_url, lib.settings.vlm.model = "openai", server.url, \
            "replay-vision"
        per_paper = []
        t0 = time.perf_counter()
        for doc in ready:
            before = len(server.chat_requests)
            describe_document_media(lib, doc.id)
            per_paper.append(len(server.chat_requests) - before)
        wall = time.perf_counter() - t0
        row("VLM calls per paper (replay server): mean / min / max",
            f"{sum(per_paper) / max(len(per_paper), 1):.1f} / {min(per_paper)} / {max(per_paper)}")
        row("VLM pass over all papers incl. crops and re-embedding (s)", f"{wall:.1f}")
        sizes = [len(json.dumps(b)) for b in server.chat_requests]
        row("VLM request size (KB): mean / max", f"{sum(sizes) / max(len(sizes), 1) / 1024:.0f} / "
                                                  f"{max(sizes, default=0) / 1024:.0f}")
        again = len(server.chat_requests)
        for doc in ready:
            describe_document_media(lib, doc.id)
        row("VLM calls when run again (described items are kept)", len(server.chat_requests) - again)
    return 0


if __name__ == "__main__":
    sys.exit(main())
