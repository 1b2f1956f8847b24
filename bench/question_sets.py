"""The question sets bench/answers.py asks, with the papers they are about: each set's PDF folder, manifest and
questions; reading a split, a fixed sample of it, and building a workspace of its papers through the product path."""
from __future__ import annotations

import json
import random
import time
from pathlib import Path

from core.library import Library
from core.schema.records import DocStatus, GraphStatus

HERE = Path(__file__).resolve().parent
PAPERS = HERE.parent.parent / "shared" / "corpus" / "papers"
QUESTIONS = HERE / "papers_qa.jsonl"
# The independent set (bench/qa_corpus): 43 papers rebuilt by bench/qa_corpus/build.py, questions written by people
# who never read the code (bench/qa_corpus/WRITING_BRIEF.md), test split frozen (assemble.py --check).
QA_DIR = HERE / "qa_corpus"
# Stop 34's fresh frozen test (bench/fresh_corpus): 28 papers never used before, 277 questions, all test.
FRESH_DIR = HERE / "fresh_corpus"
# --set: (PDF folder, manifest (None: the folder's own), questions)
SETS = {"papers": (PAPERS, None, QUESTIONS),
        "qa": (HERE.parent.parent / "qa_corpus" / "pdfs", QA_DIR / "manifest.json", QA_DIR / "questions.jsonl"),
        "fresh": (HERE.parent.parent / "fresh_corpus" / "pdfs", FRESH_DIR / "manifest.json",
                  FRESH_DIR / "questions.jsonl")}
SAMPLE_SEED = 20261207


def load_questions(split: str, path: Path = QUESTIONS) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows if split == "all" else [r for r in rows if r.get("split") == split]


def sample_questions(questions: list[dict], n: int, every_unanswerable: bool = False, types: str = "") -> list[dict]:
    """A fixed sample of n questions (every writer and type can fall in it); with `every_unanswerable`, n answerable
    ones and every unanswerable one. n = 0 or more than there are: all of them. `types` ("yesno,how"): only those
    question types first (model runs are slow, and the prompt cache keeps what was asked)."""
    if types:
        questions = [q for q in questions if q.get("type") in set(types.split(","))]
    if not n or n >= len(questions):
        return questions
    pool = [q for q in questions if q["answers"]] if every_unanswerable else questions
    kept = random.Random(SAMPLE_SEED).sample(pool, min(n, len(pool)))
    kept += [q for q in questions if not q["answers"]] if every_unanswerable else []
    return sorted(kept, key=lambda q: q["id"])


def build_papers(lib: Library, folder: Path = PAPERS, manifest_path: Path | None = None) -> None:
    """The papers of a manifest through the product path; a reused workspace only does what is missing."""
    from core.pipeline.documents import add_pdf
    from core.pipeline.graph.stage import process_graph_queue
    from core.pipeline.ingest import process_queue

    manifest = json.loads((manifest_path or folder / "manifest.json").read_text())
    t = time.perf_counter()
    added = [add_pdf(lib, m["file"], (folder / m["file"]).read_bytes()) for m in manifest]
    new = [a for a in added if a.outcome == "added"]
    docs = process_queue(lib)
    ingest_s = time.perf_counter() - t
    for doc in lib.documents.list():  # a graph an interrupted run left half-built: this bench is the only worker
        if doc.status == DocStatus.READY and doc.graph_status in (GraphStatus.FAILED, GraphStatus.EXTRACTING):
            lib.documents.set_graph_status(doc.id, GraphStatus.PENDING)
    t = time.perf_counter()
    process_graph_queue(lib)
    graph_s = time.perf_counter() - t
    ready = [d for d in lib.documents.list() if d.status == DocStatus.READY]
    print(f"workspace {lib.workspace.root}: {len(ready)}/{len(manifest)} papers ready "
          f"({len(new)} added now; ingest {ingest_s:.0f} s, graph {graph_s:.0f} s), graph {lib.graph.counts()}")
    for doc in docs:
        if doc.status != DocStatus.READY:
            print(f"  {doc.filename}: {doc.status.value} — {doc.message}")
