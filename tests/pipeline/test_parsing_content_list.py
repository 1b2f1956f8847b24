"""Content-list reading, markdown, reading order and the text-layer detector: pure functions, no PDFs."""

import pytest

from core.content.content_list import (
    MalformedContentList,
    item_from_dict,
    item_to_dict,
    load_content_list,
    parse_content_list,
)
from core.pipeline.parsing.layout import reading_order, to_1000
from core.pipeline.parsing.markdown import html_table_to_markdown, to_markdown
from core.pipeline.parsing.ocr_pass import page_list
from core.pipeline.parsing.textlayer import is_gibberish

ENGLISH = ("Migration graphs of zebrafish larvae are notoriously hard to sample because each larva wanders "
           "through a tangle of currents. Earlier work relied on marigold sampling, which stalls on dense graphs.")
SHIFTED = ENGLISH.translate(str.maketrans("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
                                          "zabcdefghijklmnopqrstuvwxyZABCDEFGHIJKLMNOPQRSTUVWXY"))


def test_both_caption_spellings_are_read():
    old = item_from_dict({"type": "image", "img_path": "images/a.jpg", "img_caption": ["Figure 1: old"],
                          "img_footnote": ["note"], "page_idx": 2}, 0)
    new = item_from_dict({"type": "image", "img_path": "images/a.jpg", "image_caption": ["Figure 1: new"],
                          "page_idx": 2}, 1)
    assert old.caption == "Figure 1: old" and old.footnote == "note"
    assert new.caption == "Figure 1: new"
    assert item_to_dict(old)["image_caption"] == ["Figure 1: old"]  # written back in mineru >= 2 spelling


def test_unknown_types_and_fields_survive_a_round_trip():
    raw = {"type": "aside_text", "text": "arXiv:2401.00001", "page_idx": 0, "bbox": [1, 2, 3, 4], "anchor": "x"}
    item = item_from_dict(raw, 0)
    assert item.type == "aside_text" and item.extra == {"anchor": "x"}
    assert item_to_dict(item) == raw


@pytest.mark.parametrize("data, message", [
    ([{"type": "text", "text": "a"}, {"text": "no type"}], "item 1 has no 'type'"),
    ([{"type": "text", "page_idx": "two"}], "item 0 has a non-numeric page_idx 'two'"),
    ([{"type": "text", "page_idx": -1}], "item 0 has a negative page_idx"),
    (["just a string"], "item 0 is a str, not an object"),
    ({"items": []}, "a content list is a JSON array of items, not a dict"),
])
def test_malformed_content_lists_name_what_is_wrong(data, message):
    with pytest.raises(MalformedContentList, match=message):
        parse_content_list(data)


def test_invalid_json_names_the_file_and_line(tmp_path):
    path = tmp_path / "x_content_list.json"
    path.write_text('[{"type": "text"},\n oops]', encoding="utf-8")
    with pytest.raises(MalformedContentList, match=r"x_content_list.json is not valid JSON: .* line 2"):
        load_content_list(path)


def test_markdown_follows_minerus_conventions():
    items = parse_content_list([
        {"type": "text", "text": "A Title", "text_level": 1, "page_idx": 0},
        {"type": "text", "text": "1 Intro", "text_level": 2, "page_idx": 0},
        {"type": "text", "text": "Body text.", "page_idx": 0},
        {"type": "page_number", "text": "1", "page_idx": 0},
        {"type": "image", "img_path": "images/f.jpg", "image_caption": ["Figure 1: A plot."], "page_idx": 0},
        {"type": "table", "table_caption": ["Table 1: Scores."], "page_idx": 1,
         "table_body": "<table><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>2</td></tr></table>"},
        {"type": "code", "sub_type": "code", "code_body": "print(1)", "code_caption": ["Listing 1"], "page_idx": 1},
    ])
    md = to_markdown(items)
    assert md.startswith("# A Title\n\n## 1 Intro\n\nBody text.\n\n![](images/f.jpg)\n\nFigure 1: A plot.")
    assert "| a | b |\n| --- | --- |\n| 1 | 2 |" in md
    assert "Listing 1\n\n```\nprint(1)\n```" in md
    assert "\n1\n" not in md  # page numbers are furniture


def test_tables_with_merged_cells_stay_html():
    html = '<table><tr><td colspan="2">both</td></tr><tr><td>1</td><td>2</td></tr></table>'
    assert html_table_to_markdown(html) is None
    assert html in to_markdown(parse_content_list([{"type": "table", "table_body": html, "page_idx": 0}]))


def test_reading_order_reads_left_column_then_right_around_a_full_width_figure():
    boxes = [
        (50, 40, 560, 60),     # 0 title, full width
        (320, 80, 560, 200),   # 1 right column, top
        (50, 80, 290, 200),    # 2 left column, top
        (50, 220, 560, 400),   # 3 full-width figure
        (320, 420, 560, 700),  # 4 right column, bottom
        (50, 420, 290, 700),   # 5 left column, bottom
    ]
    assert reading_order(boxes) == [0, 2, 1, 3, 5, 4]
    assert reading_order([(50, 300, 550, 400), (50, 100, 550, 200)]) == [1, 0]  # single column: top to bottom
    assert to_1000((0, 0, 306, 792), 612, 792) == [0.0, 0.0, 500.0, 1000.0]


def test_gibberish_detector_fires_on_a_broken_encoding_only():
    assert is_gibberish(SHIFTED)
    assert is_gibberish("\ufffd" * 40 + " abc")
    assert not is_gibberish(ENGLISH)
    assert not is_gibberish("Dolma: an Open Corpus")  # too short to judge
    assert not is_gibberish("史的事情。为有用物的量找到社会尺度，也是这样。" * 10)  # not Latin script
    assert not is_gibberish("x = y + z; f(x) = 2x^2 + 3y - 4z, g(t) = sin(t) / cos(t) " * 6)
    assert not is_gibberish("def build_index(self, path):\n    return self.store.rebuild(path)\n" * 6)


def test_page_lists_read_as_a_person_counts():
    assert page_list([2]) == "page 3"
    assert page_list([0, 1, 2, 3, 6]) == "pages 1–4, 7"
