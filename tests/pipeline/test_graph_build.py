"""The entity graph end to end: real parsing, SQLite, Chroma, the embedding model and spaCy; the LLM path through
a real local HTTP server speaking the OpenAI protocol (tests/openai_server.py)."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import networkx as nx
import pytest

from core.content.content_list import load_content_list
from core.graph.stats import graph_stats
from core.library import open_library
from core.pipeline.documents import add_mineru_output, add_pdf, delete_document
from core.pipeline.graph.build import commit_document, current_extractor, extract_document
from core.pipeline.graph.duplicates import merge_entities, suggest_duplicates
from core.pipeline.graph.stage import process_graph_queue, recover_graph
from core.pipeline.ingest import process_queue
from core.schema.graph import MENTIONED_IN, RELATED
from core.settings.workspace import Workspace
from tests.graph_papers import (
    BERT_TITLE,
    fast_workspace,
)
from tests.paths import REPO
from tests.pipeline.graph_build_helpers import extraction_times, node_named, snapshot
from tests.presentation.explorer_helpers import ingest

# ------------------------------------------------------------------------------------------- LLM-free path

@pytest.fixture(scope="module")
def spacy_ws(tmp_path_factory, pdf_dir):
    root = tmp_path_factory.mktemp("graph-spacy")
    lib = open_library(fast_workspace(root))
    ids = ingest(lib, pdf_dir / "bert.pdf", pdf_dir / "roberta.pdf")
    return root, ids


def test_llm_free_graph_has_merged_entities_with_provenance(spacy_ws):
    root, (bert, roberta) = spacy_ws
    lib = open_library(Workspace(root))
    node = node_named(lib, "BERT")
    assert node is not None and node.extractors == ["spacy"]
    assert node.doc_ids == sorted([bert, roberta])  # one node for both papers' mentions
    assert all(c.split(":")[0] in (bert, roberta) for c in node.source_chunks)
    assert "BERT" in node.description
    glue = node_named(lib, "GLUE")
    assert glue is not None
    # Relations come from sentences and carry them as descriptions.
    related = [e for e in lib.graph.node_edges(node.key) if e.relation == RELATED]
    assert related and all(e.description and e.source_chunks and e.doc_ids for e in related)
    assert any("GLUE" in e.description for e in related)
    # Every document processed says which extractor built its part of the graph.
    papers = lib.graph_sources.papers()
    assert {papers[bert].extractor, papers[roberta].extractor} == {"spacy"}
    assert papers[bert].entity_count > 5 and papers[bert].relation_count > 3
    # Nothing generic or numeric became a node.
    keys = {n.key for n in lib.graph.all_nodes()}
    assert not keys & {"we", "86.7", "it", "this paper"}


def test_paper_nodes_years_and_mentions(spacy_ws):
    root, (bert, roberta) = spacy_ws
    lib = open_library(Workspace(root))
    paper = lib.graph.get_node(f"paper:{bert}")
    assert paper.type == "paper" and paper.name == BERT_TITLE and paper.year == 2018
    assert lib.graph.get_node(f"paper:{roberta}").year == 2020
    node = node_named(lib, "BERT")
    mentions = {e.target: e for e in lib.graph.node_edges(node.key) if e.relation == MENTIONED_IN}
    assert set(mentions) == {f"paper:{bert}", f"paper:{roberta}"}
    assert mentions[f"paper:{bert}"].year == 2018 and mentions[f"paper:{bert}"].weight >= 1


def test_entity_and_relation_vectors_follow_the_graph(spacy_ws):
    root, _ = spacy_ws
    lib = open_library(Workspace(root))
    stats = graph_stats(lib)
    assert lib.entity_vectors.count() == stats.entities
    assert lib.relation_vectors.count() == stats.relations
    hit = lib.entity_vectors.query(lib.embedder().embed_query("BERT language representation model"), top_k=3)
    assert any(m.metadata["name"] == "BERT" for m in hit)


def test_communities_and_reports_cover_the_entities(spacy_ws):
    root, _ = spacy_ws
    lib = open_library(Workspace(root))
    nodes = [n for n in lib.graph.all_nodes() if not n.is_paper]
    assert all(n.community is not None for n in nodes)
    reports = lib.graph_sources.community_reports()
    assert reports and all(r["title"] and r["summary"] for r in reports)
    assert reports[0]["generated_by"] == "digest"  # no LLM configured: a digest, not a summary


def test_insert_delete_insert_gives_the_same_graph(tmp_path, pdf_dir):
    lib = open_library(fast_workspace(tmp_path / "ws"))
    (bert,) = ingest(lib, pdf_dir / "bert.pdf")
    only_bert = snapshot(lib)
    (roberta,) = ingest(lib, pdf_dir / "roberta.pdf")
    both = snapshot(lib)
    assert both != only_bert
    delete_document(lib, roberta)
    assert snapshot(lib) == only_bert  # RoBERTa's contributions are gone, BERT's nodes rebuilt from what remains
    assert node_named(lib, "RoBERTa") is None and lib.graph.get_node(f"paper:{roberta}") is None
    ingest(lib, pdf_dir / "roberta.pdf")
    assert snapshot(lib) == both
    delete_document(lib, bert)
    delete_document(lib, roberta)
    assert graph_stats(lib).nodes == 0 and lib.entity_vectors.count() == 0 and lib.relation_vectors.count() == 0


def test_a_crash_between_commit_and_rebuild_is_repaired(tmp_path, pdf_dir):
    reference = open_library(fast_workspace(tmp_path / "reference"))
    ingest(reference, pdf_dir / "bert.pdf")
    lib = open_library(fast_workspace(tmp_path / "crashed"))
    (doc_id,) = [add_pdf(lib, "bert.pdf", (pdf_dir / "bert.pdf").read_bytes()).doc_id]
    process_queue(lib)
    lib.queue.claim_graph_next("a-graph-worker-that-dies")
    outcome = extract_document(lib, doc_id, current_extractor(lib))
    commit_document(lib, doc_id, BERT_TITLE, load_content_list(lib.workspace.parsed_dir(doc_id) /
                                                              "content_list.json"), outcome)
    # ...the process dies here: contributions committed, nothing merged, the paper left extracting by a worker
    # that is gone.
    assert graph_stats(lib).pending_changes > 0
    extracted = extraction_times(lib)
    # The restart, as the app's worker and `python -m core graph build` start: recover, then the graph stage.
    restarted = open_library(Workspace(tmp_path / "crashed"))
    assert recover_graph(restarted) == [doc_id]
    (done,) = process_graph_queue(restarted)
    assert done.id == doc_id and done.graph_status == "done", done.graph_message
    assert graph_stats(restarted).pending_changes == 0
    assert extraction_times(restarted) == extracted  # what was extracted before the crash is reused, not redone
    assert snapshot(restarted) == snapshot(reference)


def test_merging_duplicates_rewires_edges_and_survives_new_papers(tmp_path, pdf_dir):
    lib = open_library(fast_workspace(tmp_path / "ws"))
    ingest(lib, pdf_dir / "bert.pdf")
    bert, glue = node_named(lib, "BERT"), node_named(lib, "GLUE")
    def neighbours(key):
        return {e.target if e.source == key else e.source for e in lib.graph.node_edges(key)}

    expected = (neighbours(bert.key) | neighbours(glue.key)) - {bert.key, glue.key}
    kept = merge_entities(lib, ["GLUE"], into="BERT")
    assert kept == bert.key and node_named(lib, "GLUE") is None
    merged = lib.graph.get_node(kept)
    assert set(merged.source_chunks) == set(bert.source_chunks) | set(glue.source_chunks)
    assert all(glue.key not in pair for e in lib.graph.all_edges() for pair in [e.pair])
    assert neighbours(kept) == expected  # GLUE's edges now end at BERT; the BERT—GLUE edge would be a loop
    # A paper added after the merge maps GLUE to the kept entity too.
    (roberta,) = ingest(lib, pdf_dir / "roberta.pdf")
    assert node_named(lib, "GLUE") is None and roberta in lib.graph.get_node(kept).doc_ids
    assert lib.entity_vectors.count() == graph_stats(lib).entities


def test_duplicate_suggestions_come_from_embeddings(spacy_ws):
    root, _ = spacy_ws
    lib = open_library(Workspace(root))
    suggestions = suggest_duplicates(lib, threshold=0.3, limit=500)
    assert suggestions and all(s.similarity >= 0.3 and s.keep != s.merge for s in suggestions)
    assert suggestions == sorted(suggestions, key=lambda s: -s.similarity)


def test_duplicate_suggestions_skip_numbered_variants_and_unrelated_names():
    from core.graph.names import names_related, numbered_variants

    assert numbered_variants("TAPAS-base 4p", "TAPAS-base 8p") and numbered_variants("Paper-1", "Paper-2")
    assert not numbered_variants("BERT", "RoBERTa")
    assert names_related("BERT", "BERT-large") and names_related("LLMs", "large language models")
    assert names_related("GLUE", "General Language Understanding Evaluation")
    # Entities described by one sentence embed close together; their names tell them apart.
    assert not names_related("ChemProt", "micro-F1")


@pytest.mark.slow
def test_cli_graph_stats_and_exports(spacy_ws, tmp_path):
    root, _ = spacy_ws
    env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(root))

    def cli(*args):
        out = subprocess.run([sys.executable, "-m", "core", "graph", *args], cwd=REPO, env=env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
        return out.stdout

    stats = json.loads(cli("stats", "--json"))
    assert stats["papers"] == 2 and stats["entities"] > 10 and stats["extractors"] == {"spacy": 2}
    assert "entities" in cli("stats")
    cli("export", "--format", "graphml", "--out", str(tmp_path / "g.graphml"))
    graph = nx.read_graphml(tmp_path / "g.graphml")
    assert graph.number_of_nodes() == stats["nodes"] and graph.number_of_edges() == stats["edges"]
    cli("export", "--format", "json", "--out", str(tmp_path / "g.json"))
    data = json.loads((tmp_path / "g.json").read_text())
    assert len(data["nodes"]) == stats["nodes"] and all("source_chunks" in e for e in data["links"])
    cli("export", "--format", "csv", "--out", str(tmp_path / "g.csv"))
    with (tmp_path / "g.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == stats["nodes"] and json.loads(rows[0]["source_chunks"])
    with (tmp_path / "g.edges.csv").open(newline="") as fh:
        assert len(list(csv.DictReader(fh))) == stats["edges"]


def test_bibliography_entries_are_kept(tmp_path):
    folder = tmp_path / "mineru-out"
    (folder / "images").mkdir(parents=True)
    items = [
        {"type": "text", "text": "Citation Graphs of Imaginary Papers", "text_level": 1, "page_idx": 0},
        {"type": "text", "text": "Published at NeurIPS 2021. BERT and GLUE appear in this passage together.",
         "page_idx": 0},
        {"type": "list", "sub_type": "reference", "page_idx": 1, "list_items": [
            "[1] J. Devlin et al. BERT: pre-training of deep bidirectional transformers. NAACL, 2019.",
            "[2] A. Wang et al. GLUE: a multi-task benchmark. ICLR, 2019."]},
    ]
    (folder / "paper_content_list.json").write_text(json.dumps(items))
    lib = open_library(fast_workspace(tmp_path / "ws"))
    doc_id = add_mineru_output(lib, folder).doc_id
    process_queue(lib)
    process_graph_queue(lib)
    refs = lib.graph_sources.references(doc_id)
    assert [r.year for r in refs] == [2019, 2019] and "GLUE" in refs[1].text
    assert lib.graph.get_node(f"paper:{doc_id}").year == 2021
