"""Precision by abstention and the names read from the caption: a number whose metric, dataset or column cannot be
read with confidence gives no record (core/pipeline/results/records.py, headers.merged_rows)."""
from __future__ import annotations

from tests.pipeline.results_tables import html, one, read, table, text


def test_a_header_cell_holding_two_metrics_loses_the_tables_alignment():
    # MinerU merged two columns' headers ("MAP nDCG"): every value right of it sits under the wrong header
    body = html(["Model", "F1", "MAP nDCG", "P@1"], ["A", "80.1", "70.2", "60.3"], ["B", "81.0", "71.0", "61.0"])
    assert read(table(body, caption="Table 1: Results on SCIDOCS.")) == []


def test_rows_whose_cells_were_merged_give_nothing_and_many_such_rows_drop_the_table():
    ok = [["A", "80.1", "70.2"], ["B", "81.0", "71.0"], ["C", "82.0", "72.0"]]
    merged = ["D 30.41 9.67", "813.7", "21.97 7.17"]  # a label ending in numbers, a cell of two numbers
    records = read(table(html(["Model", "F1", "EM"], *ok, merged), caption="Table 2: Results on SQuAD."))
    assert {r.method for r in records} == {"A", "B", "C"}
    records = read(table(html(["Model", "F1", "EM"], ok[0], merged, merged), caption="Table 2: Results on SQuAD."))
    assert records == []


def test_a_value_with_a_spread_or_a_pair_is_not_a_merge():
    body = html(["Model", "F1", "EM/F1"], ["A", "47.21(0.34)", "80.1/88.0"], ["B", "85.3 ± 0.2", "81.0/89.0"])
    assert len(read(table(body, caption="Table 3: Results on SQuAD."))) == 6


def test_a_number_without_a_metric_gives_no_record():
    body = html(["", "CLS", "USR"], ["SPECTER", "84.2", "88.4"], ["SciBERT", "80.1", "85.0"])
    assert read(table(body, caption="Table 2: Ablation study on SCIDOCS.")) == []


def test_the_longest_metric_the_caption_names_wins():
    body = html(["Type", "HMM-T", "N-GRAMS"], ["Conquered", "0.917", "0.767"], ["Founded", "0.827", "0.636"])
    caption = ("Table 1: Type Checking Performance. Listed is area under the precision/recall curve. HMM-T "
               "outperforms N-GRAMS for all relations.")
    records = read(table(body, caption=caption))
    r = one(records, "HMM-T", value=0.917)  # the caption compares the columns as methods: rows are datasets
    assert (r.dataset, r.metric_key) == ("Conquered", "auprc")


def test_an_average_beside_the_datasets_is_their_mean_as_a_dataset():
    body = html(["", "Conquered", "Founded", "Average"], ["PL", "0.885", "0.633", "0.785"],
                ["REALM", "0.907", "0.781", "0.851"])
    records = read(table(body, caption="Table 2: Performance of REALM. Listed is area under the precision/recall "
                                       "curve for each method."))
    assert one(records, "REALM", value=0.851).dataset == "Average"


def test_a_sub_tables_letter_is_no_part_of_the_dataset():
    body = html(["Dataset", "SSK-MIL", "BW-MIL"], ["(a) CA", "76.9%", "45.9%"], ["(b) PB", "72.5%", "69.2%"])
    records = read(table(body, caption="Table 4: Area Under Precision-Recall Curve."))
    assert one(records, "SSK-MIL", value=76.9).dataset == "CA"


def test_numbers_without_a_dataset_in_a_table_naming_datasets_give_no_record():
    body = html(["Model", "SQuAD F1", "BLEU"], ["A", "80.1", "12.0"], ["B", "81.0", "13.0"])
    records = read(table(body, caption="Table 5: F1 of the readers."), text("Table 5 compares the readers."))
    assert {(r.dataset, r.value) for r in records} == {("SQuAD", 80.1), ("SQuAD", 81.0)}
