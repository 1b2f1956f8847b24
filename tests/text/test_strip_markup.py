"""Passages shown as plain text (core.text.plain.strip_markup, core.text.safe_markdown.passage_markdown): whatever
HTML or Markdown a paper's parse carries, the result holds no tag, and what a reader should see stays."""
from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from core.text.plain import strip_markup
from core.text.safe_markdown import passage_markdown

TAG = re.compile(r"</?[A-Za-z][^<>]*>|<![^<>]*>|<\?[^<>]*>")
PIECES = ["<", ">", "/", "!", "?", "&lt;", "&gt;", "&#60;", "&amp;", "\\", "b", "script", "img src=x onerror=1",
          "sup", "**", "*", "_", "#", "[", "](", ")", "`", "!", "--", " ", "\n", "td", "table", "a", "é"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join) | st.text(max_size=200))
def test_stripped_text_never_contains_a_tag(text):
    out = strip_markup(text)
    assert not TAG.search(out), (text, out)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_passage_markdown_never_carries_an_unescaped_angle_bracket(text):
    out = passage_markdown(text)
    assert not re.search(r"(?<!\\)[<>]", out), (text, out)


def test_parser_markup_reads_as_text():
    assert strip_markup("**Co-Views** Our co-views count v<sub>2</sub> and footnote<sup>1</sup>.") == \
        "Co-Views Our co-views count v₂ and footnote¹."
    assert strip_markup("## 3 Method\n\nWe use \\_the\\_ *SciDocs* [benchmark](https://x.org/b).") == \
        "3 Method\nWe use _the_ SciDocs benchmark."
    assert strip_markup("<table><tr><th>model</th><th>F1</th></tr><tr><td>SPECTER</td><td>80.0</td></tr></table>") \
        == "model | F1\nSPECTER | 80.0"
    assert strip_markup("<script>alert(1)</script>p &lt; 0.05 &amp; snake_case a*b*c") == "p < 0.05 & snake_case a*b*c"
    assert strip_markup("<<b>script>alert(1)<</b>/script>tail") == "tail"  # a script made by stripping goes too


def test_passage_markdown_keeps_rows_apart_and_escapes():
    assert passage_markdown("<tr><td>a*b</td></tr><tr><td>[x](javascript:1)</td></tr>") == "a\\*b  \nx"


def test_unclosed_marks_cost_linear_time():
    import time

    for text in ("*a " * 5000, "**a " * 4000, "`a " * 5000):
        start = time.perf_counter()
        strip_markup(text)
        assert time.perf_counter() - start < 0.5, text[:8]  # unbounded spans: 1.8 s for the first
