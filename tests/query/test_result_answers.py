"""Results questions answered by computing over the stored records, before any reader, through the engine and the
service every face calls: the answer names its reader ("results"), cites each number's table cell as a source, and
any question the records do not cover goes to the readers as before. Real ingest (two generated papers), SQLite,
Chroma and the embedding model; the records are hand-made (tests/results_records.py)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from core.query.engine import ask
from core.query.records import QueryParams
from core.schema.modes import Reader
from core.schema.results import Direction
from core.service.ask import ask as service_ask
from core.text.result_names import dataset_key, method_key, metric_key
from tests.api.helpers import build_workspace
from tests.results_records import record


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    lib, (bert, roberta) = build_workspace(tmp_path_factory.mktemp("result-answers"))
    glue = dict(item_index=5, page=1, table_label="Table 2", caption="GLUE test results")
    lib.results.replace_doc(bert, [
        record(bert, 1, 1, "BERT", "GLUE", "Accuracy", 80.5, **glue),
        record(bert, 2, 1, "ELMo", "GLUE", "Accuracy", 70.0, **glue),
        record(bert, 1, 2, "BERT", "GLUE", "Error", 19.5, direction=Direction.LOWER, **glue),
        record(bert, 3, 1, "BERT distilled", "GLUE", "Accuracy", 77.0, setting="test", **glue),
        record(bert, 3, 2, "BERT distilled", "GLUE", "Accuracy", 75.0, setting="dev", **glue),
        _keyed(record(bert, 4, 3, "title", "", "F1", 85.5, item_index=6, table_label="Table 4"))])
    lib.results.replace_doc(roberta, [
        record(roberta, 3, 1, "RoBERTa", "GLUE", "Accuracy", 88.5, **glue),
        record(roberta, 2, 1, "BERT", "GLUE", "Accuracy", 80.4, **glue),
        *_paraphrased(roberta)])
    return lib, bert, roberta


def _keyed(r):
    """Keys as the extractor makes them (core.text.result_names), not the helper's lower-casing."""
    return replace(r, method_key=method_key(r.method), dataset_key=dataset_key(r.dataset),
                   metric_key=metric_key(r.metric))


def _paraphrased(doc):
    """Names a question says otherwise: an acronym (LAS, AUC-PR), a short row label ("ELMo + baseline"), a name
    in parentheses (WTQ), a dataset's words in another order."""
    parse = dict(item_index=7, page=2, table_label="Table 3", caption="Parsing and QA results")
    return [_keyed(r) for r in (
        record(doc, 1, 1, "Bohnet (2009)", "CoNLL 2009 English", "LAS", 89.88, text="89.88", setting="test",
               **parse),
        record(doc, 2, 1, "Che et al.", "CoNLL 2009 English", "LAS", 88.48, text="88.48", setting="test", **parse),
        record(doc, 3, 2, "ELMo + baseline", "SQuAD", "F1", 85.8, setting="test", **parse),
        record(doc, 4, 2, "Baseline", "SQuAD", "F1", 81.1, setting="test", **parse),
        record(doc, 5, 2, "Previous SOTA", "SQuAD", "F1", 84.4, setting="test", **parse),
        record(doc, 6, 3, "TableFormer", "WikiTableQuestions (WTQ)", "Denotation accuracy", 52.6, setting="test",
               **parse),
        record(doc, 7, 3, "TAPAS", "WikiTableQuestions (WTQ)", "Denotation accuracy", 51.5, setting="test",
               **parse),
        record(doc, 8, 4, "REALM", "Conquered relation", "AUC-PR", 0.907, text="0.907", **parse),
        record(doc, 9, 4, "REL-GRAMS", "Conquered relation", "AUC-PR", 0.929, text="0.929", **parse))]


def _ask(lib, question: str):
    params = QueryParams.from_config(lib.settings.query, mode="naive", use_llm=False)
    return ask(lib, question, params, save=False)


def test_the_best_result_on_a_dataset_is_computed_and_cites_its_cell(library):
    lib, _, roberta = library
    result = _ask(lib, "Which method has the highest accuracy on GLUE?")
    answer = result.answer
    assert answer.reader == Reader.RESULTS and answer.short_answer == "88.5 (RoBERTa)"
    assert answer.text.startswith("The highest Accuracy on GLUE reported in the library is 88.5, by RoBERTa")
    assert "p. 2, Table 2, row 4, column 2" in answer.text and "answer" in result.llm_free
    source = result.context.source(answer.sentences[0].citations[0])
    assert (source.doc_id, source.page, source.kind, source.item_indices) == (roberta, 1, "table", [5])
    best = _ask(lib, "What is the best error on GLUE?").answer
    assert best.reader == Reader.RESULTS and best.short_answer == "19.5 (BERT)"  # lower is better


def test_a_methods_value_and_two_methods_compared(library):
    lib, bert, _ = library
    value = _ask(lib, "What accuracy does ELMo reach on GLUE?").answer
    assert value.reader == Reader.RESULTS and value.short_answer == "70.0"
    assert value.text.startswith("ELMo reaches Accuracy 70.0 on GLUE")
    beat = _ask(lib, "Does RoBERTa beat BERT on GLUE, and by how much?").answer
    assert beat.reader == Reader.RESULTS and beat.short_answer == "Yes, by 8.1"
    assert "in the same table" in beat.text and "RoBERTa is better than BERT by 8.1" in beat.text
    compared = _ask(lib, "How does ELMo compare with BERT on GLUE?").answer
    assert "BERT is better than ELMo by 10.5" in compared.text and compared.short_answer == "No, by 10.5"


def test_the_fullest_row_label_and_the_setting_the_question_names(library):
    lib, _, _ = library
    answer = _ask(lib, "What accuracy does the distilled BERT reach on the GLUE test set?").answer
    assert answer.reader == Reader.RESULTS and answer.short_answer == "77.0", answer.text
    assert answer.text.startswith("BERT distilled reaches Accuracy 77.0 on GLUE (test;")
    # B unknown to the records: not a comparison they can compute, so the readers answer
    assert _ask(lib, "By how much does RoBERTa surpass XLNet on GLUE?").answer.reader == Reader.EXTRACTIVE


def test_which_papers_report_results_on_a_dataset(library):
    lib, bert, roberta = library
    result = _ask(lib, "Which papers report results on GLUE?")
    assert result.answer.reader == Reader.RESULTS and result.answer.text.startswith("2 papers of the library")
    cited = {result.context.source(n).doc_id for s in result.answer.sentences for n in s.citations}
    assert cited == {bert, roberta}


def test_other_questions_go_to_the_readers(library):
    lib, _, _ = library
    for question in ("Which dataset is BERT pre-trained on?", "What is GLUE?",
                     "What is the best F1 on CoNLL-2003?", "Does BERT beat XLNet on GLUE?"):
        assert _ask(lib, question).answer.reader == Reader.EXTRACTIVE, question


def test_every_face_gets_the_computed_answer_with_its_citation(library):
    lib, _, roberta = library
    got = service_ask(lib, "Which method has the highest accuracy on GLUE?", "naive", use_llm=False, save=False)
    assert got.reader == "results" and got.short_answer == "88.5 (RoBERTa)"
    first = got.citations[0]
    assert (first.paper_id, first.page, first.kind) == (roberta, 2, "table") and "88.5" in first.quote


def test_names_said_otherwise_reach_the_records(library):
    lib, _, roberta = library
    las = _ask(lib, "What labeled attachment score does Bohnet's parser reach on the English test set of the "
                    "CoNLL 2009 shared task?").answer
    assert las.reader == Reader.RESULTS and "89.88" in las.text and "Table 3, row 2, column 2" in las.text, las.text
    elmo = _ask(lib, "What test-set F1 does the ELMo-enhanced model reach on SQuAD?").answer
    assert elmo.reader == Reader.RESULTS and elmo.short_answer == "85.8", elmo.text
    wtq = _ask(lib, "What is the best denotation accuracy anyone reports on the WTQ test set?").answer
    assert wtq.reader == Reader.RESULTS and wtq.short_answer == "52.6 (TableFormer)", wtq.text
    # "which method" asks for the best one even when the question names another as context
    auc = _ask(lib, "For sparse REALM extractions of the Conquered relation, which method gets the highest area "
                    "under the precision-recall curve?").answer
    assert auc.reader == Reader.RESULTS and auc.short_answer == "0.929 (REL-GRAMS)", auc.text
    cited = _ask(lib, "Which papers report results as area under the precision-recall curve?")
    assert cited.answer.reader == Reader.RESULTS and "Table 3, row 9, column 5" in cited.answer.text
    assert {cited.context.source(n).doc_id for s in cited.answer.sentences for n in s.citations} == {roberta}


def test_a_partly_named_method_compared_with_another(library):
    lib, _, _ = library
    answer = _ask(lib, "Does the ELMo-enhanced model beat the previous state of the art on SQuAD, and by how "
                       "much?").answer
    assert answer.reader == Reader.RESULTS and "ELMo + baseline is better than Previous SOTA by 1.4" in answer.text


def test_questions_about_the_papers_not_their_numbers_stay_with_the_readers(library):
    lib, _, _ = library
    for question in ("What is the CoNLL 2009 shared task about?", "How is the labeled attachment score computed?",
                     "Which parser does Bohnet describe for the CoNLL 2009 English data?",
                     "Why does ELMo help on SQuAD?", "Who created the WikiTableQuestions dataset?",
                     "What LAS does any parser reach on the Penn Treebank?"):
        assert _ask(lib, question).answer.reader == Reader.EXTRACTIVE, question


def test_a_row_found_by_its_label_alone_answers_only_in_the_paper_naming_what_the_question_does(library):
    lib, bert, _ = library
    answer = _ask(lib, "What F1 does the Transformer system reach on paper titles?").answer  # the BERT paper says it
    assert answer.reader == Reader.RESULTS and answer.short_answer == "85.5", answer.text
    assert _ask(lib, "What F1 does ScienceParse reach on paper titles?").answer.reader == Reader.EXTRACTIVE
