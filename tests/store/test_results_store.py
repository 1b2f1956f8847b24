"""The results store for real (SQLite): a paper's records replaced whole, found by their keys, counted for the
pickers, and gone with the paper."""
from __future__ import annotations

import pytest

from core.library import open_library
from core.store.base import ResultFilter
from tests.graph_papers import fast_workspace
from tests.results_records import SCIBERT, SPECTER, add_papers, record, specter_records


@pytest.fixture
def lib(tmp_path):
    lib = open_library(fast_workspace(tmp_path / "ws"))
    add_papers(lib)
    return lib


def test_records_come_back_as_stored_in_table_order(lib):
    back = lib.results.by_doc(SPECTER)
    assert sorted(back, key=lambda r: (r.row, r.col)) == sorted(specter_records(), key=lambda r: (r.row, r.col))
    assert [(r.row, r.col) for r in back] == sorted((r.row, r.col) for r in back)
    assert back[0].bbox == (100.0, 200.0, 900.0, 500.0) and back[0].cell_ref.startswith("Table 1, row ")


def test_a_re_parse_replaces_the_papers_records_and_leaves_the_others(lib):
    lib.results.replace_doc(SPECTER, [record(SPECTER, 1, 1, "SPECTER", "SciDocs", "Avg.", 81.0)])
    assert [r.value for r in lib.results.by_doc(SPECTER)] == [81.0]
    assert len(lib.results.by_doc(SCIBERT)) == 5
    with pytest.raises(ValueError):
        lib.results.replace_doc(SPECTER, [record(SCIBERT, 1, 1, "x", "y", "z", 1.0)])


def test_filters_by_key_setting_paper_and_words(lib):
    f = lib.results.find
    assert {r.doc_id for r in f(ResultFilter(dataset_key="scidocs", metric_key="avg."))} == {SPECTER, SCIBERT}
    assert [r.method for r in f(ResultFilter(dataset_key="scidocs", metric_key="map", setting="dev"))] == ["Citeomatic"]
    assert {r.doc_id for r in f(ResultFilter(method_key="scibert", doc_ids=[SCIBERT]))} == {SCIBERT}
    assert f(ResultFilter(doc_ids=[])) == []
    assert {r.method for r in f(ResultFilter(text="chemprot bio"))} == {"BioBERT"}
    assert f(ResultFilter(text="100%_")) == []  # LIKE's wildcards are the user's characters, not patterns


def test_key_counts_are_what_the_pickers_offer(lib):
    datasets = lib.results.key_counts("dataset")
    assert datasets[0] == ("scidocs", "SciDocs", 6, 2) and datasets[1] == ("chemprot", "ChemProt", 4, 1)
    metrics = lib.results.key_counts("metric", ResultFilter(dataset_key="chemprot"))
    assert {(k, n) for k, _, n, _ in metrics} == {("f1", 2), ("error", 2)}


def test_delete_leaves_nothing_of_the_paper(lib):
    assert lib.results.doc_counts() == {SPECTER: 5, SCIBERT: 5}
    lib.results.delete_doc(SPECTER)
    assert lib.results.doc_counts() == {SCIBERT: 5} and lib.results.by_doc(SPECTER) == []
    assert lib.results.count() == 5


def test_a_deleted_paper_leaves_no_record_and_the_collector_finds_orphans(lib):
    from core.pipeline.documents import delete_document
    from core.pipeline.gc import collect_garbage, footprint, unknown_doc_ids

    assert footprint(lib, [SPECTER])["results"] == 5
    delete_document(lib, SPECTER)
    assert +footprint(lib, [SPECTER]) == {}
    lib.documents.delete(SCIBERT)  # what an older version's interrupted delete would leave: the records alone
    assert unknown_doc_ids(lib) == {SCIBERT}
    assert collect_garbage(lib, min_age_s=0)["results"] == 5 and lib.results.count() == 0
