"""The LLM extraction prompts and the reply parser: records in the prompt's format and the variants models write
(delimiters, quotes, chatter, markup), malformed records kept when usable and dropped with a reason when not,
and JSON replies, plain, fenced, with LightRAG's field names or truncated."""
# The replies are text received whole: breaking their lines would change them.
from __future__ import annotations

import json

import pytest

from core.graph.extract.llm.replies import (
    EXTRACTION_JSON_SCHEMA,
    MAX_LIST_ITEMS,
    MAX_NAME_CHARS,
    extraction_json_schema,
    parse_extraction,
)
from core.prompts import PROMPTS
from core.settings.config import PAPER_ENTITY_TYPES
from tests.pipeline.extraction_replies import BERT_REPLY, JSON_REPLY

TYPES = PAPER_ENTITY_TYPES


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
