"""Precision by abstention and the names read from the caption: a number whose metric, dataset or column cannot be
read with confidence gives no record (core/pipeline/results/records.py, headers.merged_rows)."""
from __future__ import annotations

from core.schema.records import ContentItem
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


def test_cells_a_parser_merged_in_order_are_split_back_and_cite_their_printed_cell():
    # MinerU's reading of Multi-LexSum's Table 3: label and values in one cell, five headers in one
    body = html(["D → L", "", ""], ["Models R-1f1 R-2f1 BSf1 Words", "R-1f1", "R-2f1"],
                ["First k Sent 30.41 9.67 9.73", "813.7", "21.97 7.17"],
                ["BART 48.79 23.78 39.55", "351.3", "43.55 19.98"], head=2)
    records = read(table(body, caption="Table 3: Performance of baseline models in Multi-LexSum."))
    r = one(records, "First k Sent", value=813.7)
    assert (r.metric, r.dataset, r.row, r.col) == ("Words", "Multi-LexSum", 2, 1)
    r = one(records, "BART", value=23.78)
    assert (r.metric_key, r.row, r.col) == ("rouge2", 3, 0)
    assert one(records, "BART", value=19.98).metric_key == "rouge2" and len(records) == 12


def test_a_merge_that_is_not_regular_is_not_split():
    # words after the numbers (a group row merged into a data row): no order to trust, no records
    body = html(["Models R-1 R-2 BS", "R-1", "R-2"], ["A 30.41 9.67 9.73", "813.7", "21.97 7.17"],
                ["B 48.79 23.78 39.55", "351.3", "43.55 19.98 BART, Multitask: L → T"])
    assert read(table(body, caption="Table 3: Performance in Multi-LexSum.")) == []


def test_body_rows_merged_into_the_header_lose_the_tables_alignment():
    # S2ORC's Table 5: the parser took merged body rows for header rows, so "85.49" heads a column
    body = html(["Dataset", "Task", "SCIBERT", "Ours"], ["BC5CDR JNLPBA", "NER NER", "90.01 77.28", "90.41 77.70"],
                ["SciCite", "CLS", "85.49", "84.76"], ["PaperField", "CLS", "65.71", "65.99"], head=3)
    assert read(table(body, caption="Table 5: Test results, macro F1 for CLS.")) == []


def _title(body: str) -> ContentItem:
    return ContentItem(type="text", page_idx=0, text=body, text_level=1)


def test_a_dataset_papers_tables_that_name_no_dataset_are_on_its_own():
    body = html(["Split", "R-1", "R-2"], ["K-fold", "47.24", "23.12"], ["Hold-out", "47.00", "22.89"])
    caption = "Table 9: Performance of BART models on different test splits."
    uses = text("We release the Multi-LexSum dataset. The Multi-LexSum dataset has 9,280 summaries.")
    r = one(read(_title("Multi-LexSum: Real-World Summaries of Civil Rights Lawsuits"), uses, table(body, caption)),
            "K-fold", value=47.24)
    assert (r.dataset, r.dataset_key, r.metric_key) == ("Multi-LexSum", "multilexsum", "rouge1")
    # a method paper's title names its method, which its text does not call a dataset
    records = read(_title("SPECTER: Document-level Representation Learning"), text("We train SPECTER on citations."),
                   table(body, caption))
    assert {r.dataset for r in records} == {""}


def test_one_metric_of_several_words_is_not_two_headers_merged():
    from core.pipeline.results.damage import _two_metrics
    one_metric = ["Top-1 Acc", "Macro F1", "Exact Match", "F1 score", "Acc (%)", "Pearson r", "Spearman ρ",
                  "AUC ROC", "Rouge-L F", "Acc. Std", "Word Error Rate"]
    merged = ["MAP nDCG", "EM F1", "Precision Recall", "MAE RMSE", "METEOR CIDEr", "Recall@1 Recall@5"]
    assert [h for h in one_metric if _two_metrics(h)] == []
    assert [h for h in merged if not _two_metrics(h)] == []
