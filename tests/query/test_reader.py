"""The LLM-free reader over a real workspace: a generated paper (title, author block with affiliation, numbered
headings, a table, a References section whose entries share the question's words) parsed, chunked, embedded and
graphed by the product path, then asked through the engine."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from core.content.pages import load_items
from core.library import open_library
from core.pipeline.documents import add_pdf
from core.pipeline.graph.stage import process_graph_queue
from core.pipeline.ingest import process_queue
from core.query.answer import parse_answer, split_short_answer
from core.query.engine import ask, compare
from core.query.reading import answer_types as T
from core.query.reading import extractive
from core.query.reading.extractive import NEVER, NO_ANSWER, RELATED, _sentence_ok, item_roles, read, split_sentences
from core.query.reading.scores import load_model
from core.query.records import Context, QueryParams, Source
from core.query.routes import available_modes
from core.schema.modes import Mode
from core.schema.records import DocStatus
from core.settings.workspace import Workspace
from tests import graph_papers, pdfs

TITLE = "Counting Unique Paper Nodes in the Okapi Literature Graph"
AUTHORS = "Ada Lovelace and Alan Turing, Okapi Institute for Literature Graphs, 12 Graph Street"
SECTIONS: list[pdfs.Section] = [
    ("Abstract", [
        "We describe how the okapi literature graph is built from publisher feeds and how its nodes are counted. "
        "Deduplication by metadata similarity is the step that matters most.",
    ]),
    ("1 Introduction", [
        "Literature graphs connect papers, authors and entities so that researchers can search them. "
        "Counting their nodes correctly requires removing duplicate records first.",
    ]),
    ("2 Graph Construction", [
        "We remove duplicate papers based on string similarity of their metadata, resulting in 37M unique paper "
        "nodes. The graph also links 12M author nodes to the papers they wrote.",
        "Table 1 compares the three lattice solvers we use to cluster the paper nodes on the Okapi benchmark.",
    ]),
    ("References", [
        "Lovelace, A. and Turing, A. 2019. Counting 81M unique paper nodes in literature graphs. In Proceedings "
        "of the Annual Meeting of the Association for Computational Linguistics, pages 1-9.",
        "Hopper, G. 2018. Unique nodes of a literature graph. arXiv preprint arXiv:1801.00001.",
    ]),
]
NUMBER_QUESTION = "How many unique paper nodes does the okapi literature graph contain?"


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    root = tmp_path_factory.mktemp("reader-ws")
    ws = graph_papers.fast_workspace(root / "ws")
    lib = open_library(ws)
    pdf = pdfs.make_paper_pdf(root / "okapi.pdf", title=TITLE, authors=AUTHORS, sections=SECTIONS,
                              with_figure=False, pages=1)
    add_pdf(lib, pdf.name, pdf.read_bytes())
    assert [d.status for d in process_queue(lib)] == [DocStatus.READY]
    assert [d.graph_status for d in process_graph_queue(lib)] == ["done"]
    return open_library(Workspace(ws.root))


def _ask(lib, question, mode="mix"):
    return ask(lib, question, QueryParams(mode=mode, use_llm=False), save=False)


@pytest.fixture
def stating(monkeypatch):
    """The fitted model with a threshold every ranked answer clears: these tests check which sentence answers and
    how, not where the dev split put the threshold (bench/reader_train.py reports that)."""
    fitted = load_model()
    monkeypatch.setattr(extractive, "load_model", lambda: replace(fitted, threshold=0.0, related=0.0))


def test_parsing_roles_keep_title_authors_headings_and_references_out(lib):
    (doc,) = lib.documents.list()
    items = load_items(lib, doc.id)
    roles = item_roles(items)
    by_text = {" ".join(i.text.split()): roles[i.index] for i in items if i.text}
    assert by_text[TITLE] == "title"
    assert any(role == "front" for text, role in by_text.items() if "Lovelace and Alan Turing" in text)
    assert by_text["2 Graph Construction"] == "heading"
    assert all(role == "reference" for text, role in by_text.items() if "Proceedings" in text or "arXiv" in text)
    assert any(role == "body" for text, role in by_text.items() if "37M unique paper nodes" in text)


@pytest.mark.parametrize("mode", ["naive", "mix", "local", "hybrid"])
def test_a_number_question_answers_with_the_number_first_and_cites_it(lib, mode, stating):
    result = _ask(lib, NUMBER_QUESTION, mode)
    answer = result.answer
    assert not answer.abstained and answer.answer_type == T.NUMBER
    assert answer.short_answer == "37M"
    first = answer.sentences[0]
    assert "resulting in 37M unique paper nodes" in first.text and answer.short_answer_sentence == 0
    start, end = answer.short_answer_span
    assert first.text[start:end] == "37M"
    cited = result.context.source(first.citations[0])
    assert "37M unique paper nodes" in cited.text
    # Never the title, the author block (its "12 Graph Street"), a heading or a reference entry ("81M").
    for sentence in answer.sentences:
        assert TITLE not in sentence.text and "Graph Street" not in sentence.text
        assert "Proceedings" not in sentence.text and "arXiv" not in sentence.text
        assert sentence.text.split(" [")[0] not in ("2 Graph Construction", "References")


def test_a_table_question_answers_with_the_row(lib, stating):
    result = _ask(lib, "What accuracy does the Marigold solver reach on the Okapi benchmark?")
    answer = result.answer
    assert not answer.abstained and answer.answer_type == T.NUMBER
    first = answer.sentences[0]
    assert "Marigold" in first.text and "88.2" in first.text
    assert answer.short_answer == "88.2"
    assert result.context.source(first.citations[0]).kind == "table"


def test_an_unanswerable_question_abstains_and_lists_the_closest_passages(lib, monkeypatch):
    fitted = load_model()
    monkeypatch.setattr(extractive, "load_model", lambda: replace(fitted, related=0.0))
    result = _ask(lib, "How many GPUs were used to train the okapi deduplication model?")
    answer = result.answer
    assert answer.abstained and answer.short_answer == "" and answer.best_confidence < fitted.threshold
    # The abstention's own confidence: the chance that abstaining is right (the papers do not answer), from the
    # best sentence's (bench/abstention_calibrate.py), not the best sentence's chance of being right.
    assert answer.confidence == pytest.approx(fitted.abstention_confidence(answer.best_confidence), abs=1e-3)
    assert answer.sentences[0].text == NO_ANSWER and not answer.sentences[0].citations
    closest = answer.sentences[1:]
    assert 1 <= len(closest) <= 3 and all(s.citations for s in closest)
    assert closest[0].text.startswith(RELATED)


def test_community_mode_answers_through_the_reader_and_states_only_cited_numbers(lib):
    assert Mode.COMMUNITY in available_modes(lib)
    result = _ask(lib, NUMBER_QUESTION, "community")
    answer = result.answer
    assert answer.extractive and answer.answer_type == T.NUMBER  # set by the reader only
    if not answer.abstained:
        cited = [result.context.source(n) for s in answer.sentences for n in s.citations]
        assert answer.short_answer and any(answer.short_answer in s.text for s in cited)
        assert answer.short_answer != "12M"


def test_compare_answers_every_mode_and_each_states_the_number_first(lib, stating):
    modes = available_modes(lib)
    assert Mode.COMMUNITY in modes  # its passages come from its communities' entities, closest first
    results = compare(lib, NUMBER_QUESTION, modes, QueryParams(use_llm=False), save_history=False)
    for mode, result in results.items():
        assert result.answer.short_answer == "37M", (mode, result.answer.text[:200])


def test_answer_types_and_spans():
    assert T.answer_type("How many unique paper nodes are there?") == T.NUMBER
    assert T.answer_type("What percentage of papers have full text?") == T.NUMBER
    assert T.answer_type("Which dataset is BERT pre-trained on?") == T.NAME
    assert T.answer_type("When was S2ORC released?") == T.YEAR
    assert T.answer_type("Which tool is used for language detection when filtering papers?") == T.NAME
    assert T.answer_type("What is SPECTER?") == T.DEFINITION
    sentence = "The graph has 37M unique paper nodes and 12M author nodes."
    assert T.spans(sentence, T.NUMBER, "How many author nodes does the graph have?")[0].text == "12M"
    assert T.spans(sentence, T.NUMBER, "How many unique paper nodes does the graph have?")[0].text == "37M"
    assert not T.spans("As shown by Fischer et al. 120 the barrier holds.", T.NUMBER, "How many molecules?")
    assert T.spans("We 3) filter clusters, and 4) resolve 380.5M citation links.", T.NUMBER,
                   "How many citation links are resolved?")[0].text == "380.5M"
    assert T.spans("BERT is pre-trained on the BooksCorpus dataset.", T.NAME,
                   "Which dataset is BERT pre-trained on?")[0].text == "BooksCorpus"
    definition = T.spans("SPECTER is a method for document embeddings, which uses citations.", T.DEFINITION,
                         "What is SPECTER?")
    assert definition[0].text == "a method for document embeddings"


def test_the_llm_short_answer_line_becomes_the_short_answer():
    source = Source(n=1, chunk_id="c", doc_id="d", doc_title="P", page=0, bbox=None, kind="text", section="",
                    text="x")
    context = Context(text="", sources=[source], tokens={}, dropped={})
    answer = parse_answer("**Short answer:** 37M [1]\n\nThe graph has 37M unique paper nodes [1].", context,
                          extractive=False, model="m")
    assert answer.short_answer == "37M" and answer.sentences[0].text.startswith("The graph has")
    assert split_short_answer("The sources do not say.") == ("", "The sources do not say.")
    assert not NEVER & {"body", "row"}


def _source(n, text, kind="text", section="", title="Okapi paper"):
    return Source(n=n, chunk_id=f"c{n}", doc_id="d", doc_title=title, page=0, bbox=None, kind=kind,
                  section=section, text=text)


def _read(question, sources):
    context = Context(text="", sources=sources, tokens={}, dropped={})
    return read(question, context, None, None, np.zeros(2))


def test_a_near_miss_question_is_less_confident_than_the_question_its_passage_answers():
    # The passage gives the TEDs score on PubTabNet: not the score on FinTabNet, nor a learning rate.
    passage = "The OTSL model reaches a TEDs score of 0.95 on PubTabNet with 6 encoder layers."
    others = [_source(2, "Table structure recognition turns a table image into rows and columns of cells."),
              _source(3, "We train on PubTabNet and FinTabNet and report TEDs on both datasets.")]
    answered = _read("What TEDs score does the OTSL model achieve on PubTabNet?", [_source(1, passage), *others])
    near_miss = _read("What TEDs score does the OTSL model achieve on FinTabNet?", [_source(1, passage), *others])
    other_setting = _read("What learning rate was used to train the OTSL model?", [_source(1, passage), *others])
    assert answered.confidence > near_miss.confidence and answered.confidence > other_setting.confidence
    assert T.focus_words("How many entity mentions does the graph contain?") == ["entity", "mentions"]
    assert T.named_words("What TEDs score does the OTSL model achieve on FinTabNet?") == ["TEDs", "OTSL", "FinTabNet"]


def test_a_table_row_answers_with_the_cell_of_the_column_the_question_names():
    row = "Model: TABLEFORMERLARGE inter-sqa; dev: 51.3; test: 52.6"
    question = "What denotation accuracy does TableFormer-Large reach on the WTQ test set?"
    assert T.spans(row, T.NUMBER, question)[0].text == "52.6"
    assert T.spans(row, T.NUMBER, question.replace("test set", "dev set"))[0].text == "51.3"
    cell = T.row_cell("Function: [Expand]; Description: adds the cited papers to the queue",
                      "What is the description of the [Expand] function?")
    assert cell is not None and cell.text == "adds the cited papers to the queue"


def test_a_definition_without_is_is_found():
    question = "What are matched molecular pairs?"
    assert T.answer_type(question) == T.DEFINITION
    span = T.spans("Matched molecular pairs (MMPs), pairs of molecules that differ at one site, help chemists.",
                   T.DEFINITION, question)
    assert span and span[0].text.startswith("pairs of molecules that differ at one site")
    assert T.spans("We define a bioisostere as a molecule with similar properties.", T.DEFINITION,
                   "What is a bioisostere?")[0].text == "a molecule with similar properties"
    assert T.spans("Working memory, which is the set of documents read so far, grows.", T.DEFINITION,
                   "What is working memory?")[0].text.startswith("the set of documents read so far")


@pytest.mark.parametrize("question", ["What learning rate was used to fine-tune the model?",
                                      "What batch size is used for pre-training?", "How long does parsing take?",
                                      "What dimension do the embeddings have?",
                                      "What inference time in seconds does the model have?"])
def test_a_unit_question_is_typed_as_a_number(question):
    assert T.answer_type(question) == T.NUMBER


def test_footnote_markers_split_sentences_and_a_body_sentence_with_a_year_is_not_a_reference():
    parts = split_sentences("We survey papers using these datasets.2 All of these papers were published between "
                            "June 2018 and September 2022, after the datasets were released (PubMed / arXiv).")
    assert len(parts) == 2 and parts[1].startswith("All of these papers") and _sentence_ok(parts[1])
    assert not _sentence_ok("Hopper, G. 2018. Unique nodes of a literature graph. arXiv preprint arXiv:1801.00001.")


def test_an_abstention_is_surer_the_weaker_the_best_sentence():
    fitted = load_model()
    assert fitted.abstention is not None  # fitted on dev and shipped in reader_model.json
    sure = [fitted.abstention_confidence(c) for c in (0.05, 0.2, 0.5, 0.8)]
    assert sure == sorted(sure, reverse=True) and all(0.0 < s < 1.0 for s in sure)
    assert replace(fitted, abstention=None).abstention_confidence(0.3) == 0.3
