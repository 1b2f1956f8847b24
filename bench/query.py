"""Query benchmark: prints figures, asserts nothing.

    .venv/bin/python bench/query.py hotpot    [--workspace DIR] [--questions N] [--modes naive,mix] [--variants]
                                              [--set KEY=VALUE,...] [--halves] [--query-only]
    .venv/bin/python bench/query.py latency   --workspace DIR   (e.g. a workspace bench/graph.py built)
    .venv/bin/python bench/query.py synthetic [--workspace DIR] [--chunks 100000]

hotpot: index ../shared/corpus/hotpotqa/corpus.jsonl (one document per paragraph, LLM-free graph), ask the
questions in every mode and report complete-evidence recall@5/@10 (a question counts only when every gold
evidence sentence is inside the top-K chunks), evidence-in-context (every gold sentence inside the context the
mode assembled under the default token budget), extractive answer EM/F1, and retrieval latency.
latency: retrieval p50/p95 per mode (no LLM) on an existing workspace.
synthetic: a generated workspace of N chunks (random unit vectors, Zipf-distributed words, a random graph of
N/2 entities and N relations), then retrieval p50/p95 per mode.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import statistics
import string
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import numpy as np  # noqa: E402

from bench.common import bench_workspace, cpu  # noqa: E402
from bench.common import percentile as pct  # noqa: E402
from core.eval.metrics import complete_at_k, exact_match, passage_hits  # noqa: E402
from core.eval.metrics import token_f1 as f1  # noqa: E402
from core.library import Library, open_library  # noqa: E402
from core.pipeline.graph.build import entity_vector_id, relation_vector_id  # noqa: E402
from core.query.answer import strip_markers  # noqa: E402
from core.query.engine import Embeddings, ask  # noqa: E402
from core.query.keywords import question_keywords  # noqa: E402
from core.query.records import QUERY_KNOBS, QueryParams  # noqa: E402
from core.query.rerank import FusionReranker  # noqa: E402
from core.query.routes import default_modes, route_of  # noqa: E402
from core.schema import ids  # noqa: E402
from core.schema.graph import GraphEdge, GraphNode  # noqa: E402
from core.schema.modes import Mode  # noqa: E402
from core.schema.records import Chunk, DocStatus, Document, GraphStatus  # noqa: E402
from core.settings.config import QueryConfig, Settings  # noqa: E402
from core.settings.workspace import Workspace  # noqa: E402

MODES = default_modes(list(Mode)) + [Mode.PPR]  # community is left out: an LLM call per report; ppr is opt-in
HOTPOT = REPO.parent / "shared" / "corpus" / "hotpotqa"


def row(*cells) -> None:
    print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)


# ---------------------------------------------------------------------------------------------- text documents
def _mark_ready(lib: Library, doc_id: str, message: str, graph: GraphStatus | None = None, **fields) -> None:
    """A document this bench indexed itself, not through the ingest queue, walked through the ingest's states:
    the registry allows no shortcut from queued to ready."""
    for status in (DocStatus.PARSING, DocStatus.INDEXING):
        lib.documents.set_status(doc_id, status)
    lib.documents.set_status(doc_id, DocStatus.READY, message, graph=graph, **fields)


def index_text_documents(lib: Library, docs: list[tuple[str, str]], build_graph: bool = True) -> dict[str, float]:
    """Plain-text documents (title, text) through the product path, as `python -m core ingest notes.txt` takes
    them: each becomes a text file whose first line is its title (core.pipeline.documents.add_document), parsed by
    the text reader, chunked, embedded and indexed by the ingest queue, the graph stage following it
    (core.pipeline.run.ingest_and_graph). A reused workspace redoes nothing it finished; an interrupted run resumes.
    Returns the documents added and the seconds and CPU-seconds to searchable (the last commit) and through the
    graph, and prints documents per second."""
    from core.pipeline.documents import add_document, retry_document
    from core.pipeline.ingest import recover
    from core.pipeline.run import ingest_and_graph

    started, cpu0 = time.perf_counter(), cpu()
    recover(lib)
    added = sum(add_document(lib, f"{title[:80]}.txt", f"{title}\n\n{text}\n".encode()).outcome == "added"
                for title, text in docs)
    for doc in lib.documents.list():
        if doc.status == DocStatus.FAILED:
            retry_document(lib, doc.id)
    last_commit = [started, cpu0]

    def committed(_docs) -> None:
        last_commit[:] = [time.perf_counter(), cpu()]

    ingest_and_graph(lib, graph=build_graph, on_ready=committed)
    searchable_s, searchable_cpu = last_commit[0] - started, last_commit[1] - cpu0
    out = {"documents": added, "searchable_s": searchable_s, "searchable_cpu_s": searchable_cpu}
    print(f"  {added} documents searchable in {searchable_s:.1f} s ({added / max(searchable_s, 1e-9):.1f}/s, "
          f"{searchable_cpu:.0f} CPU-s)", file=sys.stderr)
    if build_graph:
        total_s, total_cpu = time.perf_counter() - started, cpu() - cpu0
        out.update(total_s=total_s, total_cpu_s=total_cpu)
        print(f"  ... and through the graph in {total_s:.1f} s ({added / max(total_s, 1e-9):.1f}/s end to end, "
              f"{total_cpu:.0f} CPU-s)", file=sys.stderr)
    return out


# ---------------------------------------------------------------------------------------------- SQuAD metrics
def all_inside(evidence: list[str], texts: list[str]) -> bool:
    return complete_at_k(passage_hits(evidence, texts), len(texts) or 1) == 1.0


# ---------------------------------------------------------------------------------------------- hotpot
def hotpot(args) -> int:
    if not HOTPOT.exists():
        print(f"{HOTPOT} is missing", file=sys.stderr)
        return 2
    ws = bench_workspace(args.workspace, "bench-hotpot-")
    root = ws.root
    lib = open_library(ws)
    corpus = [json.loads(line) for line in (HOTPOT / "corpus.jsonl").read_text().splitlines() if line.strip()]
    questions = [json.loads(line) for line in (HOTPOT / "qa.jsonl").read_text().splitlines() if line.strip()]
    questions = questions[:args.questions]
    t = time.perf_counter()
    if not args.query_only:
        index_text_documents(lib, [(d["title"], d["text"]) for d in corpus])
    print(f"workspace {root}: {len(corpus)} paragraphs, graph {lib.graph.counts()}, "
          f"ready in {time.perf_counter() - t:.0f} s (0 when reused)")
    modes = args.modes.split(",")
    variants = [("", {})]
    if args.variants:
        variants = [("", {}), (" no-rerank", {"rerank": False}), (" no-bm25", {"bm25": False})]
    # --set "seed_passages=0,hop_neighbours=0": a row per setting, for the ablation and the ppr sweep.
    variants += [(f" {spec}", _query_settings(spec)) for spec in args.set]
    print()
    row("mode", "complete@5", "complete@10", "evidence-in-context", "EM", "F1", "retrieval p50 ms",
        "retrieval p95 ms", "answer s/q")
    row(*["---"] * 9)
    lib.embedder()
    for mode in modes:
        for label, overrides in variants:
            stats = {"c5": 0, "c10": 0, "ctx": 0, "em": 0.0, "f1": 0.0}
            latencies, answer_s, per_question = [], [], []
            knobs = {k: v for k, v in overrides.items() if k in QUERY_KNOBS}
            saved = {k: getattr(lib.settings.query, k) for k in overrides if k not in knobs}
            for k in saved:
                setattr(lib.settings.query, k, overrides[k])
            for q in questions:
                params = QueryParams.from_config(lib.settings.query, mode=mode, chunk_top_k=10, **knobs)
                result = ask(lib, q["question"], params, save=False)
                top = [c.hit.chunk.text for c in result.retrieval.chunks]
                per_question.append((all_inside(q["evidence"], top[:5]), all_inside(q["evidence"], top[:10])))
                stats["c5"] += per_question[-1][0]
                stats["c10"] += per_question[-1][1]
                stats["ctx"] += all_inside(q["evidence"], [s.text for s in result.context.sources])
                answer = strip_markers(result.answer.text)
                stats["em"] += exact_match(answer, q["answers"])
                stats["f1"] += f1(answer, q["answers"])
                latencies.append(result.timings["retrieve_s"] * 1000)
                answer_s.append(result.timings.get("generate_s", 0.0))
            for k, v in saved.items():
                setattr(lib.settings.query, k, v)
            n = len(questions)
            row(mode + label, f"{stats['c5'] / n:.2f}", f"{stats['c10'] / n:.2f}", f"{stats['ctx'] / n:.2f}",
                f"{stats['em'] / n:.2f}", f"{stats['f1'] / n:.3f}", f"{pct(latencies, .5):.0f}",
                f"{pct(latencies, .95):.0f}", f"{statistics.mean(answer_s):.2f}")
            if args.halves:
                _half_rows(mode + label, per_question)
    return 0


def _half_rows(label: str, per_question: list[tuple[bool, bool]]) -> None:
    """Complete-evidence recall of the first half of the questions (what parameters may be chosen on) and of
    the second (held out), so a setting tuned on the first shows whether it generalises."""
    half = len(per_question) // 2
    for name, part in ((f"[1-{half}]", per_question[:half]), (f"[{half + 1}-{len(per_question)}]",
                                                              per_question[half:])):
        n = max(len(part), 1)
        row(f"{label} {name}", f"{sum(a for a, _ in part) / n:.2f}", f"{sum(b for _, b in part) / n:.2f}",
            *[""] * 6)


def _query_settings(spec: str) -> dict:
    """ "ppr_damping=0.3,rerank=false" → QueryConfig's fields with their types."""
    out = {}
    for part in filter(None, spec.split(",")):
        key, _, value = part.partition("=")
        default = getattr(QueryConfig, key.strip())
        out[key.strip()] = (value.strip().lower() in ("1", "true", "yes") if isinstance(default, bool)
                            else type(default)(value.strip()))
    return out


# ---------------------------------------------------------------------------------------------- latency
def retrieval_latency(lib: Library, questions: list[str], repeats: int = 1) -> None:
    lib.embedder()
    embeddings = Embeddings(lib)
    reranker = FusionReranker(lib)
    row("mode", "p50 ms", "p95 ms", "max ms", "queries")
    row(*["---"] * 5)
    def retrieve(question: str, mode: Mode, embed: Embeddings) -> None:
        route = route_of(mode)
        keywords = question_keywords(question, None) if route.keywords else None
        route.run(lib, question, QueryParams(mode=mode), keywords=keywords, llm=None, embed=embed, reranker=reranker)

    for question in questions[:2]:  # warm: spaCy, FTS5 index creation, Chroma segments into memory
        for mode in MODES:
            retrieve(question, mode, embeddings)
    for mode in MODES:
        times = []
        for _ in range(repeats):
            for question in questions:
                t = time.perf_counter()
                retrieve(question, mode, Embeddings(lib))
                times.append((time.perf_counter() - t) * 1000)
        row(mode, f"{pct(times, .5):.0f}", f"{pct(times, .95):.0f}", f"{max(times):.0f}", len(times))


PAPER_QUESTIONS = [
    "Which datasets are used to evaluate SPECTER?", "How does TableFormer encode table structure?",
    "What is the training objective of the citation-informed transformer?", "Which metrics measure summarization?",
    "What baselines are compared on the SciDocs benchmark?", "How are hard negatives chosen during training?",
    "Which pretrained language model is used as the encoder?", "What does the ablation study show?",
    "How are tables perturbed for data augmentation?", "What are the limitations of current evaluation practice?",
    "Which tasks are part of the benchmark?", "How is the model fine-tuned?", "What is the size of the corpus?",
    "Which attention biases are introduced?", "What results are reported on co-view and co-read?",
    "How is human evaluation conducted?", "What is the role of citations in document representation?",
    "Which languages are covered?", "What does the error analysis reveal?", "How large is the vocabulary?",
]


def latency(args) -> int:
    lib = open_library(Workspace(Path(args.workspace)))
    docs = lib.documents.ready_papers()
    print(f"workspace {args.workspace}: {len(docs)} ready papers, graph {lib.graph.counts()}, "
          f"{lib.windows.count()} windows")
    retrieval_latency(lib, PAPER_QUESTIONS, repeats=2)
    return 0


# ---------------------------------------------------------------------------------------------- synthetic
SYNTHETIC_PER_DOC = 100  # chunks per generated paper


class Synthetic:
    """The random material of a generated workspace, shared with bench/scale_query.py: a vocabulary of 30k random
    words drawn Zipf-distributed, chunks of 80 such words, random unit vectors, and a random graph of n/2 entities
    (each named in three random chunks) and n relations. `rng` draws the words and the graph, so a workspace
    generated before can be reused with the same vocabulary (questions are drawn from it)."""

    def __init__(self, rng: random.Random, dim: int):
        self.rng = rng
        self.nprng = np.random.default_rng(7)
        self.dim = dim
        self.vocab = ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 10)))
                      for _ in range(30000)]
        # Cumulative weights once: random.choices with `weights` sums them at every call (O(vocabulary) per
        # chunk, ~4x the generation time).
        self.cum = list(itertools.accumulate(1 / (i + 1) for i in range(len(self.vocab))))

    def words(self, k: int) -> str:
        return " ".join(self.rng.choices(self.vocab, cum_weights=self.cum, k=k))

    def unit(self, k: int) -> np.ndarray:
        v = self.nprng.standard_normal((k, self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def chunks(self, doc_id: str) -> list[Chunk]:
        return [Chunk(id=ids.chunk_id(doc_id, i), doc_id=doc_id, index=i, kind="text", text=self.words(80),
                      pages=[i // 5], item_indices=[i], tokens=100) for i in range(SYNTHETIC_PER_DOC)]

    def add_windows(self, lib: Library, chunks: list[Chunk]) -> None:
        lib.windows.upsert([ids.window_id(c.id, 0) for c in chunks], self.unit(len(chunks)),
                           [c.text[:200] for c in chunks],
                           [{"doc_id": c.doc_id, "chunk_id": c.id, "page": c.pages[0], "kind": "text"}
                            for c in chunks])

    def add_graph(self, lib: Library, n: int) -> list[str]:
        """n/2 entities and n relations over the n chunks, with their vectors; the entity keys."""
        rng, n_entities = self.rng, n // 2
        keys = [f"entity {i} {rng.choice(self.vocab)}" for i in range(n_entities)]
        nodes = [GraphNode(key=k, name=k, type="concept", description=self.words(20),
                           source_chunks=[f"synthetic{rng.randrange(n // SYNTHETIC_PER_DOC):06d}:"
                                          f"{rng.randrange(SYNTHETIC_PER_DOC)}" for _ in range(3)]) for k in keys]
        for node in nodes:
            node.doc_ids = sorted({ids.doc_id_of(c) for c in node.source_chunks})
        edges = {}
        while len(edges) < n:
            a, b = sorted(rng.sample(range(n_entities), 2))
            edges[(keys[a], keys[b])] = GraphEdge(source=keys[a], target=keys[b], keywords=rng.choice(self.vocab),
                                                  description=self.words(15),
                                                  source_chunks=nodes[a].source_chunks[:1], weight=1.0)
        lib.graph.apply(upsert_nodes=nodes, upsert_edges=list(edges.values()))
        lib.entity_vectors.upsert([entity_vector_id(k) for k in keys], self.unit(len(keys)), keys,
                                  [{"key": k} for k in keys])
        pairs = list(edges)
        lib.relation_vectors.upsert([relation_vector_id(*p) for p in pairs], self.unit(len(pairs)),
                                    [f"{a} — {b}" for a, b in pairs], [{"source": a, "target": b} for a, b in pairs])
        return keys


def synthetic(args) -> int:
    root = Path(args.workspace or tempfile.mkdtemp(prefix="bench-query-synth-"))
    ws = Workspace(root).ensure()
    if not ws.settings_path.exists():
        ws.save_settings(Settings())
    lib = open_library(ws)
    n = args.chunks
    rng = random.Random(7)
    gen = Synthetic(rng, lib.embedder().dim)
    if lib.windows.count() < n:
        t = time.perf_counter()
        for d in range(n // SYNTHETIC_PER_DOC):
            doc_id = f"synthetic{d:06d}"
            lib.documents.insert(Document(id=doc_id, filename=f"{doc_id}.pdf", title=doc_id))
            chunks = gen.chunks(doc_id)
            lib.chunks.put_doc_chunks(doc_id, chunks)
            gen.add_windows(lib, chunks)
            _mark_ready(lib, doc_id, "synthetic", chunk_count=len(chunks))
            if d % 100 == 0:
                print(f"  {(d + 1) * SYNTHETIC_PER_DOC} chunks ({time.perf_counter() - t:.0f} s)", file=sys.stderr)
        gen.add_graph(lib, n)
        print(f"  generated in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    print(f"workspace {root}: {lib.windows.count()} chunks/windows, graph {lib.graph.counts()}")
    questions = [" ".join(rng.choices(gen.vocab[:3000], k=8)) + "?" for _ in range(30)]
    retrieval_latency(lib, questions)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("hotpot")
    p.add_argument("--workspace")
    p.add_argument("--questions", type=int, default=100)
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--variants", action="store_true", help="also without rerank and without BM25")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE[,KEY=VALUE]",
                   help="also a row with these query settings (QueryConfig fields), e.g. ppr_damping=0.3")
    p.add_argument("--halves", action="store_true",
                   help="also complete-evidence recall of the first and the second half of the questions (tune on "
                        "the first, the second is held out)")
    p.add_argument("--query-only", action="store_true",
                   help="ask the workspace as it is (indexed before, possibly by another version of this script)")
    p.set_defaults(func=hotpot)
    p = sub.add_parser("latency")
    p.add_argument("--workspace", required=True)
    p.set_defaults(func=latency)
    p = sub.add_parser("synthetic")
    p.add_argument("--workspace")
    p.add_argument("--chunks", type=int, default=100_000)
    p.set_defaults(func=synthetic)
    args = parser.parse_args()
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
