"""The entity graph end to end: real parsing, SQLite, Chroma, the embedding model and spaCy; the LLM path through
a real local HTTP server speaking the OpenAI protocol (tests/openai_server.py)."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import networkx as nx
import pytest

from core.library import open_library
from core.pipeline.documents import add_mineru_output, add_pdf, delete_document, retry_document
from core.pipeline.graph.build import commit_document, current_extractor, extract_document
from core.pipeline.graph.duplicates import merge_entities, suggest_duplicates
from core.pipeline.graph.stage import process_graph_queue, recover_graph
from core.pipeline.graph.stats import graph_stats
from core.pipeline.ingest import process_queue
from core.pipeline.parsing.content_list import load_content_list
from core.schema.graph import MENTIONED_IN, RELATED
from core.schema.records import DocStatus
from core.settings.workspace import Workspace
from tests.graph_papers import (
    BERT_TITLE,
    extraction_reply,
    fast_workspace,
    is_extraction_request,
    make_bert_pdf,
    make_roberta_pdf,
)
from tests.openai_server import OpenAIReplayServer, Reply, last_user_message
from tests.paths import REPO
from tests.presentation.explorer_helpers import ingest


def snapshot(lib) -> dict:
    """The whole graph and its vectors, minus community ids (recomputed as a whole after every change)."""
    nodes = sorted((asdict(n) | {"community": None} for n in lib.graph.all_nodes()), key=lambda n: n["key"])
    edges = sorted((asdict(e) for e in lib.graph.all_edges()), key=lambda e: (e["source"], e["target"]))
    return {"nodes": nodes, "edges": edges, "entity_vectors": lib.entity_vectors.count(),
            "relation_vectors": lib.relation_vectors.count()}


def node_named(lib, name: str):
    from core.pipeline.graph.merge import normalize_key

    return lib.graph.get_node(normalize_key(name))


@pytest.fixture(scope="module")
def pdf_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("graph-pdfs")
    make_bert_pdf(folder)
    make_roberta_pdf(folder)
    return folder


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
    lib.documents.claim_graph_next("a-graph-worker-that-dies")
    outcome = extract_document(lib, doc_id, current_extractor(lib))
    commit_document(lib, doc_id, BERT_TITLE, load_content_list(lib.workspace.parsed_dir(doc_id) /
                                                              "content_list.json"), outcome)
    # ...the process dies here: contributions committed, nothing merged, the paper left extracting by a worker
    # that is gone.
    assert graph_stats(lib).pending_changes > 0
    extracted = _extraction_times(lib)
    # The restart, as the app's worker and `python -m core graph build` start: recover, then the graph stage.
    restarted = open_library(Workspace(tmp_path / "crashed"))
    assert recover_graph(restarted) == [doc_id]
    (done,) = process_graph_queue(restarted)
    assert done.id == doc_id and done.graph_status == "done", done.graph_message
    assert graph_stats(restarted).pending_changes == 0
    assert _extraction_times(restarted) == extracted  # what was extracted before the crash is reused, not redone
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
    from core.pipeline.graph.duplicates import names_related, numbered_variants

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


# ------------------------------------------------------------------------------------------------ LLM path

@pytest.fixture()
def llm_server():
    with OpenAIReplayServer(default=extraction_reply, model="replay-extractor") as server:
        yield server


def llm_workspace(root: Path, server: OpenAIReplayServer) -> Workspace:
    return fast_workspace(root, provider="openai", base_url=server.url, model=server.model, max_retries=2)


def test_llm_graph_and_reingesting_makes_no_llm_calls(tmp_path, pdf_dir, llm_server):
    lib = open_library(llm_workspace(tmp_path / "ws", llm_server))
    bert, roberta = ingest(lib, pdf_dir / "bert.pdf", pdf_dir / "roberta.pdf")
    chunks = len(lib.chunks.by_doc(bert)) + len(lib.chunks.by_doc(roberta))
    calls = len(llm_server.chat_requests)
    extraction_calls = sum(map(is_extraction_request, llm_server.chat_requests))
    assert extraction_calls == 2 * chunks  # one extraction and one gleaning round per chunk
    reports = lib.graph_sources.community_reports()
    assert any(r["generated_by"] == "openai:replay-extractor" for r in reports)  # an LLM wrote the reports
    node = node_named(lib, "RoBERTa")
    assert node.type == "method" and node.extractors == ["llm:openai:replay-extractor"]
    assert lib.graph_sources.papers()[bert].llm_calls == 2 * len(lib.chunks.by_doc(bert))
    before = snapshot(lib)
    # Re-parse an unchanged paper, then delete it and upload it again: the graph is rebuilt without one call.
    retry_document(lib, bert)
    process_queue(lib)
    process_graph_queue(lib)
    delete_document(lib, roberta)
    ingest(lib, pdf_dir / "roberta.pdf")
    assert len(llm_server.chat_requests) == calls
    assert snapshot(lib) == before
    from core.models.llm.cache import usage_summary
    from core.presentation.display import llm_usage_text

    usage = usage_summary(lib.db)
    assert usage["calls"] == calls and usage["cache_hits"] >= 2 * len(lib.chunks.by_doc(roberta))
    assert usage["by_purpose"]["extract"]["calls"] == chunks
    assert f"{calls} LLM calls made" in llm_usage_text(usage)


@pytest.mark.slow
def test_descriptions_past_the_token_budget_are_summarised_by_the_llm(tmp_path, pdf_dir, llm_server):
    ws = llm_workspace(tmp_path / "ws", llm_server)
    settings = ws.settings()
    settings.graph.description_token_budget = 40  # BERT's sentences from several chunks are over it
    ws.save_settings(settings)
    lib = open_library(ws)
    ingest(lib, pdf_dir / "bert.pdf", pdf_dir / "roberta.pdf")
    bert = node_named(lib, "BERT")
    assert len(bert.source_chunks) > 1 and bert.description.startswith("Summary of BERT")
    summaries = [r for r in llm_server.chat_requests if r["messages"][-1]["content"].rstrip().endswith("Description:")]
    bert_prompts = [r["messages"][-1]["content"] for r in summaries if '"BERT"' in r["messages"][-1]["content"]]
    assert bert_prompts and "We introduce BERT" in bert_prompts[0]  # the passages it summarised
    # Without an LLM the same budget cuts the description instead and says how much was left out.
    plain = open_library(fast_workspace(tmp_path / "plain"))
    settings = plain.workspace.settings()
    settings.graph.description_token_budget = 40
    plain.workspace.save_settings(settings)
    plain = open_library(plain.workspace)
    ingest(plain, pdf_dir / "bert.pdf", pdf_dir / "roberta.pdf")
    assert "more passages)" in node_named(plain, "BERT").description


@pytest.mark.slow
def test_llm_failures_and_bad_replies_never_fail_the_paper(tmp_path, pdf_dir, llm_server):
    llm_server.when("RoBERTa removes", Reply(content="this is not an extraction at all ###"))
    llm_server.when("XLNet", Reply(status=500))
    lib = open_library(llm_workspace(tmp_path / "ws", llm_server))
    add_pdf(lib, "roberta.pdf", (pdf_dir / "roberta.pdf").read_bytes())
    process_queue(lib)
    (doc,) = process_graph_queue(lib)
    assert doc.graph_status == "done"
    chunks = len(lib.chunks.by_doc(doc.id))
    assert f"; 1 of {chunks} chunks could not be extracted (" in doc.graph_message, doc.graph_message
    assert "): retry the graph to redo them" in doc.graph_message, doc.graph_message
    assert node_named(lib, "RoBERTa") is not None  # the chunks that worked are in the graph
    # The endpoint recovers: retrying the graph redoes only the failed chunk.
    llm_server.rules.clear()
    before = len(llm_server.chat_requests)
    from core.pipeline.graph.stage import retry_graph

    retry_graph(lib, doc.id)
    (doc,) = process_graph_queue(lib)
    assert doc.graph_status == "done" and "could not" not in doc.graph_message
    # That chunk's extraction and gleaning; the other chunks come from the cache. (Community reports, which
    # change with the graph, are asked for again.)
    assert sum(map(is_extraction_request, llm_server.chat_requests[before:])) == 2
    assert node_named(lib, "XLNet") is not None


@pytest.mark.slow
def test_a_long_extraction_pauses_for_a_new_upload_and_resumes(tmp_path, pdf_dir):
    import threading

    with OpenAIReplayServer(default=lambda body: Reply(content=extraction_reply(body).content, delay_s=0.3),
                            model="replay-extractor") as server:
        lib = open_library(fast_workspace(tmp_path / "ws", provider="openai", base_url=server.url,
                                          model=server.model, concurrency=1))  # one chunk at a time: slow
        bert = add_pdf(lib, "bert.pdf", (pdf_dir / "bert.pdf").read_bytes()).doc_id
        process_queue(lib)
        results: list = []
        worker = threading.Thread(target=lambda: results.extend(
            process_graph_queue(lib, yield_to_uploads=True, communities=False)))
        worker.start()
        deadline = time.time() + 60
        while time.time() < deadline and not _extracted_rows(lib):
            time.sleep(0.1)
        roberta = add_pdf(lib, "roberta.pdf", (pdf_dir / "roberta.pdf").read_bytes()).doc_id  # an upload arrives
        worker.join(timeout=120)
        (paused,) = results
        assert paused.id == bert and paused.graph_status == "pending"
        assert lib.documents.get(bert).status == DocStatus.READY  # searchable all along
        assert 0 < _extracted_rows(lib) < len(lib.chunks.by_doc(bert))  # stopped part-way, work kept
        assert process_queue(lib)[0].id == roberta  # the upload is parsed first...
        done = process_graph_queue(lib)  # ...then both graphs are built, BERT's from where it stopped
        assert {d.id: d.graph_status for d in done} == {bert: "done", roberta: "done"}
        assert node_named(lib, "RoBERTa") and bert in node_named(lib, "BERT").doc_ids


@pytest.mark.slow
def test_killed_mid_extraction_resumes_to_the_same_graph(tmp_path, pdf_dir):
    with OpenAIReplayServer(default=lambda body: Reply(content=extraction_reply(body).content, delay_s=0.4),
                            model="replay-extractor") as server:
        reference = open_library(llm_workspace(tmp_path / "reference", server))
        ingest(reference, pdf_dir / "bert.pdf", pdf_dir / "roberta.pdf")
        expected = snapshot(reference)

        root = tmp_path / "killed"
        lib = open_library(llm_workspace(root, server))
        for name in ("bert.pdf", "roberta.pdf"):
            add_pdf(lib, name, (pdf_dir / name).read_bytes())
        process_queue(lib)
        env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(root))
        proc = subprocess.Popen([sys.executable, "-m", "core", "graph", "build", "-q"], cwd=REPO, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while time.time() < deadline and not _extracted_rows(lib):
            time.sleep(0.2)
        proc.kill()
        proc.wait()
        chunks = {c.id: c.text for d in lib.documents.list() for c in lib.chunks.by_doc(d.id)}
        stored = _extraction_times(lib)  # chunk id → when it was extracted, as the kill left them
        assert stored, "the build was killed before it extracted anything"
        assert len(stored) < len(chunks), "the build finished before it was killed: nothing left to resume"
        before = len(server.chat_requests)
        out = subprocess.run([sys.executable, "-m", "core", "graph", "build", "-q"], cwd=REPO, env=env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
        resumed = open_library(Workspace(root))
        assert snapshot(resumed) == expected
        # The resumed build extracted only the chunks the killed one had not stored: those keep their rows, and
        # no extraction prompt of the restart holds their text. (A chunk whose reply the killed build had cached
        # but not stored is taken from the cache, so the restart may ask for fewer than all the missing ones.)
        after = _extraction_times(resumed)
        assert set(after) == set(chunks) and {c: after[c] for c in stored} == stored
        prompts = [last_user_message(r) for r in server.chat_requests[before:]
                   if "\nOutput:" in last_user_message(r)]
        asked = [cid for prompt in prompts for cid, text in chunks.items() if text in prompt]
        assert len(asked) == len(prompts) and len(set(asked)) == len(asked), "one prompt per chunk, never twice"
        assert asked and not set(asked) & set(stored), (asked, sorted(stored))


def _extracted_rows(lib) -> int:
    with lib.db.connect() as conn:
        return conn.execute("SELECT COUNT(*) FROM graph_extractions").fetchone()[0]


def _extraction_times(lib) -> dict[str, float]:
    """Chunk id → when its extraction was stored: a chunk extracted again gets a new time."""
    with lib.db.connect() as conn:
        return dict(conn.execute("SELECT chunk_id, created_at FROM graph_extractions").fetchall())
