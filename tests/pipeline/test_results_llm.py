"""The optional LLM pass over result records, against the local OpenAI-protocol server: a name the rules could not
read is copied from the caption or a citing sentence; a name not printed there is refused; a broken reply or an
HTTP error keeps the rules' records; no model makes no call; a table the rules fully read is not sent."""
from __future__ import annotations

import json

from core.pipeline.results import read_paper_results
from core.pipeline.results.llm_names import fill_names, printed_in
from core.schema.results import ResultSource
from tests.models.llm_helpers import model_at
from tests.openai_server import OpenAIReplayServer, Reply
from tests.pipeline.results_tables import html, paper, table, text


def _paper():
    return paper(table(html(["System", "F1"], ["CRF", "88.1"], ["BiLSTM-CRF", "90.9"]),
                       caption="Table 3: Main results."),
                 text("Table 3 reports the taggers trained on the newswire portion of OntoNotes 5.0 and the web."),
                 table(html(["Model", "Acc"], ["A", "70.0"]), caption="Table 4: Results on SST-2."))


def test_a_dataset_printed_in_a_citing_sentence_is_copied():
    items = _paper()
    records = read_paper_results("doc", items)
    assert {r.dataset for r in records if r.table_label == "Table 3"} == {""}  # the rules cannot tell which name
    with OpenAIReplayServer(default=Reply(json.dumps({"dataset": "OntoNotes 5.0", "metric": "F1"}))) as server:
        filled = fill_names(model_at(server), records, items, "doc")
        assert len(server.requests) == 1  # Table 4 was fully read: not sent
    t3 = [r for r in filled if r.table_label == "Table 3"]
    assert {(r.dataset, r.dataset_key, r.source, r.extra["llm_fields"]) for r in t3} == {
        ("OntoNotes 5.0", "ontonotes5", ResultSource.LLM, "dataset")}
    assert all(r.source == ResultSource.RULES for r in filled if r.table_label == "Table 4")


def test_a_name_not_printed_is_refused_and_failures_keep_the_rules_records():
    items = _paper()
    records = read_paper_results("doc", items)
    for reply in (Reply(json.dumps({"dataset": "CoNLL-2003", "metric": ""})),  # the model's own knowledge
                  Reply(json.dumps({"dataset": "BiLSTM-CRF", "metric": ""})),  # a method, not a dataset
                  Reply("I think it is OntoNotes"), Reply("", status=500)):
        with OpenAIReplayServer(default=reply) as server:
            assert fill_names(model_at(server), records, items, "doc") == records
    assert fill_names(None, records, items, "doc") == records


def test_printed_means_word_for_word():
    assert printed_in("OntoNotes 5.0", "the newswire portion of ontonotes  5.0 and")
    assert not printed_in("OntoNotes", "OntoNotesX") and not printed_in("", "anything")
