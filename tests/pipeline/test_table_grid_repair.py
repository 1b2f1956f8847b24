"""A damaged MinerU table rebuilt from the PDF's text layer (core/pipeline/parsing/table_grid_repair.py), on a real
PDF made here: a booktabs-style table with group headers over \\cmidrules and a bold best value."""
from __future__ import annotations

import pymupdf
import pytest

from core.pipeline.parsing.table_grid_repair import (
    MINERU_TABLE_KEY,
    GridCounts,
    rebuild,
    repair_table_grid,
    table_rules,
    table_words,
)
from core.schema.records import ContentItem
from core.text.tables import table_grid

ROWS = [("Baseline", ["71.2", "64.0", "55.1", "49.8"]), ("BERT", ["80.4", "77.9", "61.3", "58.2"]),
        ("Ours", ["83.5", "79.1", "66.7", "60.4"])]
COLS = [200, 250, 320, 370]  # x of each value column, points
# MinerU's reading of the same table: the metric names merged into one header cell, a row's numbers into one cell
DAMAGED = ("<table><tr><td></td><td>SciFact</td><td>NFCorpus</td></tr><tr><td>Model</td><td>P R</td><td>P R</td>"
           "</tr><tr><td>Baseline</td><td>71.2 64.0</td><td>55.1 49.8</td></tr><tr><td>BERT</td><td>80.4 77.9</td>"
           "<td>61.3 58.2</td></tr><tr><td>Ours</td><td>83.5 79.1</td><td>66.7 60.4</td></tr></table>")


def _table_pdf(path, text=True):
    doc = pymupdf.open()
    page = doc.new_page(width=600, height=800)
    if text:
        page.insert_text((100, 90), "Table 1: Results on two datasets.", fontsize=9)
        page.draw_line((100, 100), (400, 100), width=0.8)  # \toprule
        page.insert_text((215, 115), "SciFact", fontsize=9)
        page.insert_text((330, 115), "NFCorpus", fontsize=9)
        page.draw_line((195, 119), (275, 119), width=0.4)  # \cmidrule over SciFact's two columns
        page.draw_line((315, 119), (395, 119), width=0.4)
        page.insert_text((100, 130), "Model", fontsize=9)
        for x in COLS:
            page.insert_text((x + 5, 130), "P" if x in (200, 320) else "R", fontsize=9)
        page.draw_line((100, 134), (400, 134), width=0.4)  # \midrule
        for i, (label, values) in enumerate(ROWS):
            y = 147 + 12 * i
            page.insert_text((100, y), label, fontsize=9)
            for x, v in zip(COLS, values):
                bold = label == "Ours" and x == 200
                page.insert_text((x, y), v, fontsize=9, fontname="hebo" if bold else "helv")
        page.draw_line((100, 180), (400, 180), width=0.8)  # \bottomrule
    else:  # a scan: the same page as an image, no text layer
        pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 300, 100), False)
        pix.clear_with(200)
        page.insert_image(pymupdf.Rect(100, 100, 400, 180), pixmap=pix)
    doc.save(path)
    return path


def _item(body=DAMAGED):
    # 0-1000 page coordinates of the table's body (caption above it left out, as MinerU boxes tables)
    return ContentItem(type="table", page_idx=0, bbox=[160, 130, 670, 228], table_body=body,
                       captions=["Table 1: Results on two datasets."], source="mineru")


@pytest.fixture()
def table_pdf(tmp_path):
    return _table_pdf(tmp_path / "table.pdf")


def test_booktabs_table_rebuilt_with_group_headers_over_their_columns_and_bold_kept(table_pdf):
    with pymupdf.open(table_pdf) as doc:
        page = doc[0]
        item = _item()
        table = rebuild(table_words(page, item.bbox), table_rules(page, item.bbox))
    assert table is not None and table.columns == 5
    html = table.html()
    assert '<th colspan="2">SciFact</th>' in html and '<th colspan="2">NFCorpus</th>' in html
    assert "<td><b>83.5</b></td>" in html and "Table 1" not in html
    grid = table_grid(html)
    assert grid.rows[-1] == ["Ours", "83.5", "79.1", "66.7", "60.4"]
    assert grid.columns()[1:3] == ["SciFact / P", "SciFact / R"]


def test_damaged_mineru_table_replaced_and_its_html_kept_for_provenance(table_pdf):
    counts = GridCounts()
    item = _item()
    with pymupdf.open(table_pdf) as doc:
        assert repair_table_grid(item, doc[0], counts)
    assert counts.tables == 1 and "several numbers" in counts.examples[0]
    assert item.extra[MINERU_TABLE_KEY] == DAMAGED
    assert table_grid(item.table_body).width == 5


def test_sound_mineru_table_left_as_it_is(table_pdf):
    sound = ("<table><tr><th></th><th>SciFact</th><th>SciFact</th><th>NFCorpus</th><th>NFCorpus</th></tr>"
             "<tr><th>Model</th><th>P</th><th>R</th><th>P</th><th>R</th></tr>"
             + "".join(f"<tr><td>{label}</td>" + "".join(f"<td>{v}</td>" for v in values) + "</tr>"
                       for label, values in ROWS) + "</table>")
    item = _item(sound)
    with pymupdf.open(table_pdf) as doc:
        assert not repair_table_grid(item, doc[0], GridCounts())
    assert item.table_body == sound and MINERU_TABLE_KEY not in item.extra


def test_scanned_page_never_repaired(tmp_path):
    path = _table_pdf(tmp_path / "scan.pdf", text=False)
    item = _item()
    with pymupdf.open(path) as doc:
        assert not repair_table_grid(item, doc[0], GridCounts())
    assert item.table_body == DAMAGED


def test_next_caption_below_the_box_is_no_lost_word(tmp_path):
    """A sound MinerU table whose box ends just above the next caption: the caption's garbled text layer ("T bl 6 C
    l l t") is neither read into the grid nor counted as words MinerU lost (the box is widened sideways only)."""
    path = _table_pdf(tmp_path / "next.pdf")
    with pymupdf.open(path) as doc:
        doc[0].insert_text((100, 194), "T bl 6 C l l t R s lts f d l", fontsize=9)
        doc.saveIncr()
    sound = ("<table><tr><th></th><th>SciFact</th><th>SciFact</th><th>NFCorpus</th><th>NFCorpus</th></tr>"
             "<tr><th>Model</th><th>P</th><th>R</th><th>P</th><th>R</th></tr>"
             + "".join(f"<tr><td>{label}</td>" + "".join(f"<td>{v}</td>" for v in values) + "</tr>"
                       for label, values in ROWS) + "</table>")
    item = _item(sound)
    with pymupdf.open(path) as doc:
        assert not any("bl" == w.text for w in table_words(doc[0], item.bbox))
        assert not repair_table_grid(item, doc[0], GridCounts())
    assert item.table_body == sound
