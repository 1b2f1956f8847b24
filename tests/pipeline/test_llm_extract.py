"""LLM entity and relation extraction: the reply parser over real-looking (and badly formed) replies, and the
extractor end to end through the real OpenAI client and cache against a local OpenAI-protocol server."""
from __future__ import annotations

import json
import threading
import time

import pytest

from core.models.llm.factory import get_chat_model
from core.pipeline.graph.llm_extract import LLMExtractor
from core.pipeline.graph.llm_replies import (
    EXTRACTION_JSON_SCHEMA,
    MAX_LIST_ITEMS,
    MAX_NAME_CHARS,
    extraction_json_schema,
    parse_extraction,
)
from core.prompts import PROMPTS
from core.schema.records import Chunk
from core.settings.config import PAPER_ENTITY_TYPES, GraphConfig, LLMConfig, Settings
from core.store.sqlite_db import Database
from tests.openai_server import OpenAIReplayServer, Reply

TYPES = PAPER_ENTITY_TYPES

# What gpt-4o-mini answers for the abstract of the BERT paper, in the prompt's format.
BERT_REPLY = """("entity"<|>BERT<|>model<|>BERT (Bidirectional Encoder Representations from Transformers) is a language representation model pre-trained on unlabeled text.)##
("entity"<|>GLUE<|>dataset<|>GLUE is a benchmark of nine language understanding tasks.)##
("entity"<|>MultiNLI<|>dataset<|>MultiNLI is a natural language inference corpus.)##
("entity"<|>Accuracy<|>metric<|>Accuracy is the metric reported on MultiNLI.)##
("entity"<|>SQuAD v1.1<|>dataset<|>SQuAD v1.1 is a question answering benchmark.)##
("relationship"<|>BERT<|>GLUE<|>BERT obtains a GLUE score of 80.5%, a 7.7 point absolute improvement.<|>evaluated on, state of the art<|>9)##
("relationship"<|>BERT<|>MultiNLI<|>BERT improves MultiNLI accuracy to 86.7%.<|>evaluated on, improves<|>8)##
("relationship"<|>MultiNLI<|>Accuracy<|>MultiNLI results are reported as accuracy.<|>measured by<|>6)##
("relationship"<|>BERT<|>SQuAD v1.1<|>BERT reaches 93.2 Test F1 on SQuAD v1.1.<|>evaluated on<|>8)##
<|COMPLETE|>"""


def names(parsed) -> list[str]:
    return [e.name for e in parsed.entities]


def pairs(parsed) -> list[tuple[str, str]]:
    return [(r.source, r.target) for r in parsed.relations]


def entity(parsed, name):
    (match,) = [e for e in parsed.entities if e.name == name]
    return match


# --- the prompts --------------------------------------------------------------------------------------------

def test_prompts_format_with_the_delimiters_and_say_the_record_format():
    delimiters = {"tuple_delimiter": "<|>", "record_delimiter": "##", "completion_delimiter": "<|COMPLETE|>"}
    examples = PROMPTS["entity_extraction_examples"].format(**delimiters)
    system = PROMPTS["entity_extraction_system"].format(entity_types="method, dataset", language="English",
                                                        examples=examples, **delimiters)
    assert '("entity"<|><entity_name><|><entity_type><|><entity_description>)' in system
    assert "<relationship_keywords><|><relationship_strength>)" in system
    assert "[method, dataset]" in system and "<|COMPLETE|>" in system and "{" not in system
    # The examples parse into what they show: the parser and the prompts agree on the format.
    parsed = parse_extraction(examples, TYPES)
    assert {"BERT", "GLUE", "MultiNLI", "Accuracy", "ResNet-50", "PyTorch"} <= set(names(parsed))
    assert parsed.dropped == 0 and parsed.errors == []
    glean = PROMPTS["entity_continue_extraction"].format(entity_types="method", **delimiters)
    assert "missed" in glean and "same format" in glean
    json_system = PROMPTS["entity_extraction_json_system"].format(entity_types="method", language="English")
    example_json = json_system[json_system.index('{"entities"'):]
    assert len(parse_extraction(example_json, TYPES).relations) == 3


def test_the_json_schema_caps_its_lists_and_constrains_types():
    assert EXTRACTION_JSON_SCHEMA["properties"]["entities"]["maxItems"] == MAX_LIST_ITEMS <= 12
    assert EXTRACTION_JSON_SCHEMA["properties"]["relationships"]["maxItems"] == MAX_LIST_ITEMS
    schema = extraction_json_schema(["method", "dataset"])
    assert schema["properties"]["entities"]["items"]["properties"]["type"]["enum"] == ["method", "dataset", "concept"]
    json.dumps(schema)  # sent as is in response_format


# --- the parser: well-formed replies ------------------------------------------------------------------------

def test_a_well_formed_reply_gives_every_record_with_its_fields():
    parsed = parse_extraction(BERT_REPLY, TYPES)
    assert names(parsed) == ["BERT", "GLUE", "MultiNLI", "Accuracy", "SQuAD v1.1"]
    assert pairs(parsed) == [("BERT", "GLUE"), ("BERT", "MultiNLI"), ("MultiNLI", "Accuracy"),
                             ("BERT", "SQuAD v1.1")]
    assert entity(parsed, "BERT").type == "model"
    # The record's closing parenthesis goes; the description's own parentheses stay.
    assert entity(parsed, "BERT").description.startswith("BERT (Bidirectional Encoder Representations")
    assert entity(parsed, "BERT").description.endswith("unlabeled text.")
    glue = parsed.relations[0]
    assert glue.description == "BERT obtains a GLUE score of 80.5%, a 7.7 point absolute improvement."
    assert glue.keywords == "evaluated on, state of the art" and glue.strength == 9.0
    assert parsed.dropped == 0 and parsed.errors == []


def test_the_completion_marker_is_optional():
    without = BERT_REPLY.replace("<|COMPLETE|>", "")
    assert parse_extraction(without, TYPES) == parse_extraction(BERT_REPLY, TYPES)
    inline = BERT_REPLY.replace("##\n<|COMPLETE|>", "<|COMPLETE|>")  # marker glued to the last record
    assert parse_extraction(inline, TYPES) == parse_extraction(BERT_REPLY, TYPES)


@pytest.mark.parametrize("delimiter", ["<|>", " <|> ", "|", " | ", "<SEP>", "\t", "<|#|>"])
def test_field_delimiter_variants(delimiter):
    reply = BERT_REPLY.replace("<|>", delimiter)
    parsed = parse_extraction(reply, TYPES)
    assert names(parsed) == ["BERT", "GLUE", "MultiNLI", "Accuracy", "SQuAD v1.1"]
    assert parsed.relations[1].description == "BERT improves MultiNLI accuracy to 86.7%."
    assert parsed.relations[1].strength == 8.0 and parsed.dropped == 0


def test_records_without_quotes_or_parentheses_one_per_line():
    reply = """entity<|>RoBERTa<|>model<|>RoBERTa is a robustly optimized BERT pretraining approach.
entity<|>BERT<|>model<|>BERT is the model RoBERTa re-trains with more data.
relationship<|>RoBERTa<|>BERT<|>RoBERTa replicates BERT pretraining with longer training and more data.<|>extends, improves<|>8
entity<|>RACE<|>dataset<|>RACE is a reading comprehension dataset from English exams."""
    parsed = parse_extraction(reply, TYPES)
    assert names(parsed) == ["RoBERTa", "BERT", "RACE"]
    assert pairs(parsed) == [("RoBERTa", "BERT")] and parsed.relations[0].strength == 8.0
    assert parsed.dropped == 0


def test_records_run_together_on_one_line_and_quoted_comma_fields():
    run_together = ('("entity"<|>ELMo<|>model<|>ELMo learns deep contextualized word representations.)'
                    '("entity"<|>SQuAD<|>dataset<|>SQuAD is a reading comprehension benchmark.)'
                    '("relationship"<|>ELMo<|>SQuAD<|>ELMo improves the state of the art on SQuAD.<|>evaluated on<|>7)')
    parsed = parse_extraction(run_together, TYPES)
    assert names(parsed) == ["ELMo", "SQuAD"] and pairs(parsed) == [("ELMo", "SQuAD")]
    commas = ('("entity", "Word2Vec", "method", "Word2Vec learns word embeddings from co-occurrence.")\n'
              '("entity", "Skip-gram", "method", "Skip-gram predicts context words from a word.")\n'
              '("relationship", "Word2Vec", "Skip-gram", "Skip-gram is one of the Word2Vec architectures.", '
              '"variant of", "7")')
    parsed = parse_extraction(commas, TYPES)
    assert names(parsed) == ["Word2Vec", "Skip-gram"] and parsed.relations[0].strength == 7.0
    assert entity(parsed, "Skip-gram").description == "Skip-gram predicts context words from a word."


def test_chatter_and_markdown_around_the_records_are_ignored_not_dropped():
    reply = f"""Sure! Here are the entities and relationships extracted from the text:

## Entities and relationships
```
{BERT_REPLY}
```
Let me know if you need anything else, e.g. a summary | or a table."""
    parsed = parse_extraction(reply, TYPES)
    assert names(parsed) == ["BERT", "GLUE", "MultiNLI", "Accuracy", "SQuAD v1.1"]
    assert len(parsed.relations) == 4 and parsed.dropped == 0 and parsed.errors == []


def test_markup_is_stripped_whitespace_normalised_and_long_names_capped():
    long_name = "A " + "very " * 40 + "long method name"
    reply = f"""- ("entity"<|>**Transformer**<|>*model*<|>The   Transformer relies   entirely on <b>self-attention</b>.)
- ("entity"<|>`Adam`<|>method<|>Adam is the optimizer used for training.)
- ("entity"<|>{long_name}<|>method<|>A name that is really a sentence.)
- ("relationship"<|>Transformer<|>Adam<|>The Transformer is trained with Adam.<|>optimized with<|>5)"""
    parsed = parse_extraction(reply, TYPES)
    assert names(parsed)[:2] == ["Transformer", "Adam"]
    assert entity(parsed, "Transformer").description == "The Transformer relies entirely on self-attention."
    assert entity(parsed, "Transformer").type == "model"
    capped = parsed.entities[2].name
    assert len(capped) <= MAX_NAME_CHARS and capped.startswith("A very very") and not capped.endswith(" ")


# --- the parser: malformed records --------------------------------------------------------------------------

def test_a_truncated_reply_keeps_its_complete_records_and_drops_a_cut_name():
    cut_in_description = BERT_REPLY[:BERT_REPLY.index("BERT reaches 93.2") + len("BERT reaches 9")]
    parsed = parse_extraction(cut_in_description, TYPES)
    assert len(parsed.relations) == 4  # the cut relation still names both ends: kept with what it says
    assert parsed.relations[-1].description == "BERT reaches 9" and parsed.relations[-1].strength == 1.0
    cut_in_name = BERT_REPLY[:BERT_REPLY.index("SQuAD v1.1<|>dataset") + len("SQu")]
    parsed = parse_extraction(cut_in_name, TYPES)
    assert names(parsed) == ["BERT", "GLUE", "MultiNLI", "Accuracy"]
    assert parsed.dropped == 1 and "entity record with 1 of 3 fields" in parsed.errors[0]


def test_wrong_field_counts_are_kept_when_usable_and_dropped_when_not():
    reply = """("entity"<|>XLNet<|>model)##
("entity"<|>Transformer-XL<|>model<|>Transformer-XL models long contexts<|>with segment recurrence)##
("relationship"<|>XLNet<|>Transformer-XL<|>XLNet integrates ideas from Transformer-XL.)##
("relationship"<|>XLNet<|>Transformer-XL<|>XLNet uses segment recurrence.<|>9)##
("relationship"<|>XLNet<|>BERT)##
("entity"<|>XLNet)##
<|COMPLETE|>"""
    parsed = parse_extraction(reply, TYPES)
    assert entity(parsed, "XLNet").type == "model" and entity(parsed, "XLNet").description == ""
    # A description that contained the delimiter is joined back.
    assert entity(parsed, "Transformer-XL").description == "Transformer-XL models long contexts with segment recurrence"
    # The two XLNet - Transformer-XL records are one relation: the first, no keywords and default strength.
    assert pairs(parsed) == [("XLNet", "Transformer-XL")]
    assert parsed.relations[0].strength == 1.0 and parsed.relations[0].keywords == ""
    assert parsed.dropped == 2
    assert any("relationship record with 2 of 5 fields" in e for e in parsed.errors)


def test_a_strength_that_is_not_a_number_gets_the_default():
    reply = """("entity"<|>BERT<|>model<|>A language model.)##
("entity"<|>GLUE<|>dataset<|>A benchmark.)##
("entity"<|>SQuAD<|>dataset<|>A QA benchmark.)##
("entity"<|>SWAG<|>dataset<|>A commonsense inference dataset.)##
("relationship"<|>BERT<|>GLUE<|>BERT is evaluated on GLUE.<|>evaluated on<|>high)##
("relationship"<|>BERT<|>SQuAD<|>BERT is evaluated on SQuAD.<|>evaluated on<|>8/10)##
("relationship"<|>BERT<|>SWAG<|>BERT is evaluated on SWAG.<|>evaluated on<|>Strength: 7)##"""
    parsed = parse_extraction(reply, TYPES)
    assert [r.strength for r in parsed.relations] == [1.0, 8.0, 7.0]
    assert [r.keywords for r in parsed.relations] == ["evaluated on"] * 3
    assert parsed.dropped == 0


def test_empty_names_self_loops_and_unknown_record_kinds_are_dropped_with_a_reason():
    reply = """("entity"<|><|>method<|>An entity without a name.)##
("entity"<|>""<|>method<|>Another one.)##
("entity"<|>BERT<|>model<|>A language model.)##
("relationship"<|>BERT<|>bert<|>BERT is compared with itself.<|>self<|>3)##
("relationship"<|><|>BERT<|>No source.<|>x<|>3)##
("claim"<|>BERT<|>BERT is good.)##"""
    parsed = parse_extraction(reply, TYPES)
    assert names(parsed) == ["BERT"] and parsed.relations == []
    assert parsed.dropped == 5
    joined = "\n".join(parsed.errors)
    assert "without a name" in joined and "to itself" in joined and "without a source" in joined
    assert "unknown kind 'claim'" in joined


def test_relations_to_entities_not_extracted_add_the_endpoint_as_a_concept():
    reply = """("entity"<|>BERT<|>model<|>A language model.)##
("relationship"<|>BERT<|>Next Sentence Prediction<|>BERT is pre-trained with next sentence prediction.<|>pre-training task<|>7)##
<|COMPLETE|>"""
    parsed = parse_extraction(reply, TYPES)
    nsp = entity(parsed, "Next Sentence Prediction")
    assert nsp.type == "concept" and nsp.description == "BERT is pre-trained with next sentence prediction."
    assert len(parsed.relations) == 1 and parsed.dropped == 0
    assert parsed.errors == ["relation 'BERT' - 'Next Sentence Prediction': 'Next Sentence Prediction' had no "
                             "entity record, added as a concept"]


def test_entity_types_match_case_insensitively_and_unknown_types_become_concepts():
    reply = """("entity"<|>GLUE<|>Dataset<|>A benchmark.)##
("entity"<|>F1 score<|>METRICS<|>A metric.)##
("entity"<|>Google AI Language<|>organisation<|>The authors' lab.)##
("entity"<|>Attention<|>Mechanism<|>Attention weighs tokens.)##"""
    parsed = parse_extraction(reply, ["Method", "Dataset", "Metric", "Organization"])
    assert [e.type for e in parsed.entities] == ["Dataset", "Metric", "concept", "concept"]


def test_duplicates_are_merged_case_insensitively():
    reply = """("entity"<|>BERT<|>concept<|>)##
("entity"<|>bert<|>model<|>BERT is a language model.)##
("entity"<|>GLUE<|>dataset<|>A benchmark.)##
("relationship"<|>BERT<|>GLUE<|>BERT is evaluated on GLUE.<|>evaluated on<|>9)##
("relationship"<|>glue<|>bert<|>GLUE evaluates BERT.<|>benchmark<|>5)##"""
    parsed = parse_extraction(reply, TYPES)
    assert names(parsed) == ["BERT", "GLUE"]
    assert entity(parsed, "BERT").type == "model" and entity(parsed, "BERT").description == "BERT is a language model."
    assert len(parsed.relations) == 1 and parsed.relations[0].strength == 9.0


@pytest.mark.parametrize("garbage", ["", "   ", "I'm sorry, I cannot help with that.",
                                     "<|COMPLETE|>", "{not json at all", "| a | b |\n|---|---|", "```\n```",
                                     '{"answer": 42}', "[1, 2, 3]"])
def test_garbage_gives_no_records_and_never_raises(garbage):
    parsed = parse_extraction(garbage, TYPES)
    assert parsed.entities == [] and parsed.relations == []


# --- the parser: JSON replies -------------------------------------------------------------------------------

JSON_REPLY = {
    "entities": [
        {"name": "GPT-3", "type": "model", "description": "GPT-3 is a 175B-parameter autoregressive language model."},
        {"name": "Few-shot learning", "type": "task", "description": "Learning a task from a few demonstrations."},
        {"name": "LAMBADA", "type": "dataset", "description": "LAMBADA tests long-range dependencies."},
    ],
    "relationships": [
        {"source": "GPT-3", "target": "Few-shot learning", "description": "GPT-3 is evaluated in the few-shot "
         "setting.", "keywords": "evaluated in", "strength": 9},
        {"source": "GPT-3", "target": "LAMBADA", "description": "GPT-3 reaches 86.4% accuracy on LAMBADA.",
         "keywords": ["evaluated on", "accuracy"], "strength": "8"},
    ],
}


def test_a_json_reply_plain_or_fenced_with_chatter():
    plain = parse_extraction(json.dumps(JSON_REPLY), TYPES)
    assert names(plain) == ["GPT-3", "Few-shot learning", "LAMBADA"]
    assert pairs(plain) == [("GPT-3", "Few-shot learning"), ("GPT-3", "LAMBADA")]
    assert plain.relations[1].keywords == "evaluated on, accuracy" and plain.relations[1].strength == 8.0
    assert plain.dropped == 0 and plain.errors == []
    fenced = f"Here is the JSON:\n```json\n{json.dumps(JSON_REPLY, indent=2)}\n```\nHope this helps!"
    assert parse_extraction(fenced, TYPES) == plain
    bare = f"Output: {json.dumps(JSON_REPLY)} <|COMPLETE|>"
    assert parse_extraction(bare, TYPES) == plain


def test_a_json_reply_with_lightrag_field_names():
    reply = json.dumps({"entities": [
        {"entity_name": "T5", "entity_type": "MODEL", "description": "T5 casts every task as text-to-text."},
        {"entity_name": "C4", "entity_type": "dataset", "description": "The Colossal Clean Crawled Corpus."}],
        "relations": [{"src_id": "T5", "tgt_id": "C4", "description": "T5 is pre-trained on C4.",
                       "keywords": "pre-trained on", "weight": 9.0},
                      {"src_id": "T5", "tgt_id": "SuperGLUE", "description": "T5 scores 88.9 on SuperGLUE.",
                       "keywords": "evaluated on", "weight": "very strong"}]})
    parsed = parse_extraction(reply, TYPES)
    assert names(parsed) == ["T5", "C4", "SuperGLUE"]
    assert entity(parsed, "T5").type == "model" and entity(parsed, "SuperGLUE").type == "concept"
    assert [r.strength for r in parsed.relations] == [9.0, 1.0]


def test_a_truncated_json_reply_keeps_its_complete_objects():
    text = json.dumps(JSON_REPLY)
    cut = text[:text.index('"LAMBADA", "description": "GPT-3 reaches') + 30]
    parsed = parse_extraction(cut, TYPES)
    assert names(parsed) == ["GPT-3", "Few-shot learning", "LAMBADA"]
    assert pairs(parsed) == [("GPT-3", "Few-shot learning")]
    assert "not complete" in parsed.errors[0]


def test_json_records_without_names_are_dropped():
    reply = json.dumps({"entities": [{"name": "", "type": "model", "description": "nameless"},
                                     "GLUE", {"name": "BERT", "type": "model", "description": "A model."}],
                        "relationships": [{"source": "BERT", "target": "", "description": "to nothing"}]})
    parsed = parse_extraction(reply, TYPES)
    assert names(parsed) == ["BERT"] and parsed.relations == [] and parsed.dropped == 3


# --- the extractor, through the real client and cache, against a local OpenAI-protocol server ---------------

BERT_TEXT = ("We introduce a new language representation model called BERT. It obtains new state-of-the-art results "
             "on eleven natural language processing tasks, including pushing the GLUE score to 80.5% and MultiNLI "
             "accuracy to 86.7%.")
RESNET_TEXT = ("We present a residual learning framework. On the ImageNet dataset we evaluate residual nets with a "
               "depth of up to 152 layers; an ensemble achieves 3.57% top-5 error.")
ADAM_TEXT = "We introduce Adam, an algorithm for first-order gradient-based optimization of stochastic objectives."
GARBAGE_TEXT = "Table 3: ablation over the number of layers (chunk that confuses the model)."
FAILING_TEXT = "A chunk whose endpoint always fails."

RESNET_REPLY = """("entity"<|>ResNet<|>model<|>ResNet is a residual network of up to 152 layers.)##
("entity"<|>ImageNet<|>dataset<|>ImageNet is the image classification dataset used for evaluation.)##
("relationship"<|>ResNet<|>ImageNet<|>Residual nets are evaluated on ImageNet, reaching 3.57% top-5 error.<|>evaluated on<|>9)##
<|COMPLETE|>"""
ADAM_REPLY = """("entity"<|>Adam<|>method<|>Adam is an algorithm for first-order gradient-based optimization.)##
<|COMPLETE|>"""
GLEAN_REPLY = """("entity"<|>Top-5 Error<|>metric<|>Top-5 error is the classification metric reported.)##
("relationship"<|>ResNet<|>Top-5 Error<|>An ensemble of residual nets reaches 3.57% top-5 error.<|>measured by<|>8)##
<|COMPLETE|>"""
GARBAGE_REPLY = """I think the table shows ablations.
("entity"<|><|>method<|>no name)##
("relationship"<|>Layers)##
("table"<|>3<|>ablation)"""
EXTRACT_REPLIES = {BERT_TEXT: BERT_REPLY, RESNET_TEXT: RESNET_REPLY, ADAM_TEXT: ADAM_REPLY,
                   GARBAGE_TEXT: GARBAGE_REPLY}


def chunk(text: str, n: int = 0) -> Chunk:
    return Chunk(id=f"doc1:{n}", doc_id="doc1", index=n, kind="text", text=text, pages=[0], item_indices=[n])


def first_user_message(body) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def is_glean(body) -> bool:
    return sum(m["role"] == "user" for m in body["messages"]) > 1


def paper_model(body) -> Reply:
    """What a well-behaved model answers: by chunk for the extraction, the missed records when gleaning."""
    text = first_user_message(body)
    if is_glean(body):
        return Reply(GLEAN_REPLY if RESNET_TEXT in text else "<|COMPLETE|>")
    return Reply(next((reply for chunk_text, reply in EXTRACT_REPLIES.items() if chunk_text in text), "<|COMPLETE|>"))


@pytest.fixture
def server():
    with OpenAIReplayServer(default=paper_model) as s:
        yield s


def make_extractor(server, tmp_path, gleaning_rounds=1, concurrency=4, json_mode=False, max_retries=1,
                   db_name="papergraph.sqlite"):
    settings = Settings(llm=LLMConfig(provider="openai", base_url=server.url, model=server.model,
                                      max_retries=max_retries, concurrency=concurrency, timeout_s=10),
                        graph=GraphConfig(gleaning_rounds=gleaning_rounds))
    model = get_chat_model(settings, Database(tmp_path / db_name))
    return LLMExtractor(model, settings.graph, concurrency=concurrency, json_mode=json_mode)


def by_chunk(results):
    return {r.chunk_id: r for r in results}


def test_each_chunk_costs_one_extraction_call_plus_its_gleaning_rounds(server, tmp_path):
    extractor = make_extractor(server, tmp_path, gleaning_rounds=1)
    assert extractor.name == f"llm:openai:{server.model}"
    results = by_chunk(extractor.extract([chunk(BERT_TEXT, 0), chunk(RESNET_TEXT, 1)]))
    assert len(server.chat_requests) == 4
    bert, resnet = results["doc1:0"], results["doc1:1"]
    assert bert.llm_calls == 2 and resnet.llm_calls == 2
    assert {e.name for e in bert.entities} == {"BERT", "GLUE", "MultiNLI", "Accuracy", "SQuAD v1.1"}
    assert bert.extractor == extractor.name and not bert.failed and bert.dropped == 0
    # Gleaning adds what the first call missed, and a gleaned relation may point at a first-round entity.
    assert [e.name for e in resnet.entities] == ["ResNet", "ImageNet", "Top-5 Error"]
    assert [(r.source, r.target) for r in resnet.relations] == [("ResNet", "ImageNet"), ("ResNet", "Top-5 Error")]
    assert resnet.errors == []
    # The gleaning call continues the conversation: system, passage, the first reply, then the glean prompt.
    (glean,) = [b for b in server.chat_requests if is_glean(b) and RESNET_TEXT in first_user_message(b)]
    assert [m["role"] for m in glean["messages"]] == ["system", "user", "assistant", "user"]
    assert glean["messages"][2]["content"] == RESNET_REPLY and "missed" in glean["messages"][3]["content"]
    assert all(b["temperature"] == 0 for b in server.chat_requests)
    assert "response_format" not in glean


def test_more_gleaning_rounds_and_none(server, tmp_path):
    results = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=0).extract([chunk(RESNET_TEXT)]))
    assert len(server.chat_requests) == 1 and results["doc1:0"].llm_calls == 1
    assert [e.name for e in results["doc1:0"].entities] == ["ResNet", "ImageNet"]
    # Two rounds, each finding more, are two gleaning calls.
    server.requests.clear()
    glean_more = Reply('("entity"<|>Residual Learning<|>method<|>Learning residual functions.)##<|COMPLETE|>')
    server.then(Reply(RESNET_REPLY), Reply(GLEAN_REPLY), glean_more)
    results = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=2, db_name="two.sqlite")
                       .extract([chunk(RESNET_TEXT)]))
    assert len(server.chat_requests) == 3 and results["doc1:0"].llm_calls == 3
    assert [e.name for e in results["doc1:0"].entities] == ["ResNet", "ImageNet", "Top-5 Error", "Residual Learning"]


def test_gleaning_stops_when_a_round_adds_nothing(server, tmp_path):
    results = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=3).extract([chunk(ADAM_TEXT)]))
    assert len(server.chat_requests) == 2 and results["doc1:0"].llm_calls == 2
    assert [e.name for e in results["doc1:0"].entities] == ["Adam"]


def test_a_429_is_retried_and_the_chunk_succeeds(server, tmp_path):
    server.then(Reply(status=429, headers={"Retry-After": "0"}))
    results = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=0).extract([chunk(BERT_TEXT)]))
    assert len(server.chat_requests) == 2
    assert not results["doc1:0"].failed and len(results["doc1:0"].entities) == 5


def test_a_garbage_reply_gives_no_records_but_does_not_fail_the_chunk(server, tmp_path):
    results = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=1)
                       .extract([chunk(GARBAGE_TEXT, 0), chunk(ADAM_TEXT, 1)]))
    garbage = results["doc1:0"]
    assert not garbage.failed and garbage.entities == [] and garbage.relations == []
    assert garbage.dropped == 3 and garbage.llm_calls == 2 and len(garbage.errors) == 3
    assert [e.name for e in results["doc1:1"].entities] == ["Adam"]


def test_an_endpoint_that_always_fails_fails_that_chunk_only(server, tmp_path):
    server.when(FAILING_TEXT, Reply(status=500, headers={"Retry-After": "0"}))
    chunks = [chunk(BERT_TEXT, 0), chunk(FAILING_TEXT, 1), chunk(ADAM_TEXT, 2)]
    results = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=0, max_retries=1).extract(chunks))
    assert set(results) == {"doc1:0", "doc1:1", "doc1:2"}
    failed = results["doc1:1"]
    assert failed.failed and failed.entities == [] and failed.relations == [] and failed.llm_calls == 0
    assert len(failed.errors) == 1 and "HTTP 500" in failed.errors[0]
    assert sum(FAILING_TEXT in first_user_message(b) for b in server.chat_requests) == 2  # the call and one retry
    assert not results["doc1:0"].failed and len(results["doc1:0"].entities) == 5
    assert not results["doc1:2"].failed and [e.name for e in results["doc1:2"].entities] == ["Adam"]


def test_a_failed_gleaning_call_fails_the_chunk_so_it_is_retried(server, tmp_path):
    server.then(Reply(RESNET_REPLY), Reply(status=400))
    results = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=1).extract([chunk(RESNET_TEXT)]))
    result = results["doc1:0"]
    assert result.failed and result.entities == [] and "HTTP 400" in result.errors[0]
    # The retry pays only for the gleaning call: the first reply is in the cache.
    server.requests.clear()
    results = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=1).extract([chunk(RESNET_TEXT)]))
    assert len(server.chat_requests) == 1 and results["doc1:0"].llm_calls == 1
    assert [e.name for e in results["doc1:0"].entities] == ["ResNet", "ImageNet", "Top-5 Error"]


def test_running_again_with_the_cache_makes_no_request(server, tmp_path):
    chunks = [chunk(BERT_TEXT, 0), chunk(RESNET_TEXT, 1), chunk(ADAM_TEXT, 2)]
    first = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=1).extract(chunks))
    made = len(server.chat_requests)
    assert made == 6 and sum(r.llm_calls for r in first.values()) == 6
    again = by_chunk(make_extractor(server, tmp_path, gleaning_rounds=1).extract(chunks))
    assert len(server.chat_requests) == made
    assert all(r.llm_calls == 0 for r in again.values())
    for chunk_id, result in first.items():
        assert again[chunk_id].entities == result.entities and again[chunk_id].relations == result.relations


def test_an_empty_chunk_makes_no_call(server, tmp_path):
    results = by_chunk(make_extractor(server, tmp_path).extract([chunk("  \n ", 0)]))
    assert len(server.chat_requests) == 0
    assert results["doc1:0"].entities == [] and results["doc1:0"].llm_calls == 0 and not results["doc1:0"].failed
    assert list(make_extractor(server, tmp_path).extract([])) == []


def test_chunks_run_concurrently_and_are_yielded_as_they_complete(tmp_path):
    lock, in_flight, peak = threading.Lock(), [0], [0]

    def slow_model(body):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(1.0 if BERT_TEXT in first_user_message(body) else 0.3)
        with lock:
            in_flight[0] -= 1
        return paper_model(body)

    with OpenAIReplayServer(default=slow_model) as server:
        chunks = [chunk(BERT_TEXT, 0), chunk(RESNET_TEXT, 1), chunk(ADAM_TEXT, 2)]
        order = [r.chunk_id for r in make_extractor(server, tmp_path, gleaning_rounds=0, concurrency=3)
                 .extract(chunks)]
    assert peak[0] >= 2
    assert sorted(order) == ["doc1:0", "doc1:1", "doc1:2"] and order[-1] == "doc1:0"


def test_json_mode_sends_the_capped_schema_and_reads_json(tmp_path):
    with OpenAIReplayServer(default=Reply(json.dumps(JSON_REPLY))) as server:
        extractor = make_extractor(server, tmp_path, gleaning_rounds=0, json_mode=True)
        (result,) = extractor.extract([chunk("GPT-3 is evaluated on LAMBADA in the few-shot setting.")])
        (body,) = server.chat_requests
    schema = body["response_format"]["json_schema"]["schema"]
    assert body["response_format"]["type"] == "json_schema"
    assert schema["properties"]["entities"]["maxItems"] == MAX_LIST_ITEMS
    assert "concept" in schema["properties"]["entities"]["items"]["properties"]["type"]["enum"]
    assert "JSON" in body["messages"][0]["content"]
    assert [e.name for e in result.entities] == ["GPT-3", "Few-shot learning", "LAMBADA"]
    assert len(result.relations) == 2 and not result.failed
