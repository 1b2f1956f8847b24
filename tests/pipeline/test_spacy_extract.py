"""The LLM-free extractor on real scientific prose: what it finds, what it never returns, how it types and relates
entities, and that it keeps the Extractor contract (one record per chunk, never raising, deterministic)."""
from __future__ import annotations

import re
from dataclasses import asdict

import pytest

from core.graph.extract.acronyms import schwartz_hearst
from core.graph.extract.spacy.abbrev import one_word_shorthand, spelled_by
from core.graph.extract.spacy.extract import SpacyExtractor
from core.graph.extract.spacy.text import clean_text
from core.schema.graph import ChunkExtraction
from core.schema.records import Chunk
from core.settings.config import GraphConfig

BERT_ABSTRACT = """We introduce a new language representation model called Bidirectional Encoder Representations \
from Transformers (BERT). Unlike recent language representation models (Peters et al., 2018; Radford et al., 2018), \
BERT is designed to pre-train deep bidirectional representations from unlabeled text by jointly conditioning on both \
left and right context in all layers.

BERT obtains new state-of-the-art results on eleven natural language processing tasks, including pushing the GLUE \
score to 80.5%. We fine-tune BERT on the MultiNLI dataset and report an accuracy of 84.6% in Table 1. Compared with \
OpenAI GPT, BERT improves the F1 score on SQuAD v1.1 question answering by 1.5 points [12].

The General Language Understanding Evaluation (GLUE) benchmark is a collection of diverse natural language \
understanding tasks. This paper shows that our approach outperforms previous methods (see Figure 2 and Section 3). \
Code is available at https://github.com/google-research/bert and questions go to devlin@google.com."""

SPECTER_METHOD = """3 Method

Our goal is to learn task-independent representations of academic papers. We use SciBERT, a Transformer \
language model pretrained on scientific text, as the document encoder. As shown in Figure 1, we train it with a \
triplet margin loss on citation triplets drawn from the Semantic Scholar corpus. These embeddings are evaluated on \
SciDocs, a new benchmark of seven document-level tasks such as citation prediction, document classification and \
recommendation. Such models are evaluated with the nDCG and MAP metrics, and we report the mean over five runs \
in Table 3. Long Short-Term Memory (LSTM) networks and Convolutional Neural Networks (CNNs) serve as baselines \
(Cohan et al., 2020)."""

BOILERPLATE = {"we", "our", "this paper", "this work", "the paper", "our approach", "the results", "results",
               "table 1", "table 3", "figure 1", "figure 2", "section 3", "et al", "et al.", "84.6%", "84.6",
               "80.5%", "1.5 points", "our goal", "such models", "the model", "it", "these embeddings", "code",
               "points", "previous methods", "method"}


def chunk(text: str, kind: str = "text", index: int = 3, section: str = "1 Introduction", cid: str = "") -> Chunk:
    return Chunk(id=cid or f"doc:{index}:{kind}", doc_id="doc", index=index, kind=kind, text=text, pages=[0],
                 item_indices=[0], section=section)


@pytest.fixture(scope="module")
def extractor() -> SpacyExtractor:
    return SpacyExtractor(GraphConfig())


@pytest.fixture(scope="module")
def bert(extractor) -> ChunkExtraction:
    (result,) = extractor.extract([chunk(BERT_ABSTRACT)])
    return result


@pytest.fixture(scope="module")
def specter(extractor) -> ChunkExtraction:
    (result,) = extractor.extract([chunk(SPECTER_METHOD, index=4, section="3 Method")])
    return result


def entity(result: ChunkExtraction, name: str):
    found = [e for e in result.entities if e.name.lower() == name.lower()]
    assert found, f"{name} not among {[e.name for e in result.entities]}"
    return found[0]


def test_finds_models_datasets_tasks_and_metrics_of_an_abstract(bert):
    names = {e.name for e in bert.entities}
    assert {"BERT", "MultiNLI", "GLUE", "SQuAD", "OpenAI GPT", "F1", "accuracy", "question answering"} <= names
    assert bert.extractor == "spacy" and bert.errors == [] and not bert.failed


def test_an_acronym_and_its_definition_are_one_entity_with_both_names_findable(bert, specter):
    b = entity(bert, "BERT")
    assert "Bidirectional Encoder Representations from Transformers" in b.description
    assert not any(e.name.startswith("Bidirectional Encoder") for e in bert.entities)
    glue = entity(bert, "GLUE")
    assert "General Language Understanding Evaluation" in glue.description
    # "Long Short-Term Memory (LSTM)": initials across a hyphen; "(CNNs)": a plural acronym named singular.
    assert "Long Short-Term Memory" in entity(specter, "LSTM").description
    assert "Convolutional Neural Network" in entity(specter, "CNN").description


def test_never_returns_pronouns_boilerplate_numbers_references_urls_or_citations(bert, specter):
    for result in (bert, specter):
        for e in result.entities:
            lower = e.name.lower()
            assert lower not in BOILERPLATE, e.name
            assert re.search(r"[a-z]", lower), e.name  # not a number
            assert len(e.name) > 1
            assert not re.search(r"https?:|www\.|@|\bet al\b|\[\d+\]|%", e.name), e.name
            assert not re.match(r"(table|figure|fig\.|section|eq\.)\s*\d", lower), e.name
            assert lower not in ("peters", "radford", "cohan"), "a cited author is not an entity"
        for r in result.relations:
            assert r.source.lower() not in BOILERPLATE and r.target.lower() not in BOILERPLATE


def test_types_follow_the_head_word_and_the_phrase_around_a_name(bert, specter):
    assert entity(bert, "MultiNLI").type == "dataset"  # "the MultiNLI dataset"
    assert entity(bert, "GLUE").type == "dataset"  # "... Evaluation (GLUE) benchmark"
    assert entity(bert, "SQuAD").type == "dataset"  # "the F1 score on SQuAD"
    assert entity(bert, "accuracy").type == "metric"
    assert entity(bert, "F1").type == "metric"
    assert entity(bert, "question answering").type == "task"
    assert entity(bert, "BERT").type == "model"
    assert entity(specter, "nDCG").type == "metric"
    assert entity(specter, "citation prediction").type == "task"
    assert entity(specter, "document classification").type == "task"
    assert entity(specter, "SciDocs").type in ("dataset", "concept")
    assert entity(specter, "Semantic Scholar").type == "dataset"  # "the Semantic Scholar corpus"
    assert entity(specter, "triplet margin loss").type == "method"


def test_types_are_restricted_to_the_configured_ones():
    (result,) = SpacyExtractor(GraphConfig(entity_types=["model", "concept"])).extract([chunk(BERT_ABSTRACT)])
    assert {e.type for e in result.entities} <= {"model", "concept"}
    assert entity(result, "BERT").type == "model"
    assert entity(result, "MultiNLI").type == "concept"


def test_a_relation_joins_two_entities_of_one_sentence_and_carries_that_sentence(bert):
    names = {e.name for e in bert.entities}
    for r in bert.relations:
        assert r.source in names and r.target in names and r.source != r.target  # the merge finds its ends
        assert r.keywords and r.strength >= 1
    (rel,) = [r for r in bert.relations if {r.source, r.target} == {"BERT", "MultiNLI"}]
    assert "We fine-tune BERT on the MultiNLI dataset and report an accuracy of 84.6% in Table 1." in rel.description
    (rel,) = [r for r in bert.relations if {r.source, r.target} == {"BERT", "SQuAD"}]
    assert rel.keywords == "improve"  # the verb between the two
    assert "F1 score on SQuAD" in rel.description
    # GLUE and MultiNLI never share a sentence: no relation.
    assert not [r for r in bert.relations if {r.source, r.target} == {"GLUE", "MultiNLI"}]


def test_descriptions_are_the_sentences_of_the_mentions_capped(bert):
    for e in bert.entities:
        assert 0 < len(e.description) <= 300
    assert "MultiNLI dataset" in entity(bert, "MultiNLI").description
    # Citations, URLs and e-mails are cleaned out of the sentences too.
    text = " ".join(e.description for e in bert.entities)
    assert "et al" not in text and "github.com" not in text and "[12]" not in text


def test_deterministic(extractor):
    chunks = [chunk(BERT_ABSTRACT, index=1), chunk(SPECTER_METHOD, index=2)]
    first = [asdict(r) for r in extractor.extract(chunks)]
    second = [asdict(r) for r in SpacyExtractor(GraphConfig()).extract(list(reversed(chunks)))]
    assert first == list(reversed(second))


def test_table_and_figure_chunks_with_captions_only_or_rows(extractor):
    figure = chunk("Figure 2: Accuracy of BERT and RoBERTa on the MultiNLI dataset as the training set grows.",
                   kind="image", cid="doc:fig")
    table = chunk("Table 1: Results on the GLUE benchmark.\nModel | MNLI | QQP | Average\n"
                  "BERT-base | 84.6 | 71.2 | 79.6\nOpenAI GPT | 82.1 | 70.3 | 75.1", kind="table", cid="doc:tab")
    equation = chunk("\\mathcal{L} = -\\sum_i \\log p(y_i | x_i)\nThe cross-entropy loss of the classifier.",
                     kind="equation", cid="doc:eq")
    fig, tab, eq = extractor.extract([figure, table, equation])
    assert {"BERT", "RoBERTa", "MultiNLI", "accuracy"} <= {e.name for e in fig.entities}
    assert entity(fig, "MultiNLI").type == "dataset"
    assert {"GLUE", "BERT-base", "OpenAI GPT", "MNLI"} <= {e.name for e in tab.entities}
    # A row's name relates to its column headers: the model to the dataset it was scored on.
    (cell,) = [r for r in tab.relations if {r.source, r.target} == {"BERT-base", "MNLI"}]
    assert cell.keywords == "table column"
    assert cell.description == ("Table 1: Results on the GLUE benchmark. Columns: Model | MNLI | QQP | Average. "
                                "Row: BERT-base | 84.6 | 71.2 | 79.6")
    assert not [r for r in tab.relations if {r.source, r.target} == {"BERT-base", "OpenAI GPT"}]
    assert [e.name for e in eq.entities] == ["cross-entropy loss"]
    for e in eq.entities:
        assert "\\" not in e.name and "=" not in e.name


def test_empty_and_wordless_chunks_give_empty_extractions(extractor):
    chunks = [chunk("", cid="a"), chunk("   \n\n  ", cid="b"), chunk("84.6 | 71.2\n3.1 | 2.0", kind="table", cid="c"),
              chunk("", kind="image", cid="d")]
    results = list(extractor.extract(chunks))
    assert [r.chunk_id for r in results] == ["a", "b", "c", "d"]
    for r in results:
        assert r.entities == [] and r.relations == [] and r.errors == [] and not r.failed
    assert list(extractor.extract([])) == []


def test_one_record_per_chunk_in_order_across_batches(extractor):
    chunks = [chunk(f"Paper {n} evaluates BERT on the MultiNLI dataset.", index=n + 1, cid=f"c{n}") for n in range(70)]
    results = list(extractor.extract(chunks))
    assert [r.chunk_id for r in results] == [c.id for c in chunks]
    assert all({"BERT", "MultiNLI"} <= {e.name for e in r.entities} for r in results)


def test_reference_lists_are_skipped():
    refs = chunk("Jacob Devlin, Ming-Wei Chang, Kenton Lee, and Kristina Toutanova. 2019. BERT: Pre-training of deep "
                 "bidirectional transformers for language understanding. In NAACL.", section="References")
    (result,) = SpacyExtractor().extract([refs])
    assert result.entities == [] and result.errors == []


def test_the_byline_of_a_first_chunk_gives_people_and_organisations():
    first = chunk("SPECTER: Document-level Representation Learning using Citation-informed Transformers\n\n"
                  "Arman Cohan, Sergey Feldman, Iz Beltagy, Doug Downey, Daniel S. Weld\n\n"
                  "Allen Institute for Artificial Intelligence, University of Washington", index=0, section="")
    (result,) = SpacyExtractor().extract([first])
    types = {e.name: e.type for e in result.entities}
    assert types.get("Allen Institute for Artificial Intelligence") == "organization"
    assert types.get("University of Washington") == "organization"
    assert types.get("SPECTER") is not None
    assert sum(t == "person" for t in types.values()) >= 3


def test_text_cleaning_and_acronym_matching():
    assert clean_text("LLMs [4, 27] work (Devlin et al., 2019) see [BERT](https://x.org/b) at https://a.b/c.") \
        == "LLMs work see BERT at"
    assert schwartz_hearst("BERT", "called Bidirectional Encoder Representations from Transformers") \
        == "Bidirectional Encoder Representations from Transformers"
    assert schwartz_hearst("XYZ", "nothing alike here") is None


@pytest.mark.parametrize("short, long", [
    ("MMACE", "Molecular Model Agnostic Counterfactual Explanations"), ("ATEX", "Adversarial Training on EXplanations"),
    ("XAI", "Explainable artificial intelligence"), ("CIME", "ChemInformatics Model Explorer"),
    ("MEG", "Molecular counterfactual Explanation Generator"), ("SQA", "Sequential QA"), ("WTQ", "WikiTableQuestions"),
    ("LSTM", "long short-term memory"), ("BBB", "blood-brain barrier"),
    ("nDCG", "Normalized Discounted Cumulative Gain"),
    ("GRU-RNN", "Gated Recurrent Unit Recurrent Neural Network"), ("PMC", "PubMed Central")])
def test_acronyms_spelled_by_their_long_forms_initials_or_capitals(short, long):
    assert spelled_by(short, long)


def test_letters_found_inside_words_or_one_word_are_no_definition():
    assert not spelled_by("SO", "self-attention module")  # "... in the self-attention module (SO)"
    assert not spelled_by("RL", "reward model")  # two letters: both must be initials or capitals
    assert one_word_shorthand("seq", "sequences") and one_word_shorthand("rel", "relation")
    assert not one_word_shorthand("dep", "parsing") and not one_word_shorthand("all", "questions")


@pytest.mark.slow
def test_threads_load_one_pipeline_and_agree():
    from concurrent.futures import ThreadPoolExecutor

    from core.models import nlp
    from core.models.registry import resources

    resources.clear(nlp.LEXICON_KEY)  # the first use happens in three threads at once

    def run(_):
        (result,) = SpacyExtractor().extract([chunk(BERT_ABSTRACT)])
        return id(nlp.lexicon()), asdict(result)

    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(run, range(3)))
    assert len({lex for lex, _ in results}) == 1
    assert all(r == results[0][1] for _, r in results)
