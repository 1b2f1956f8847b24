"""Tables MinerU's flash tier writes as laid-out text (its own output on the shared papers, copied here) come back
as rows and columns the description, the reader and the gallery read."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.content.content_list import TEXT_TABLE_KEY, item_from_dict, item_to_dict
from core.text.tables import table_records
from core.text.text_tables import text_table_html, text_table_rows

SPECTER_TABLE_1 = """\
Task →                Classification    User activity prediction       Citation prediction
                                                                                                  Recomm.
Avg. Subtask →
                     MAG MeSH          Co-View        Co-Read          Cite        Co-Cite
Model ↓ / Metric →      F1      F1 MAP nDCG MAP nDCG MAP nDCG MAP nDCG nDCG ˆ                           P@1 ˆ
Random                 4.8      9.4  25.2    51.6   25.6    51.9   25.1    51.5  24.9    51.4    51.3   16.8   32.5
Doc2vec (2014)        66.2     69.2  67.8    82.9   64.9    81.6   65.3    82.2  67.1    83.4    51.7   16.9   66.6
SPECTER (Ours)        82.0     86.4  83.6    91.5   84.5    92.4   88.3    94.9  88.1    94.8    53.9   20.0   80.0
"""

S2ORC_TABLE_9 = """\
Language model            Training data
ELMO                      1BW (800M)
(Peters et al., 2018a)    Wikipedia (1.9B)
                          WMT 2008-2012 (3.6B)
BERT                      BooksCorpus (800M)
"""

PASA_TABLE_3 = """\
Name                 Implementation
            Generate a search query and invoke
[Search] the search tool. Append all resulting
"""


def test_a_results_table_reads_as_rows_of_numbers_under_the_metric_header():
    rows, header = text_table_rows(SPECTER_TABLE_1)
    assert header == 5  # the line above the first row of numbers closes the header
    specter = next(r for r in rows if r[0] == "SPECTER (Ours)")
    assert specter[1:4] == ["82.0", "86.4", "83.6"] and specter[-1] == "80.0"
    records = table_records(text_table_html(SPECTER_TABLE_1))
    assert len(records) == 3
    assert records[-1].split("; ")[0].endswith(": SPECTER (Ours)") and "80.0" in records[-1]


def test_a_wrapped_cell_continues_the_row_above():
    records = table_records(text_table_html(S2ORC_TABLE_9))
    assert records == ["Language model: ELMO; Training data: 1BW (800M)",
                       "Language model: (Peters et al., 2018a); Training data: Wikipedia (1.9B) WMT 2008-2012 (3.6B)",
                       "Language model: BERT; Training data: BooksCorpus (800M)"]


def test_text_without_columns_keeps_every_word():
    html_body = text_table_html(PASA_TABLE_3)
    words = " ".join(table_records(html_body))
    for word in ("Generate", "invoke", "[Search]", "Append", "resulting"):
        assert word in words


def test_the_content_list_reader_converts_text_tables_and_keeps_the_text_as_written():
    item = item_from_dict({"type": "table", "page_idx": 0, "table_body": S2ORC_TABLE_9,
                           "table_caption": ["Table 9: token counts"]}, 0)
    assert item.table_body.startswith("<table>") and item.extra[TEXT_TABLE_KEY] == S2ORC_TABLE_9
    again = item_from_dict(item_to_dict(item), 0)  # a round trip does not convert twice
    assert again.table_body == item.table_body and again.extra[TEXT_TABLE_KEY] == S2ORC_TABLE_9
    html_item = item_from_dict({"type": "table", "page_idx": 0, "table_body": "<table><tr><td>a</td></tr></table>"}, 1)
    assert html_item.table_body == "<table><tr><td>a</td></tr></table>" and TEXT_TABLE_KEY not in html_item.extra


def test_hostile_cells_are_escaped():
    body = "Name        Value\n<script>x</script>    <img src=x onerror=alert(1)>\nok          2\n"
    out = text_table_html(body)
    assert "<script>" not in out and "<img" not in out and "&lt;script&gt;" in out


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=3000))
def test_any_text_gives_html_or_nothing_and_never_raises(text):
    out = text_table_html(text)
    assert out == "" or out.startswith("<table>")
    if text.strip() and "\x0b" not in text and "\x0c" not in text:
        assert out  # text that has words is never dropped
