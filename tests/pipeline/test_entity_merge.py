"""Variants of one entity become one node: punctuation and footnote marks, digit suffixes, acronym and long form,
singular and plural, case; people only within a compatible form of their name (issue 15)."""
from __future__ import annotations

import pytest

from core.graph.extract.spacy.extract import SpacyExtractor
from core.graph.merge import normalize_key
from core.schema.records import Chunk


@pytest.mark.parametrize("variants", [
    ["SPECTER", "SPECTER,2", "SPECTER.1", "specter"],  # a footnote mark after punctuation
    ["RoBERTa", "ROBERTA", "roberta"],  # case
    ["LLM", "LLMs", "llms"],  # plural acronym
    ["language model", "language models", "Language Models"],  # plural, case
    ["multi-head attention", "Multi-Head Attentions", "multihead attention"],  # hyphen
    ["Marti A. Hearst", "Marti Hearst", "Hearst, Marti", "Marti A. Hearstβ"],  # a person's forms and marks
    ["Daniel S. Weld", "Daniel Weld", "Daniel S. Weld∗"],
])
def test_variants_share_one_key(variants):
    assert len({normalize_key(v) for v in variants}) == 1, [normalize_key(v) for v in variants]


@pytest.mark.parametrize("a, b", [
    ("A. Cohan", "Arman Cohan"),  # initials alone are not a compatible form: could be another Cohan
    ("GPT-3", "GPT"),  # a version is part of a name
    ("Llama 2", "Llama"),
    ("T5", "T"),
    ("SQuAD", "SQuAD 2.0"),
])
def test_different_names_keep_different_keys(a, b):
    assert normalize_key(a) != normalize_key(b)


def test_keys_of_the_suite_s_names_are_unchanged():
    assert [normalize_key(n) for n in ("SQuAD", "BERT", "RoBERTa", "MultiNLI", "GLUE", "S2-VL", "physics")] == \
        ["squad", "bert", "roberta", "multinli", "glue", "s2vl", "physics"]


def _chunks(*texts: str) -> list[Chunk]:
    return [Chunk(id=f"p:{n}", doc_id="p", index=n + 1, kind="text", text=t, pages=[0], item_indices=[n],
                  section="2 Method") for n, t in enumerate(texts)]


def test_a_long_form_in_another_chunk_of_the_paper_joins_its_acronym():
    # SPECTER paper: the acronym is defined once; later chunks use either name.
    chunks = _chunks(
        "We release SciDocs, a benchmark built on the Microsoft Academic Graph (MAG) and on user activity logs.",
        "Papers in the Microsoft Academic Graph are tagged with fields of study. We sample 23k papers from MAG.")
    results = list(SpacyExtractor().extract(chunks))
    names = [{e.name for e in r.entities} for r in results]
    assert "MAG" in names[0] and "MAG" in names[1]
    assert not any("Microsoft Academic Graph" == n for found in names for n in found)


def test_a_footnote_number_glued_to_a_name_joins_the_name():
    # SPECTER: "SCIDOCS3" is SCIDOCS with footnote 3, said once; the paper says SCIDOCS many times.
    chunks = _chunks(
        "As an additional contribution of this work, we introduce and release SCIDOCS3, a novel collection of data "
        "sets and an evaluation suite for document-level embeddings in the scientific domain.",
        "SCIDOCS covers seven tasks. We evaluate SPECTER on SCIDOCS and report the average over SCIDOCS tasks.")
    names = {e.name for r in SpacyExtractor().extract(chunks) for e in r.entities}
    assert "SCIDOCS" in names and "SCIDOCS3" not in names


def test_singular_plural_and_case_variants_are_one_entity_of_a_chunk():
    (result,) = SpacyExtractor().extract(_chunks(
        "Transformer language models such as BERT and ROBERTA are strong. We fine-tune RoBERTa and compare "
        "Transformer language model variants against RoBERTa."))
    names = [e.name for e in result.entities]
    assert names.count("RoBERTa") == 1 and "ROBERTA" not in names
    assert sum(normalize_key(n) == "transformer language model" for n in names) <= 1
