"""Results tables read into records: metrics as columns, datasets as column groups over metrics, ± values and
percentages, bold best and best by direction, transposed tables, group rows, and the caption or citing sentence
naming what the table leaves out."""
from __future__ import annotations

from core.schema.results import Direction, ResultSource
from tests.pipeline.results_tables import html, one, read, table, text


def test_metrics_as_columns_with_the_dataset_and_split_from_the_caption():
    records = read(table(html(["Model", "Acc.", "F1"],
                              ["BERT", "85.1", "<td><b>80.2</b></td>"],
                              ["Ours", "<td><b>86.3</b></td>", "79.9"]),
                         caption="Table 2: Results on the SQuAD dev set."))
    assert len(records) == 4
    r = one(records, "Ours", metric="Acc.")
    assert (r.dataset, r.setting, r.value, r.best) == ("SQuAD", "dev", 86.3, True)
    assert (r.dataset_key, r.metric_key, r.method_key) == ("squad", "accuracy", "ours") or r.method_key == ""
    assert r.direction == Direction.HIGHER and r.source == ResultSource.RULES
    assert (r.page, r.table_label, r.item_index, r.row, r.col) == (3, "Table 2", 0, 2, 1)
    assert r.bbox == (100.0, 200.0, 900.0, 500.0)
    assert one(records, "BERT", metric="F1").best and not one(records, "Ours", metric="F1").best
    assert not one(records, "BERT", metric="Acc.").best


def test_datasets_as_column_groups_over_metrics():
    body = ("<table><tr><th rowspan=2>Method</th><th colspan=2>SQuAD 1.1</th><th colspan=2>SQuAD 2.0</th></tr>"
            "<tr><th>EM</th><th>F1</th><th>EM</th><th>F1</th></tr>"
            "<tr><td>BiDAF</td><td>67.7</td><td>77.3</td><td>59.2</td><td>62.1</td></tr>"
            "<tr><td>BERT-large</td><td>84.1</td><td>90.9</td><td>78.7</td><td>81.9</td></tr></table>")
    records = read(table(body, caption="Table 3: Question answering."))
    assert len(records) == 8
    r = one(records, "BERT-large", dataset="SQuAD 2.0", metric="F1")
    assert r.value == 81.9 and r.best and r.dataset_key == "squad2" and r.metric_key == "f1"
    assert one(records, "BiDAF", dataset="SQuAD 1.1", metric="EM").value == 67.7
    assert r.method_key == "bertlarge"


def test_plus_minus_values_percentages_and_marks():
    records = read(table(html(["Method", "Accuracy (%)", "Error"],
                              ["A", "85.3 ± 0.2", "14.7%"],
                              ["B†", "$86.1_{\\pm 0.4}$*", "13.9%"]),
                         caption="Table 1: Comparison on CIFAR-10."))
    a = one(records, "A", metric="Accuracy (%)")
    assert (a.value, a.value_text, a.unit, a.extra["spread"]) == (85.3, "85.3 ± 0.2", "%", "0.2")
    b = one(records, "B†", metric="Error")
    assert (b.value, b.unit, b.direction, b.best) == (13.9, "%", Direction.LOWER, True)  # lower error is better
    assert one(records, "B†", metric="Accuracy (%)").value == 86.1 and one(records, "B†", metric="Accuracy (%)").best
    assert b.method_key == "b" and b.dataset == "CIFAR-10"


def test_latex_bold_and_underline_count_as_marked_best():
    records = read(table(html(["Model", "BLEU"], ["X", "$\\mathbf{30.1}$"], ["Y", "<u>29.0</u>"], ["Z", "28.0"]),
                         caption="Table 4: Results on WMT14 En-De test set."))
    assert [r.best for r in records] == [True, True, False]
    assert records[0].value == 30.1 and records[0].setting == "test"


def test_a_transposed_table_has_methods_as_columns():
    records = read(table(html(["Metric", "BERT", "RoBERTa"], ["Accuracy", "88.0", "90.2"], ["F1", "85.5", "87.0"]),
                         caption="Table 5: Results on MNLI."))
    assert len(records) == 4
    r = one(records, "RoBERTa", metric="F1")
    assert (r.value, r.dataset, r.best, r.row, r.col) == (87.0, "MNLI", True, 2, 2)
    assert not one(records, "BERT", metric="Accuracy").best


def test_a_dataset_column_with_methods_across():
    records = read(table(html(["Dataset", "Baseline", "Ours"], ["SST-2", "91.0", "93.5"], ["QQP", "88.0", "89.1"]),
                         caption="Table 6: Accuracy of the models."))
    r = one(records, "Ours", dataset="QQP")
    assert (r.value, r.metric, r.metric_key) == (89.1, "Accuracy", "accuracy")


def test_group_rows_give_their_setting_or_dataset_to_the_rows_below():
    body = html(["Model", "Acc"], ["<td colspan=2>Zero-shot</td>"], ["GPT-3", "60.1"],
                ["<td colspan=2>Few-shot</td>"], ["GPT-3", "70.4"],
                ["<td colspan=2>Baselines</td>"], ["Random", "25.0"])
    records = read(table(body, caption="Table 7: Results on ARC-Easy."))
    assert {(r.method, r.setting, r.value) for r in records} == {
        ("GPT-3", "Zero-shot", 60.1), ("GPT-3", "Few-shot", 70.4), ("Random", "Few-shot", 25.0)}
    assert all(r.dataset == "ARC-Easy" for r in records)


def test_the_citing_sentence_names_the_dataset_the_caption_leaves_out():
    records = read(text("We compare against strong baselines."),
                   table(html(["System", "F1"], ["CRF", "88.1"], ["BiLSTM-CRF", "90.9"]),
                         caption="Table 3: Main results."),
                   text("Table 3 shows that our tagger is best on CoNLL-2003. See also Table 30 on WNUT."))
    assert {r.dataset for r in records} == {"CoNLL-2003"}
    assert one(records, "BiLSTM-CRF").best


def test_an_average_column_named_only_in_the_corner_is_read_as_such():
    # SPECTER's Table 1 as MinerU writes it: "Avg." shifted into the row-label column, its own column headless.
    body = ("<table><thead><tr><th>Task →</th><th>Classification</th><th></th></tr>"
            "<tr><th>Avg. Subtask →</th><th>MAG</th><th></th></tr>"
            "<tr><th>Model ↓ / Metric →</th><th>F1</th><th></th></tr></thead>"
            "<tbody><tr><td>Random</td><td>4.8</td><td>32.5</td></tr>"
            "<tr><td>SPECTER (Ours)</td><td>82.0</td><td>80.0</td></tr></tbody></table>")
    records = read(table(body, caption="Table 1: Results on the SCIDOCS evaluation suite consisting of 7 tasks.",
                         page=6))
    avg = one(records, "SPECTER (Ours)", value=80.0)
    assert (avg.dataset, avg.metric, avg.metric_key, avg.page, avg.best) == ("SCIDOCS", "Avg.", "average", 6, True)
    assert avg.dataset_key == "scidocs" and avg.method_key == "specter"
    assert avg.extra["method_entity"] == "specter" and avg.extra["dataset_entity"] == "scidoc"  # the graph's keys
    f1 = one(records, "SPECTER (Ours)", value=82.0)
    assert (f1.dataset, f1.metric, f1.extra["caption_dataset"]) == ("MAG", "F1", "SCIDOCS")


def test_the_caption_defines_what_its_abbreviations_are():
    body = html(["Model", "ALL", "SEQ"], ["TAPAS", "61.1", "31.3"], ["TableFormer", "66.7", "39.7"])
    records = read(table(body, caption="Table 1: Results on SQA test set. ALL is cell selection accuracy, SEQ is "
                                       "cell selection accuracy for all question sequences."))
    r = one(records, "TableFormer", value=39.7)
    assert (r.metric, r.dataset, r.setting, r.best) == ("SEQ", "SQA", "test", True)
    body = html(["", "CLS", "REC", "Avg."], ["SPECTER", "84.2", "36.9", "80.0"], ["- abstract", "82.2", "34.5", "68.1"])
    records = read(table(body, caption="Table 2: Ablations: CLS: classification, REC: Recommendation, Avg. average."))
    # "REC" is a task here, not recall; with no metric named for the tasks their numbers give no records
    assert not [r for r in records if r.value == 36.9]
    assert one(records, "SPECTER", value=80.0).metric == "Avg."


def test_two_captions_in_one_are_split_between_side_by_side_tables():
    left = table(html(["Method", "Recall"], ["A", "0.40"], ["B", "0.50"]), page=7)
    right = table(html(["Method", "Recall"], ["A", "0.20"], ["B", "0.30"]), page=7,
                  caption="Table 5: Results on AutoScholarQuery. Table 6: Results on RealScholarQuery.")
    records = read(left, right)
    assert {(r.table_label, r.dataset, r.value) for r in records if r.method == "B"} == {
        ("Table 5", "AutoScholarQuery", 0.5), ("Table 6", "RealScholarQuery", 0.3)}
    assert one(records, "B", value=0.3).caption == "Table 6: Results on RealScholarQuery."


def test_an_unknown_metric_takes_the_direction_the_table_agrees_on():
    body = html(["Model", "F1", "Novelty score"], ["A", "80.0", "70.0"], ["B", "79.0", "72.0"])
    records = read(table(body, caption="Table 1: Results on SciDocs."))
    assert one(records, "B", value=72.0).best and one(records, "A", value=80.0).best


def test_columns_describing_a_method_give_no_records():
    body = html(["Model", "#Params (M)", "Year", "Acc", "Std"], ["BERT", "110", "2019", "84.6", "0.3"],
                ["RoBERTa", "125", "2019", "87.6", "0.2"])
    records = read(table(body, caption="Table 2: Results on MNLI."))
    assert {(r.method, r.metric, r.value) for r in records} == {("BERT", "Acc", 84.6), ("RoBERTa", "Acc", 87.6)}


def test_a_title_spanning_every_column_is_a_dataset_or_a_setting_or_nothing():
    span = "<th colspan=2>{}</th>"
    for title, dataset, setting in (("SQuAD", "SQuAD", ""), ("Results on the test set", "", "test"),
                                    ("Main results", "", "")):
        body = (f"<table><tr><th></th>{span.format(title)}</tr><tr><th>Model</th><th>EM</th><th>F1</th></tr>"
                "<tr><td>A</td><td>80.1</td><td>88.0</td></tr></table>")
        r = one(read(table(body, caption="Table 1: Comparison.")), "A", metric="F1")
        assert (r.dataset, r.setting) == (dataset, setting), title


def test_two_label_columns_name_the_method_together():
    body = ("<table><tr><th>Model</th><th>Size</th><th>BLEU</th></tr>"
            "<tr><td rowspan=2>Transformer</td><td>Base</td><td>27.3</td></tr><tr><td>Big</td><td>28.4</td></tr>"
            "</table>")
    records = read(table(body, caption="Table 2: Results on WMT 2014 English-German."))
    assert [(r.method, r.value, r.best) for r in records] == [("Transformer Base", 27.3, False),
                                                              ("Transformer Big", 28.4, True)]


def test_a_pair_of_numbers_under_a_pair_of_names_is_read_apart():
    body = html(["Model", "MNLI-m/mm", "SQuAD EM/F1"], ["BERT", "84.6/83.4", "84.1/90.9"],
                ["Ours", "86.0/85.2", "85.0/91.5"])
    records = read(table(body, caption="Table 3: Results on the dev sets."))
    assert len(records) == 4  # "MNLI-m/mm" names no metric: its numbers give no records
    em = one(records, "Ours", value=85.0)
    assert (em.metric, em.dataset, em.best, em.col) == ("EM", "SQuAD", True, 2)
    assert one(records, "BERT", value=90.9).metric == "F1"


def test_methods_across_the_columns_without_a_header_saying_so():
    for head, caption in ((["", "BERT", "Ours"], "Table 4: Accuracy."),
                          (["", "BERT", "XLNet"], "Table 4: Accuracy on SST-2 and QQP.")):
        records = read(table(html(head, ["SST-2", "91.0", "93.5"], ["QQP", "88.0", "89.1"]), caption=caption))
        r = one(records, head[2], dataset="QQP")
        assert (r.value, r.metric_key, r.best) == (89.1, "accuracy", True)


def test_the_caption_states_the_direction_of_an_unknown_metric():
    body = html(["Model", "Drift"], ["A", "0.30"], ["B", "0.20"])
    records = read(table(body, caption="Table 2: Drift of the models on ChemBench (lower is better)."))
    assert one(records, "B").best and one(records, "B").direction.value == "lower"


def test_a_name_and_a_metric_in_one_header_cell_are_read_apart():
    body = html(["Model", "SQuAD EM", "MNLI Acc.", "Cell selection accuracy"], ["A", "80.1", "84.0", "60.2"])
    records = read(table(body, caption="Table 2: Results."))
    assert {(r.dataset, r.metric) for r in records} == {("SQuAD", "EM"), ("MNLI", "Acc."),
                                                        ("", "Cell selection accuracy")}


def test_the_papers_own_method_is_flagged():
    records = read(table(html(["Model", "F1"], ["BERT", "80.0"], ["SPECTER (Ours)", "82.0"]),
                         caption="Table 1: Results on SciDocs."))
    assert one(records, "SPECTER (Ours)").extra["ours"] == "1" and "ours" not in one(records, "BERT").extra
