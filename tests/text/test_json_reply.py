"""The one reader of JSON in model replies: where it finds the JSON, what it forgives, and what it never invents."""
from __future__ import annotations

import json

from core.text.json_reply import excerpt, flat_json_objects, key_lookup, read_first_object, read_json, read_json_object

REPORT = {"title": "BERT and GLUE", "findings": [{"summary": "BERT tops GLUE", "score": 9}]}


def test_an_object_is_found_in_fences_prose_and_with_trailing_commas():
    plain = json.dumps(REPORT)
    assert read_json_object(plain) == REPORT
    assert read_json_object(f"Sure! Here it is:\n```json\n{plain}\n```\nAnything else?") == REPORT
    assert read_json_object(f"```json\n{plain}") == REPORT  # a fence cut off by the token limit
    assert read_json_object(f"The report: {plain} (as asked)") == REPORT
    assert read_json_object('{"title": "BERT and GLUE", "findings": [{"summary": "BERT tops GLUE", "score": 9,},],}') \
        == REPORT


def test_nothing_readable_is_none_never_an_exception():
    for reply in ("", None, "no JSON here", "{nonsense", '{"a": 1} and {"b": 2}', "[1, 2]", '"a string"'):
        assert read_json_object(reply) is None


def test_read_json_also_takes_a_list_and_prefers_the_fenced_one():
    assert read_json('[{"name": "BERT"}, {"name": "GLUE"},]') == [{"name": "BERT"}, {"name": "GLUE"}]
    assert read_json('Draft {"x": 1}\n```json\n{"y": 2}\n```') == {"y": 2}
    assert read_json("42") is None and read_json("nothing") is None


def test_flat_objects_are_the_finished_records_of_a_cut_reply():
    reply = json.dumps({"entities": [{"name": "BERT", "type": "model"}, {"name": "GLUE", "type": "dataset"}],
                        "relationships": [{"source": "BERT", "target": "GLUE"}]})
    cut = reply[:reply.index('"target"')]
    assert read_json(cut) is None
    assert flat_json_objects(cut) == [{"name": "BERT", "type": "model"}, {"name": "GLUE", "type": "dataset"}]
    assert flat_json_objects('{"name": "A",} {broken} {"name": "B"}') == [{"name": "A"}, {"name": "B"}]
    assert flat_json_objects("") == [] and flat_json_objects(None) == []


def test_the_first_balanced_object_ignores_what_follows_and_braces_in_strings():
    assert read_first_object('{"description": "Bars of {F1}"} then {"other": 1}') == {"description": "Bars of {F1}"}
    assert read_first_object('{"description": "a \\"quoted\\" }"}') == {"description": 'a "quoted" }'}
    # An object that never closes is skipped for the next balanced one inside it.
    assert read_first_object('{"description": "cut", "entities": [{"name": "BERT"}, {"na') == {"name": "BERT"}
    assert read_first_object("{x} is not JSON") is None and read_first_object("no braces") is None


def test_keys_match_loosely_and_excerpts_stay_on_one_line():
    assert key_lookup({"Overall Winner": "A", "reason": "r"}, "overall") == "A"
    assert key_lookup({"high_level_keywords": ["x"]}, "High Level Keywords") == ["x"]
    assert key_lookup({"a": 1}, "b") is None
    assert excerpt("a\n  b " + "c" * 100, 10) == "a b ccccc…"  # ten characters
