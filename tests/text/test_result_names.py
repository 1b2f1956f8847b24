"""The keys results are grouped by across papers: spellings of one dataset, metric or method share a key, different
versions and different metrics do not."""
from __future__ import annotations

import pytest

from core.text.result_names import (
    dataset_key,
    is_aggregate_name,
    is_metric_name,
    method_key,
    metric_direction,
    metric_key,
    plain_name,
)


@pytest.mark.parametrize("names", [
    ("SQuAD 1.1", "SQuAD v1.1", "SQuAD1.1", "the SQuAD v1.1 dev set", "SQuAD-1.1"),
    ("SQuAD 2.0", "SQuAD2.0", "SQuAD v2", "SQuAD2"),
    ("SCIDOCS", "SciDocs", "the SciDocs evaluation suite", "SciDocs benchmark"),
    ("CIFAR-10", "CIFAR10", "cifar 10"),
    ("MS MARCO", "MS-MARCO", "MSMARCO"),
    ("CoNLL-2003", "CoNLL 2003", "CoNLL-2003 (Tjong Kim Sang and De Meulder, 2003)"),
])
def test_spellings_of_one_dataset_share_a_key(names):
    assert len({dataset_key(n) for n in names}) == 1, {n: dataset_key(n) for n in names}


def test_versions_and_different_datasets_keep_their_own_keys():
    assert dataset_key("SQuAD 1.1") != dataset_key("SQuAD 2.0")
    assert dataset_key("CIFAR-10") != dataset_key("CIFAR-100")
    assert dataset_key("WMT 2014 En-De") != dataset_key("WMT 2016 En-De")


@pytest.mark.parametrize("names, key", [
    (("F1", "F1 score", "F1-score", "F₁", "F1 (%)", "F1↑", "f-measure"), "f1"),
    (("Acc.", "Accuracy", "acc", "Accuracy (%)", "Test Acc."), "accuracy"),
    (("WER", "WER (%)", "Word error rate", "WER↓"), "wer"),
    (("PPL", "Perplexity"), "perplexity"),
    (("nDCG@10", "NDCG @ 10", "nDCG@10 (%)"), "ndcg@10"),
    (("P@1", "Prec@1", "Precision@1"), "precision@1"),
    (("ROUGE-L", "R-L", "RougeL"), "rougel"),
])
def test_spellings_of_one_metric_share_a_key(names, key):
    assert {n: metric_key(n) for n in names} == dict.fromkeys(names, key)


def test_a_cut_off_and_a_variant_keep_their_own_keys():
    assert metric_key("nDCG@10") != metric_key("nDCG@5") != metric_key("nDCG")
    assert metric_key("Macro-F1") != metric_key("F1") != metric_key("Micro-F1")
    assert metric_key("MAP nDCG") == "mapndcg"  # unknown: its compact form, never a known metric's key


def test_directions_come_from_the_lexicon_and_arrows_win():
    assert metric_direction("Accuracy") == "higher"
    assert metric_direction("BLEU") == "higher"
    for name in ("Error rate", "WER", "Perplexity", "MAE", "RMSE", "Loss", "Latency (ms)", "IC50"):
        assert metric_direction(name) == "lower", name
    assert metric_direction("Distance ↓") == "lower"
    assert metric_direction("Score ↑") == "higher"
    assert metric_direction("CLS") == ""


def test_metric_names_and_aggregates_are_told_apart():
    assert is_metric_name("F1") and is_metric_name("MAP") and is_metric_name("Acc.")
    assert not is_metric_name("SQuAD") and not is_metric_name("BERT")
    assert is_aggregate_name("Avg.") and is_aggregate_name("Average") and not is_metric_name("Avg.")


@pytest.mark.parametrize("names", [
    ("SPECTER (Ours)", "SPECTER", "SPECTER†", "SPECTER*"),
    ("SIF (2017)", "SIF", "SIF [12]", "SIF (Arora et al., 2017)"),
    ("BERT-large", "BERT large", "BERT_large", "BERT-Large"),
])
def test_spellings_of_one_method_share_a_key(names):
    assert len({method_key(n) for n in names}) == 1, {n: method_key(n) for n in names}


def test_keys_are_pure_and_bounded():
    hostile = "Ω" * 100_000 + "(" * 5000
    for fn in (dataset_key, method_key, metric_key):
        assert fn("") == ""
        assert len(fn(hostile)) <= 400
        assert fn("SQuAD 1.1") == fn("SQuAD 1.1")


def test_modifier_marks_beside_a_name_do_not_count():
    assert metric_key("P@1 ˆ") == "precision@1" and metric_direction("nDCG ˆ") == "higher"
    assert metric_key("F-κ") != metric_key("F1")


def test_plain_names_drop_citations_and_marks_but_keep_spelling():
    assert plain_name("SPECTER (Ours)†") == "SPECTER"
    assert plain_name("SIF (Arora et al., 2017)") == "SIF"
    assert plain_name("GPT-3 (175B)") == "GPT-3 (175B)"


def test_a_glued_f1_subscript_is_read_as_the_metric_it_qualifies():
    from core.text.result_names import metric_key
    assert [metric_key(n) for n in ("R-1f1", "R-Lf1", "BSf1", "macro F1", "Avgf1", "EM F1")] == \
        ["rouge1", "rougel", "bertscore", "macrof1", "avgf1", "emf1"]  # "EM F1": two names, not a subscript
