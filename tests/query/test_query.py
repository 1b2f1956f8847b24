"""The query modes over a real workspace built here: two generated papers (BERT, RoBERTa) parsed, chunked,
embedded into Chroma, with their LLM-free graph and communities; and the LLM path against the OpenAI-protocol
replay server."""
from __future__ import annotations

import json
import re

import pytest

from core.cli import main as cli_main
from core.library import open_library
from core.pipeline.documents import add_pdf, delete_document
from core.pipeline.ingest import process_queue
from core.query.answer import citations_in, split_sentences
from core.query.context import count_tokens, ends_first
from core.query.engine import QueryError, ask, compare, unique_to_each
from core.query.history import LOCAL_OWNER, recent
from core.query.records import QueryParams
from core.query.rerank import CrossEncoderReranker
from core.query.routes import ROUTES, available_modes, default_modes, unavailable_reason
from core.schema.modes import Mode
from core.settings.workspace import Workspace
from tests import graph_papers
from tests.query.query_helpers import GRAPH_QUESTION, QUESTION, QUESTION_OF, TOP
from tests.query.query_helpers import ingest as _ingest


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("query-ws")
    ws = graph_papers.fast_workspace(root / "ws")
    lib = open_library(ws)
    ids = _ingest(lib, root / "pdfs")
    return ws, ids


@pytest.fixture
def lib(workspace):
    return open_library(Workspace(workspace[0].root))


def _answer_chunk(lib):
    """The one chunk of the workspace that holds the answer to QUESTION and GRAPH_QUESTION."""
    (chunk,) = [c for d in lib.documents.list() for c in lib.chunks.by_doc(d.id) if "BooksCorpus" in c.text]
    return chunk


def _assert_citations_resolve(lib, result):
    assert result.context.sources, "nothing was retrieved"
    for source in result.context.sources:
        chunk = lib.chunks.get_many([source.chunk_id])[source.chunk_id]
        assert chunk.doc_id == source.doc_id and source.page in chunk.pages
        assert lib.documents.get(source.doc_id).display_title == source.doc_title
        assert source.text.rstrip(" …")[:50] in chunk.text
    for sentence in result.answer.sentences:
        if result.answer.abstained and not sentence.citations:  # "No passage answers this directly." states nothing
            continue
        assert sentence.citations and all(result.context.source(n) for n in sentence.citations)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["naive", "local", "global", "hybrid", "mix"])
def test_every_mode_answers_llm_free_with_citations_that_resolve_to_pages(lib, mode):
    answer = _answer_chunk(lib)
    chunks = sum(len(lib.chunks.by_doc(d.id)) for d in lib.documents.list())
    result = ask(lib, QUESTION_OF[mode], QueryParams(mode=mode, chunk_top_k=TOP))
    _assert_citations_resolve(lib, result)
    assert result.answer.extractive and "answer" in result.llm_free and result.llm_calls == 0
    # The answer's chunk is ranked first of the TOP kept out of every chunk, above ELECTRA's near misses
    # ("ELECTRA is pre-trained on the OpenWebText dataset", "XLNet is pre-trained on the Giga5 dataset"), and the
    # extractive answer opens with its sentence, citing it.
    assert len(result.retrieval.chunks) == TOP < chunks
    if mode in ("global", "hybrid"):
        # No relation here touches BooksCorpus: global proposes no relation passage (before, one that merely read
        # like the question happened to be stated in the answer's chunk) and keeps the answer below a near miss.
        assert answer.id in [c.id for c in result.retrieval.chunks]
        assert not [c for c in result.retrieval.chunks if "relation" in c.via]
        assert result.retrieval.relations  # the context still shows the relations the question's wording matched
    else:
        assert result.retrieval.chunks[0].id == answer.id, [c.hit.chunk.text[:60] for c in result.retrieval.chunks]
        first = result.answer.sentences[0]
        assert "pre-trained with a masked language model objective on the BooksCorpus dataset." in first.text
        assert [result.context.source(n).chunk_id for n in first.citations] == [answer.id]
        # The mode's own ranking, before the reranker reorders its candidates, puts it first too.
        own = ask(lib, QUESTION_OF[mode], QueryParams(mode=mode, chunk_top_k=TOP, rerank=False, context_only=True),
                  save=False)
        assert own.retrieval.chunks[0].id == answer.id, [c.hit.chunk.text[:60] for c in own.retrieval.chunks]
    if QUESTION_OF[mode] == GRAPH_QUESTION and mode != "global":  # the entity the question names is found first.
        # Not in global: its entities are the ends of the relations its keywords match, and the cleaned graph of this
        # small corpus links BooksCorpus by no relation those keywords reach (a known loss, in the closing note).
        assert result.retrieval.entities[0].name == "BooksCorpus", result.retrieval.entities[:3]
    if mode in ("local", "hybrid", "mix"):
        assert any(e.name == "BERT" for e in result.retrieval.entities)
        assert "entity" in {v for c in result.retrieval.chunks for v in c.via}
    if mode == "naive":
        assert not result.retrieval.entities and result.retrieval.keywords is None
    assert "Sources (cite as [n])" in result.context.text


def test_modes_differ_in_what_they_retrieve_and_compare_marks_what_is_unique(lib):
    # Without the reranker (which orders every mode's candidates against the same question) and with few chunks
    # kept, each mode keeps what its own route ranks best: the question's words (naive), the keywords' entities
    # (local) or the relations (global).
    results = compare(lib, QUESTION, ["naive", "local", "global"], QueryParams(chunk_top_k=TOP, rerank=False))
    assert set(results) == {"naive", "local", "global"}
    unique = unique_to_each(results)
    chunks = {mode: [c.id for c in r.retrieval.chunks] for mode, r in results.items()}
    assert all(len(ids) == TOP for ids in chunks.values()) and chunks["naive"][0] == _answer_chunk(lib).id
    for mode, ids in chunks.items():
        others = set().union(*(set(v) for m, v in chunks.items() if m != mode))
        assert unique[mode]["chunks"] == set(ids) - others, (mode, chunks)
    # Local and global walk the same small graph and may keep the same few chunks; naive's are its own.
    assert unique["naive"]["chunks"] and chunks["naive"] != chunks["local"], chunks
    assert unique["naive"]["entities"] == set()  # naive never touches the graph
    local_entities = {e.key for e in results["local"].retrieval.entities}
    global_entities = {e.key for e in results["global"].retrieval.entities}
    assert unique["local"]["entities"] == local_entities - global_entities
    assert results["local"].retrieval.keywords is results["global"].retrieval.keywords  # extracted once


@pytest.mark.slow
def test_the_paper_filter_keeps_other_papers_out(lib, workspace):
    roberta = workspace[1]["roberta.pdf"]
    for mode in ("naive", "local", "global", "mix"):
        result = ask(lib, QUESTION, QueryParams(mode=mode, doc_ids=[roberta]))
        assert result.context.sources and {s.doc_id for s in result.context.sources} == {roberta}, mode
        assert all(c.split(":")[0] == roberta for e in result.retrieval.entities for c in e.source_chunks)


def test_context_respects_each_token_budget_and_puts_the_strongest_at_both_ends(lib):
    # What a model would read (context only): every section within its budget.
    params = QueryParams(mode="mix", max_entity_tokens=60, max_relation_tokens=50, max_chunk_tokens=150,
                         context_only=True)
    result = ask(lib, QUESTION, params)
    tokens, dropped = result.context.tokens, result.context.dropped
    assert 0 < tokens["entities"] <= 60 and 0 < tokens["relations"] <= 50 and 0 < tokens["chunks"] <= 150
    assert dropped["entities"] > 0 and dropped["relations"] > 0
    text = result.context.text
    numbers = [int(n) for n in re.findall(r"^\[(\d+)\] ", text, re.M)]
    assert numbers == [s.n for s in ends_first(result.context.sources)]
    assert ends_first([1, 2, 3, 4, 5]) == [1, 3, 5, 4, 2]
    entity_section = text.split("-----Knowledge graph entities-----\n")[1].split("-----")[0]
    assert count_tokens(lib.tokenizer(), [entity_section.strip()])[0] <= 60 + 5
    # An extractive answer is read by no model: it reads every passage retrieval kept, whole.
    answered = ask(lib, QUESTION, QueryParams(mode="mix", max_chunk_tokens=150, use_llm=False), save=False)
    assert len(answered.context.sources) == len(answered.retrieval.chunks) > len(result.context.sources)
    assert all(s.text == c.hit.chunk.text for s, c in zip(answered.context.sources, answered.retrieval.chunks))


def test_context_only_assembles_without_answering_and_no_rerank_keeps_mode_order(lib):
    result = ask(lib, QUESTION, QueryParams(mode="local", context_only=True, rerank=False))
    assert result.answer is None and result.context.sources
    assert "rerank_s" not in result.timings
    assert [c.score for c in result.retrieval.chunks] == sorted((c.score for c in result.retrieval.chunks),
                                                                reverse=True)


@pytest.mark.slow
def test_community_mode_uses_reports_llm_free(lib):
    result = ask(lib, QUESTION, QueryParams(mode="community"))
    assert result.retrieval.reports, result.retrieval.notes
    assert "Community report points" in result.context.text
    assert "community map" in result.llm_free
    _assert_citations_resolve(lib, result)


def test_bad_questions_and_modes_get_clear_errors(lib):
    with pytest.raises(QueryError, match="^the question is empty$"):
        ask(lib, "   ", QueryParams(mode="naive"))
    with pytest.raises(ValueError, match="unknown query mode"):
        QueryParams.from_config(lib.settings.query, mode="telepathic")
    assert set(Mode) == {"naive", "local", "global", "hybrid", "mix", "ppr", "community"}


def test_every_mode_has_a_route_and_community_is_offered_only_with_reports(lib, tmp_path):
    assert list(ROUTES) == list(Mode) and all(route.mode is mode for mode, route in ROUTES.items())
    assert not ROUTES[Mode.NAIVE].keywords and not ROUTES[Mode.NAIVE].needs_graph
    assert lib.graph_sources.has_community_reports() and available_modes(lib) == list(Mode)
    empty = open_library(Workspace(tmp_path / "no-reports"))
    assert not empty.graph_sources.has_community_reports()
    assert available_modes(empty) == [Mode.NAIVE, Mode.LOCAL, Mode.GLOBAL, Mode.HYBRID, Mode.MIX]
    assert "community reports" in unavailable_reason(empty, "community") and unavailable_reason(empty, "mix") == ""
    assert default_modes(available_modes(lib)) == available_modes(empty)  # community is opt-in side by side


def test_a_cross_encoder_folder_that_is_not_one_is_refused_clearly(tmp_path):
    with pytest.raises(ValueError, match="not a cross-encoder model folder"):
        CrossEncoderReranker(str(tmp_path))


@pytest.mark.slow
def test_history_keeps_questions_and_answers(lib):
    ask(lib, "What does RoBERTa remove from BERT?", QueryParams(mode="naive"), owner=LOCAL_OWNER)
    entry = recent(lib, LOCAL_OWNER, 5)[0]
    assert entry.question == "What does RoBERTa remove from BERT?" and entry.mode == "naive"
    assert entry.payload["context"]["sources"]


@pytest.mark.slow
def test_bm25_follows_chunks_through_delete_and_reingest(tmp_path):
    lib = open_library(graph_papers.fast_workspace(tmp_path / "ws"))
    pdf = graph_papers.make_bert_pdf(tmp_path)
    doc_id = add_pdf(lib, pdf.name, pdf.read_bytes()).doc_id
    process_queue(lib)
    assert lib.fulltext.search("BooksCorpus", 5) and lib.fulltext.search("BooksCorpus", 5)[0][0].startswith(doc_id)
    delete_document(lib, doc_id)
    assert lib.fulltext.search("BooksCorpus", 5) == []
    add_pdf(lib, pdf.name, pdf.read_bytes())
    process_queue(lib)
    assert len(lib.fulltext.search("BooksCorpus", 5)) == 1  # re-ingest: indexed once, not twice


@pytest.mark.slow
def test_cli_ask_prints_json_with_resolved_citations(workspace, monkeypatch, capsys):
    monkeypatch.setenv("PAPERGRAPH_WORKSPACE", str(workspace[0].root))
    assert cli_main(["ask", QUESTION, "--mode", "mix", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mode"] == "mix" and data["answer"]["extractive"]
    assert data["citations"] and all(c["page"] >= 1 and c["chunk_id"] for c in data["citations"])
    assert cli_main(["ask", QUESTION, "--mode", "local", "--context-only"]) == 0
    out = capsys.readouterr().out
    assert "=== context ===" in out and "Knowledge graph entities" in out and "=== extractive" not in out


def test_sentence_splitting_keeps_markers_with_their_sentence():
    text = "BERT uses BooksCorpus, e.g. for pre-training [1]. RoBERTa drops NSP. [2][3] It is unsupported."
    assert split_sentences(text) == ["BERT uses BooksCorpus, e.g. for pre-training [1].",
                                     "RoBERTa drops NSP. [2][3]", "It is unsupported."]
    assert citations_in("See [2, 4] and [7].") == [2, 4, 7]


@pytest.mark.slow
def test_the_bm25_index_keeps_rare_terms_and_rebuilds_itself_from_an_older_schema(tmp_path):
    import sqlite3

    from core.store.sqlite_db import Database
    from core.store.sqlite_fulltext import SQLiteFullText

    lib = open_library(graph_papers.fast_workspace(tmp_path / "ws"))
    for pdf in (graph_papers.make_bert_pdf(tmp_path), graph_papers.make_roberta_pdf(tmp_path)):
        add_pdf(lib, pdf.name, pdf.read_bytes())
    process_queue(lib)
    # "bert" is in every chunk of both papers: only the rare term decides, so BooksCorpus's chunk comes first.
    assert lib.fulltext._match("BERT BooksCorpus") == '"bookscorpus"'
    with sqlite3.connect(lib.db.path) as conn:  # an index made with another tokenizer
        conn.execute("DROP TABLE chunks_fts")
        conn.execute("DROP TABLE chunks_fts_vocab")
        conn.execute("CREATE VIRTUAL TABLE chunks_fts USING fts5(text, content='chunks', content_rowid='rowid', "
                     "tokenize='porter unicode61')")
    fresh = SQLiteFullText(Database(lib.db.path))
    assert fresh.search("BooksCorpus", 5)  # rebuilt on first use, from the chunks
    with sqlite3.connect(lib.db.path) as conn:
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()[0]
    assert "porter" not in sql
    with sqlite3.connect(lib.db.path) as conn:
        version = conn.execute("PRAGMA schema_version").fetchone()[0]
    SQLiteFullText(Database(lib.db.path))._ensure()
    with sqlite3.connect(lib.db.path) as conn:  # a current index is kept as it is, not rebuilt on every open
        assert conn.execute("PRAGMA schema_version").fetchone()[0] == version
