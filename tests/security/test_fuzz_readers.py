"""Attack 6: property-based fuzzing of the two readers that take files from users. Whatever bytes or JSON come
in, the answer is records or the module's own error (MalformedContentList, QuestionSetError), never another
exception, and every string that comes out is valid UTF-8."""
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.content.content_list import MalformedContentList, load_content_list
from core.eval.questions import QuestionSetError, parse_question_set

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10**40), max_value=10**40),
                     st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20))
json_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) |
                           st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)
_page = st.one_of(st.integers(min_value=-5, max_value=10**13), st.floats(), st.text(max_size=6),
                  st.sampled_from(["1e12", "Infinity", "NaN", "1e30", "-0"]))
items = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "image", "table", "equation", "list", ""]), "page_idx": _page},
    optional={"text": json_values, "text_level": json_values, "bbox": json_values, "img_path": json_values,
              "image_caption": json_values, "table_body": json_values, "list_items": json_values,
              "extra": json_values})
_raw_texts = st.sampled_from(["[", "]", "{", "}", '"', "\\ud800", "\\u0000", ",", ":", "1e999", "NaN", "Infinity",
                              "-", "null", "true", " ", "\n", "\r", "question", "answers", '"page_idx"', "\x1b"])
near_json = st.lists(_raw_texts, max_size=40).map("".join)


def _dumps(value) -> str:
    return json.dumps(value, allow_nan=True)  # NaN / Infinity as JSON spells them in the wild


def _read_content_list(data: bytes):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "content_list.json"
        path.write_bytes(data)
        try:
            records = load_content_list(path)
        except MalformedContentList:
            return None
    for item in records:
        assert isinstance(item.page_idx, int) and 0 <= item.page_idx < 10_000
        json.dumps([item.text, item.captions, item.table_body]).encode("utf-8")
        item.text.encode("utf-8")
    return records


@FUZZ
@given(st.binary(max_size=300))
def test_content_list_reader_on_any_bytes(data):
    _read_content_list(data)


@FUZZ
@given(st.one_of(json_values, st.lists(items, max_size=5)))
def test_content_list_reader_on_any_json(value):
    _read_content_list(_dumps(value).encode("utf-8"))


@FUZZ
@given(near_json)
def test_content_list_reader_on_near_json(text):
    _read_content_list(text.encode("utf-8", "surrogatepass"))


_questions = st.fixed_dictionaries({"question": json_values},
                                   optional={"answers": json_values, "evidence": json_values, "doc_id": json_values,
                                             "id": json_values})
_names = st.sampled_from(["q.jsonl", "q.json", "q.csv", "q.txt"])


def _read_question_set(data, name: str) -> None:
    try:
        questions = parse_question_set(data, name)
    except QuestionSetError as exc:
        str(exc).encode("utf-8")
        return
    assert questions
    for q in questions:
        json.dumps(q.to_dict(), ensure_ascii=False).encode("utf-8")


@FUZZ
@given(st.binary(max_size=300), _names)
def test_question_set_reader_on_any_bytes(data, name):
    _read_question_set(data, name)


@FUZZ
@given(st.one_of(json_values, st.lists(_questions, max_size=4)), _names)
def test_question_set_reader_on_any_json(value, name):
    text = _dumps(value)
    if name == "q.jsonl" and isinstance(value, list):
        text = "\n".join(_dumps(v) for v in value)
    _read_question_set(text, name)


@FUZZ
@given(st.text(max_size=200), _names)
def test_question_set_reader_on_any_text(text, name):
    _read_question_set(text, name)


@FUZZ
@given(near_json, _names)
def test_question_set_reader_on_near_json(text, name):
    _read_question_set(text, name)
