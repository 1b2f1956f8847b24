"""Deleting a paper at every stage of its ingest and graph stage leaves nothing of it anywhere, and the garbage
collector removes what older versions left. Real parts throughout: MinerU output folders imported (faster than
parsing), the embedding model, SQLite, Chroma, the spaCy extractor; a second thread or a second process where
the race needs one. `footprint` (core.pipeline.gc) counts everything stored under a doc id in every store."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import pytest

from core.cli import main as cli_main
from core.library import Library, open_library
from core.pipeline.documents import add_mineru_output, add_pdf, delete_document
from core.pipeline.gc import collect_garbage, footprint, stray_records
from core.pipeline.graph.stage import process_graph_queue
from core.pipeline.ingest import process_queue
from core.schema.records import DocStatus, GraphStatus
from tests import pdfs
from tests.graph_papers import BERT_SECTIONS, BERT_TITLE, ROBERTA_SECTIONS, ROBERTA_TITLE, fast_workspace
from tests.paths import REPO

OLD = time.time() - 3600  # an mtime past the collector's age guard


def mineru_output(folder: Path, title: str, sections) -> Path:
    """A MinerU output folder: title, headed sections and one results table (an item chunk with an offline
    description, and result records)."""
    items = [{"type": "text", "text_level": 1, "text": title, "page_idx": 0, "bbox": [100, 40, 900, 80]}]
    for n, (heading, paragraphs) in enumerate(sections):
        items.append({"type": "text", "text_level": 2, "text": heading, "page_idx": n, "bbox": [100, 100, 900, 120]})
        items += [{"type": "text", "text": p, "page_idx": n, "bbox": [100, 130, 900, 300]} for p in paragraphs]
    items.append({"type": "table", "page_idx": 0, "bbox": [100, 400, 900, 600],
                  "table_caption": ["Table 1: Accuracy on the GLUE benchmark."],
                  "table_body": "<table><tr><td>Model</td><td>MNLI</td></tr><tr><td>BERT</td><td>80.5</td></tr>"
                                "<tr><td>RoBERTa</td><td>88.5</td></tr></table>"})
    out = folder / title.split()[0].lower() / "auto"
    out.mkdir(parents=True)
    (out / "paper_content_list.json").write_text(json.dumps(items))
    return out.parent


@pytest.fixture
def lib(tmp_path) -> Library:
    return open_library(fast_workspace(tmp_path / "ws"))


def add_bert(lib: Library, tmp_path: Path) -> str:
    return add_mineru_output(lib, mineru_output(tmp_path / "in-bert", BERT_TITLE, BERT_SECTIONS)).doc_id


def add_roberta(lib: Library, tmp_path: Path) -> str:
    return add_mineru_output(lib, mineru_output(tmp_path / "in-roberta", ROBERTA_TITLE, ROBERTA_SECTIONS)).doc_id


def graph_snapshot(lib: Library) -> dict:
    nodes = sorted((asdict(n) | {"community": None} for n in lib.graph.all_nodes()), key=lambda n: n["key"])
    edges = sorted((asdict(e) for e in lib.graph.all_edges()), key=lambda e: (e["source"], e["target"]))
    phrases = sorted((c, p) for c, keys in lib.graph_sources.chunk_phrases().items() for p in keys)
    return {"nodes": nodes, "edges": edges, "entity_vectors": sorted(lib.entity_vectors.all_ids()),
            "relation_vectors": sorted(lib.relation_vectors.all_ids()), "phrases": phrases}


def assert_gone(lib: Library, doc_id: str) -> None:
    left = +footprint(lib, [doc_id])  # unary plus: only the kinds with something left
    assert left == Counter(), f"left behind by {doc_id[:12]}: {dict(left)}"
    assert +stray_records(lib) == Counter(), dict(stray_records(lib))


def delete_when(lib: Library, doc_id: str, stage: str, seen: list):
    """An on_progress hook (the one the app and the CLI pass) that deletes the paper the first time its stage
    detail matches the regular expression `stage`, from inside the worker's own thread."""
    def hook(progress_doc: str, detail: str, fraction: float) -> None:
        if progress_doc == doc_id and re.match(stage, detail) and not seen:
            seen.append(detail)
            delete_document(lib, doc_id)
    return hook


# ---------------------------------------------------------------------------------------------------- ingest

def test_delete_while_queued_leaves_nothing(lib, tmp_path):
    doc_id = add_bert(lib, tmp_path)
    delete_document(lib, doc_id)
    assert process_queue(lib) == []
    assert_gone(lib, doc_id)


@pytest.mark.parametrize("stage", ["importing MinerU output", "describing tables", "embedding", "writing the index"])
def test_delete_while_parsing_or_indexing_leaves_nothing_and_the_queue_goes_on(lib, tmp_path, stage):
    doc_id, other = add_bert(lib, tmp_path), add_roberta(lib, tmp_path)
    seen, deleted = [], []
    done = process_queue(lib, on_progress=delete_when(lib, doc_id, stage, seen), on_deleted=deleted.append)
    assert seen, f"the stage {stage!r} was never reported"
    assert [d.id for d in deleted] == [doc_id]
    assert [(d.id, d.status) for d in done] == [(other, DocStatus.READY)]
    assert_gone(lib, doc_id)
    assert footprint(lib, [other])["windows"] > 0 and footprint(lib, [other])["results"] == 2  # the other is whole


# ---------------------------------------------------------------------------------------------------- graph

@pytest.mark.parametrize("stage", ["extracting entities with", "extracting entities: 1/", "merging into the graph",
                                   r"merging \d+ nodes"])
def test_delete_during_the_graph_stage_leaves_no_ghost(lib, tmp_path, stage):
    """Extracting (before and between chunks), just before the commit, and inside the rebuild after it: the
    worker's own thread deletes the paper from its progress callback."""
    keep, doc_id = add_roberta(lib, tmp_path), add_bert(lib, tmp_path)
    assert len(process_queue(lib)) == 2
    seen: list = []
    done = process_graph_queue(lib, on_progress=delete_when(lib, doc_id, stage, seen), communities=False)
    assert seen, f"the stage {stage!r} was never reported"
    assert [d.id for d in done] == [keep]
    assert_gone(lib, doc_id)
    assert not [n.key for n in lib.graph.all_nodes() if doc_id in n.doc_ids]


def test_delete_from_another_thread_between_commit_and_rebuild_waits_for_the_rebuild(lib, tmp_path):
    keep, doc_id = add_roberta(lib, tmp_path), add_bert(lib, tmp_path)
    process_queue(lib)
    process_graph_queue(lib, communities=False, max_docs=1)  # the other paper's graph first
    deleter: list[threading.Thread] = []

    def hook(progress_doc: str, detail: str, fraction: float) -> None:
        if progress_doc == doc_id and re.match(r"merging \d+ nodes", detail) and not deleter:  # committed
            deleter.append(threading.Thread(target=delete_document, args=(lib, doc_id)))
            deleter[0].start()
            deadline = time.monotonic() + 30
            while lib.documents.get(doc_id) is not None:  # the row goes at once; the purge waits for the lock
                assert time.monotonic() < deadline
                time.sleep(0.02)

    assert process_graph_queue(lib, on_progress=hook, communities=False) == []
    deleter[0].join(60)
    assert not deleter[0].is_alive()
    assert_gone(lib, doc_id)  # its retrieval phrases too (footprint counts them)
    assert footprint(lib, [keep])["graph_nodes"] > 0 and footprint(lib, [keep])["phrases"] > 0


def test_insert_delete_mid_extraction_insert_gives_the_same_graph(lib, tmp_path):
    add_roberta(lib, tmp_path)
    doc_id = add_bert(lib, tmp_path)
    process_queue(lib)
    process_graph_queue(lib, communities=False)
    whole = graph_snapshot(lib)
    delete_document(lib, doc_id)
    alone = graph_snapshot(lib)
    assert {c for c, _ in whole["phrases"]} > {c for c, _ in alone["phrases"]} != set()
    add_bert(lib, tmp_path / "again")
    process_queue(lib)
    process_graph_queue(lib, on_progress=delete_when(lib, doc_id, "extracting entities: 1/", []), communities=False)
    assert graph_snapshot(lib) == alone  # deleted mid-extraction: as if it had never been added
    add_bert(lib, tmp_path / "third")
    process_queue(lib)
    process_graph_queue(lib, communities=False)
    assert graph_snapshot(lib) == whole


# ---------------------------------------------------------------------------------------------------- processes

def cli(workspace: Path, *args: str) -> subprocess.Popen:
    env = dict(os.environ, PAPERGRAPH_WORKSPACE=str(workspace))
    return subprocess.Popen([sys.executable, "-m", "core", *args], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_for(condition, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.mark.slow
def test_cli_ingest_survives_a_delete_from_another_process(lib, tmp_path):
    pdf = pdfs.make_paper_pdf(tmp_path / "long.pdf", pages=12)
    doc_id = add_pdf(lib, pdf.name, pdf.read_bytes()).doc_id
    proc = cli(lib.workspace.root, "ingest", "--no-graph", "-q", str(pdf))

    def busy() -> bool:
        doc = lib.documents.get(doc_id)
        assert doc is not None and doc.status != DocStatus.READY, "the ingest finished before the delete"
        return doc.status in (DocStatus.PARSING, DocStatus.INDEXING)

    wait_for(busy)
    delete_document(lib, doc_id)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert f"deleted   {doc_id[:12]}" in out and "deleted while being indexed" in out
    assert_gone(lib, doc_id)


@pytest.mark.slow
def test_cli_graph_build_with_a_delete_from_another_process_mid_extraction(lib, tmp_path):
    keep, doc_id = add_roberta(lib, tmp_path), add_bert(lib, tmp_path)
    process_queue(lib)
    proc = cli(lib.workspace.root, "graph", "build", "-q")

    def extracting() -> bool:
        doc = lib.documents.get(doc_id)
        assert doc.graph_status != GraphStatus.DONE, "the graph was built before the delete"
        return doc.graph_status == GraphStatus.EXTRACTING

    wait_for(extracting)
    delete_document(lib, doc_id)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert_gone(lib, doc_id)
    assert lib.documents.get(keep).graph_status == GraphStatus.DONE


# ---------------------------------------------------------------------------------------------------- gc

def test_gc_removes_exactly_what_older_versions_left_and_says_how_much(lib, tmp_path, monkeypatch, capsys):
    keep, ghost = add_roberta(lib, tmp_path), add_bert(lib, tmp_path)
    process_queue(lib)
    process_graph_queue(lib, communities=False, max_docs=1)
    kept_graph, kept = graph_snapshot(lib), footprint(lib, [keep])
    process_graph_queue(lib, communities=False)
    # What an older version's delete mid-graph left: the row gone, everything else of the paper still there.
    lib.documents.delete(ghost)
    planted = +footprint(lib, [ghost])
    assert {"chunks", "windows", "extractions", "entity_sources", "papers", "graph_nodes", "descriptions", "results",
            "folders"} <= set(planted), planted
    os.utime(lib.workspace.doc_dir(ghost), (OLD, OLD))
    # A folder never registered, a staging leftover, and a full-text row whose chunk is gone.
    stray_folder = lib.workspace.doc_dir("0" * 64)
    stray_folder.mkdir()
    (lib.workspace.staging_dir / "parse-0000-dead").mkdir()
    for path in (stray_folder, lib.workspace.staging_dir / "parse-0000-dead"):
        os.utime(path, (OLD, OLD))
    assert lib.fulltext.stale_rows() == 0  # (creates the index, as the first search would)
    with lib.db.connect() as conn:
        conn.execute("INSERT INTO chunks_fts(rowid, text) VALUES (987654, 'orphaned words')")
    fresh = lib.workspace.doc_dir("1" * 64)
    fresh.mkdir()  # young: may be an upload another process is writing right now

    monkeypatch.setenv("PAPERGRAPH_WORKSPACE", str(lib.workspace.root))
    assert cli_main(["gc", "--json"]) == 0
    removed = json.loads(capsys.readouterr().out)
    expected = {k: v for k, v in planted.items() if k != "folders"}
    assert {k: removed.get(k) for k in expected} == expected
    assert removed["folders"] == planted["folders"] + 1 and removed["staging"] == 1 and removed["fts_rows"] == 1
    assert removed["orphan_doc_ids"] == 1
    assert_gone(lib, ghost)
    assert fresh.exists() and not stray_folder.exists()
    assert graph_snapshot(lib) == kept_graph and footprint(lib, [keep]) == kept
    assert collect_garbage(lib) == {}  # nothing left for a second run


def test_gc_removes_vectors_of_entities_no_graph_holds(lib, tmp_path):
    import numpy as np

    keep = add_roberta(lib, tmp_path)
    process_queue(lib)
    process_graph_queue(lib, communities=False)
    before = graph_snapshot(lib)
    vector = np.ones((1, 384), dtype=np.float32)
    lib.entity_vectors.upsert(["ent-ghost"], vector, ["Ghost (concept)"], [{"key": "ghost", "doc_ids": ["x"]}])
    lib.relation_vectors.upsert(["rel-ghost"], vector, ["a — b"], [{"source": "a", "target": "b"}])
    removed = collect_garbage(lib)
    assert removed == {"entity_vectors": 1, "relation_vectors": 1, "orphan_doc_ids": 1}, removed
    assert graph_snapshot(lib) == before and footprint(lib, [keep])["document"] == 1
