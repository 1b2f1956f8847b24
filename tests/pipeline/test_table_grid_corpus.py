"""The acceptance check of the table-grid repair on a real paper: MinerU merges the header cells of SPECTER's
Table 1 (page 7, 0-based 6: "MAP nDCG" in one cell), so the results extractor refused it; parsed as ingest parses
it, the table is rebuilt from the text layer and gives SPECTER's 80.0 average on SciDocs."""
from __future__ import annotations

import pytest

from core.pipeline.parsing.table_grid_repair import MINERU_TABLE_KEY
from core.pipeline.results import read_paper_results
from core.text.result_names import dataset_key, method_key

pytestmark = [pytest.mark.corpus, pytest.mark.slow]




def test_specter_table_1_rebuilt_from_the_text_layer(specter):
    table = next(i for i in specter if i.type == "table" and i.page_idx == 6 and "Table 1" in i.caption)
    assert MINERU_TABLE_KEY in table.extra  # MinerU's own HTML kept
    assert "<th>MAP</th><th>nDCG</th>" in table.table_body and "<b>80.0</b>" in table.table_body


def test_specter_average_read_from_table_1_with_its_dataset_and_page(specter):
    records = read_paper_results("specter", specter)
    found = [r for r in records if r.table_label == "Table 1" and r.method_key == method_key("SPECTER")
             and r.value == 80.0]
    assert found, [(r.table_label, r.method, r.dataset, r.metric, r.value) for r in records][:40]
    avg = found[0]
    assert avg.page == 6 and dataset_key(avg.dataset) == dataset_key("SciDocs") and avg.best
