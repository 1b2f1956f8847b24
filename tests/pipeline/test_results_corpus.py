"""The acceptance check of the results issue on a real paper: SPECTER's Table 1 (page 7, 0-based 6) gives
SPECTER's 80.0 average on SciDocs, the dataset read from the caption ("Results on the SCIDOCS evaluation suite"),
and its ablation table, its Table 2, reports no dataset it does not name. The paper is parsed as ingest parses it."""
from __future__ import annotations

import pytest

from core.pipeline.results import read_paper_results
from core.text.result_names import method_key

pytestmark = [pytest.mark.corpus, pytest.mark.slow]


@pytest.fixture(scope="module")
def specter_records(specter):
    return read_paper_results("specter", specter)


def test_specter_ablation_average_read_with_its_page(specter_records):
    # Table 1 (whose header MinerU merges) is rebuilt from the text layer: tests/pipeline/test_table_grid_corpus.py.
    # Table 2's average column is read, with its page.
    found = [r for r in specter_records if r.method_key == method_key("SPECTER") and r.value == 80.0
             and r.table_label == "Table 2"]
    assert found, [(r.table_label, r.method, r.dataset, r.metric, r.value) for r in specter_records][:40]
    avg = found[0]
    assert avg.table_label == "Table 2" and avg.page == 6 and avg.metric_key == "average"
    assert avg.bbox and avg.cell_ref.startswith("Table 2, row")


def test_every_record_of_specter_cites_a_table_cell(specter_records):
    assert len(specter_records) >= 5
    for r in specter_records:
        assert r.table_label.startswith("Table") and r.method and r.value_text
        assert r.row >= 1 and r.col >= 1
