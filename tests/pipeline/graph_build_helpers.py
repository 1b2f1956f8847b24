"""What the graph-build tests share: the whole graph as a comparable snapshot, a node by name, and the stored
extractions."""
from __future__ import annotations

from dataclasses import asdict

from core.graph.merge import normalize_key


def snapshot(lib) -> dict:
    """The whole graph and its vectors, minus community ids (recomputed as a whole after every change)."""
    nodes = sorted((asdict(n) | {"community": None} for n in lib.graph.all_nodes()), key=lambda n: n["key"])
    edges = sorted((asdict(e) for e in lib.graph.all_edges()), key=lambda e: (e["source"], e["target"]))
    return {"nodes": nodes, "edges": edges, "entity_vectors": lib.entity_vectors.count(),
            "relation_vectors": lib.relation_vectors.count()}


def node_named(lib, name: str):
    return lib.graph.get_node(normalize_key(name))


def extracted_rows(lib) -> int:
    with lib.db.connect() as conn:
        return conn.execute("SELECT COUNT(*) FROM graph_extractions").fetchone()[0]


def extraction_times(lib) -> dict[str, float]:
    """Chunk id → when its extraction was stored: a chunk extracted again gets a new time."""
    with lib.db.connect() as conn:
        return dict(conn.execute("SELECT chunk_id, created_at FROM graph_extractions").fetchall())


# Short documents that share entities (BERT, SQuAD, GLUE, Google): a batch merges each shared one once, and
# batches built apart merge the same nodes.
SHARED_ENTITY_DOCS = [
    ("BERT", "BERT is a language model from Google. BERT was pre-trained on BooksCorpus and English Wikipedia and "
             "fine-tuned on GLUE and SQuAD."),
    ("RoBERTa", "RoBERTa, from Facebook AI, retrains BERT longer on CC-News and drops next sentence prediction; it "
                "improves on GLUE, RACE and SQuAD."),
    ("SQuAD", "The Stanford Question Answering Dataset (SQuAD) is a reading comprehension benchmark built from "
              "Wikipedia articles by crowdworkers at Stanford University."),
    ("GLUE", "The General Language Understanding Evaluation (GLUE) benchmark collects nine tasks such as MNLI, QQP "
             "and SST-2; BERT and RoBERTa report GLUE scores."),
    ("ALBERT", "ALBERT from Google Research shares parameters across layers to shrink BERT, and it reaches new "
               "results on GLUE, RACE and SQuAD with fewer parameters."),
    ("ELECTRA", "ELECTRA trains a discriminator to detect replaced tokens instead of masked language modelling as "
                "in BERT; Stanford University and Google released it."),
]
