"""The LLM-free extractor keeps what a researcher would name and drops the artefacts found in the shared papers'
old graph (issue 15): footnote marks glued to words, broken glyphs, author lines, generic academic phrases,
repeated header cells, numbers with a noun. Every paragraph below is copied from one of the ten shared papers."""
from __future__ import annotations

import re

import pytest

from core.content.items import item_text
from core.graph.extract.spacy.extract import SpacyExtractor
from core.graph.extract.text_clean import repair_text
from core.pipeline.chunking import ITEM_SEPARATOR
from core.schema.graph import ChunkExtraction
from core.schema.records import Chunk, ContentItem
from core.settings.config import GraphConfig

# (item type, text, text level, page): a paper as the parser gives it.
PAPER = [
    ("text", "PaperMage: A Unified Toolkit for Processing, Representing, and Manipulating Visually-Rich Scientific "
             "Documents", 1, 0),
    ("text", "Kyle Loα∗ Zejiang Shenα,τ∗ Marti A. Hearstβ Daniel S. Weldα,ω", 0, 0),
    ("text", "αAllen Institute for AI βUniversity of California Berkeley", 0, 0),
    ("text", "Abstract", 1, 0),
    ("text", "Our system, SPECTER,2 incorporates inter-document context into the Transformer language models (e.g., "
             "SciBERT (Beltagy et al., 2019)) to learn document representations.", 0, 0),
    ("text", "1 INTRODUCTION", 1, 1),
    ("text", "The advent of large language models (LLMs) [4, 27, 32] has brought about a dramatic change in the design "
             "space of AI-assisted writing.1 The language understanding capabilities and high-quality text generation "
             "of LLMs promise to semi-automate cognitively-demanding writing tasks.", 0, 1),
    ("text", "5LongT5 is the best publicly available PubMed summarizer. BigBird is a popular long-form summarization "
             "baseline.", 0, 1),
    ("text", "1 from papermage import CoreReci pe 2 recipe = CoreReci pe () 3 doc = recipe . run "
             "(\" ... pdf \")", 0, 1),
    ("text", "RefSeer (Huang et al., 2015) derived from CiteSeerX, and Saier and Farber (2019) de-¨ rived from arXiv, "
             "which combine useful aspects of citation graphs and raw text corpora.", 0, 1),
    ("text", "The first three filters remove papers that provide little value for bibliometric-based or text-based "
             "analyses.", 0, 1),
    ("text", "The former is comprised of developers and researchers who are looking for a one-step solution to "
             "multimodal scientific document analysis.", 0, 1),
    ("text", "Intrinsic models can be found in other XAI applications acting as surrogate models (proxy models) due "
             "to their transparent nature. 48,49 A linear model is described by the equation 1.", 0, 1),
    ("text", "The Title field is labeled correct if it exactly matches the title seen on the PDF, with some allowance "
             "for different capitalization and minor differences in special character representation.", 0, 2),
    ("text", "Each node of this type represents a unique author. The literature graph has 12M nodes of this type. "
             "The resulting literature graph consists of more than 280M nodes.", 0, 2),
    ("text", "sions 20Used to determine PDF page number and page dimen- own papers.", 0, 2),
    ("text", "Decoding. At test time, we use Viterbi decoding to find the most likely global sequence, with no further "
             "constraints.", 0, 2),
    ("text", "Our S2ORC pretraining corpus consists of a more balanced distribution of papers across diverse academic "
             "disciplines. We train S2ORC-SCIBERT on the S2ORC pretraining corpus.", 0, 2),
    ("text", "We ran the original PDFs that were annotated for S2-VL through our GrobidParser. Table 2 evaluates "
             "CoreRecipe on S2-VL.", 0, 2),
    ("text", "In this paper, we introduce a new method for learning general-purpose vector representations of "
             "scientific documents. SPECTER is evaluated on SciDocs.", 0, 2),
    ("text", "References", 1, 3),
    ("list", "Arman Cohan, Sergey Feldman, Iz Beltagy, Doug Downey, and Daniel S. Weld. 2020. SPECTER: "
             "Document-level Representation Learning using Citation-informed Transformers. In ACL.", 0, 3),
]
TABLE_ROWS = ("Table 1: Results on biomedical tasks.\nTask | NER | NER | NER | PICO | DEP\n"
              "SCIBERT | 90.01 | 77.28 | 88.57 | 72.28 | 90.43")

ARTEFACTS = ["20Used", "5LongT5", "AI-assisted writing.1", "writing.1", "CoreReci pe", "CoreReci", "Farber de-",
             "de-", "little value", "one-step solution", "transparent nature", "allowance", "title", "NER NER",
             "12M node", "280M node", "SPECTER,2", "SPECTER 2", "Saier", "Farber"]
SURVIVORS = ["Viterbi decoding", "S2ORC pretraining corpus", "BigBird", "LongT5", "S2-VL", "SPECTER", "SciBERT",
             "CoreRecipe", "GrobidParser", "LLM"]


def _paper() -> tuple[list[ContentItem], list[Chunk]]:
    items = [ContentItem(type=t, text=text, text_level=level, page_idx=page, index=n,
                         sub_type="reference" if t == "list" else "")
             for n, (t, text, level, page) in enumerate(PAPER)]
    groups = [items[0:5], items[5:12], items[12:20], items[20:]]
    chunks = [Chunk(id=f"paper:{n}", doc_id="paper", index=n, kind="text", pages=[0],
                    text=ITEM_SEPARATOR.join(item_text(i) for i in group), item_indices=[i.index for i in group],
                    section="References" if n == 3 else "1 INTRODUCTION")
              for n, group in enumerate(groups)]
    chunks.append(Chunk(id="paper:4", doc_id="paper", index=4, kind="table", pages=[2], text=TABLE_ROWS,
                        item_indices=[99], section="4 Evaluation"))
    return items, chunks


@pytest.fixture(scope="module")
def results() -> list[ChunkExtraction]:
    items, chunks = _paper()
    return list(SpacyExtractor(GraphConfig(), items_of=lambda doc_id: items).extract(chunks))


@pytest.fixture(scope="module")
def names(results) -> dict[str, str]:
    return {e.name: e.type for r in results for e in r.entities}


@pytest.mark.parametrize("artefact", ARTEFACTS)
def test_artefacts_of_pdf_text_and_generic_phrases_are_not_entities(names, artefact):
    assert artefact.casefold() not in {n.casefold() for n in names}, sorted(names)


def test_no_entity_carries_a_footnote_mark_an_affiliation_symbol_or_a_leading_number(names):
    for name in names:
        assert not re.search(r"^\d|[.,]\d+$|[α-ωβ∗†]|\s{2}", name), name
        assert not re.fullmatch(r"(\w+ )\1+\w*", name + " "), name  # "NER NER NER"


@pytest.mark.parametrize("term", SURVIVORS)
def test_terms_a_researcher_would_name_survive(names, term):
    assert term in names, sorted(names)


def test_the_byline_gives_people_and_organisations_and_nothing_else(results, names):
    byline = {e.name: e.type for e in results[0].entities}
    assert byline.get("Marti A. Hearst") == "person" and byline.get("Daniel S. Weld") == "person"
    assert byline.get("Allen Institute for AI") == "organization"
    # The title is not read: its words give no entity of their own ("Visually-Rich Scientific Documents").
    assert not any("Visually-Rich" in n or "Toolkit" in n for n in names)


def test_reference_entries_give_nothing(results):
    assert results[3].entities == [] and results[3].relations == []
    assert "Arman Cohan" not in {e.name for r in results[:3] for e in r.entities}  # only in the references


def test_types_come_from_the_lexicon_shape_and_context(names):
    assert names["SciBERT"] == "model" and names["BigBird"] == "model" and names["LongT5"] == "model"
    assert names["GrobidParser"] == "software"
    assert names["Viterbi decoding"] == "method"


def test_the_first_author_of_a_real_byline_survives_without_references():
    """Arman Cohan is named in SPECTER's byline (the first page's front matter before the abstract)."""
    items = [ContentItem(type="text", page_idx=0, index=0, text_level=1,
                         text="SPECTER: Document-level Representation Learning using Citation-informed Transformers"),
             ContentItem(type="text", page_idx=0, index=1,
                         text="Arman Cohan† Sergey Feldman† Iz Beltagy† Doug Downey† Daniel S. Weld†,‡"),
             ContentItem(type="text", page_idx=0, index=2, text="Abstract"),
             ContentItem(type="text", page_idx=0, index=3,
                         text="We propose SPECTER, a new method to generate document-level embedding of scientific "
                              "documents based on pretraining a Transformer language model on a powerful signal of "
                              "document-level relatedness: the citation graph.")]
    chunk = Chunk(id="s:0", doc_id="s", index=0, kind="text", pages=[0], item_indices=[0, 1, 2, 3],
                  text=ITEM_SEPARATOR.join(i.text for i in items))
    (result,) = SpacyExtractor(items_of=lambda _: items).extract([chunk])
    found = {e.name: e.type for e in result.entities}
    assert found.get("Arman Cohan") == "person" and found.get("Daniel S. Weld") == "person"
    assert found.get("SPECTER") is not None
    assert not any("†" in n or "‡" in n for n in found)


@pytest.mark.parametrize("broken, repaired", [
    ("Our system, SPECTER,2 incorporates", "Our system, SPECTER, incorporates"),
    ("the design space of AI-assisted writing.1 The language", "the design space of AI-assisted writing. The language"),
    ("5LongT5 is the best", "LongT5 is the best"),
    ("sions 20Used to determine", "sions Used to determine"),
    ("from papermage import CoreReci pe", "from papermage import CoreRecipe"),
    ("Saier and Farber (2019) de-¨ rived from arXiv", "Saier and Farber (2019) derived from arXiv"),
    ("volatile compounds.146,147 The combination", "volatile compounds. The combination"),
    ("Learner (NELL)7 and", "Learner (NELL) and"),
    ("the Semantic Scholar8 Open Research Corpus", "the Semantic Scholar Open Research Corpus"),
    ("56 Sheridan57 describes", "56 Sheridan describes"),
    ("eﬃcient ﬁne-tuning", "efficient fine-tuning"),
    ("gener- ating text, pre- and post-training", "generating text, pre- and post-training"),
])
def test_text_repairs(broken, repaired):
    assert repair_text(broken) == repaired


@pytest.mark.parametrize("kept", ["ResNet50 and Llama2", "word2vec and GPT-3", "VGG16 and T5", "SQuAD v1.1",
                                  "BERT-base (110M parameters)"])
def test_text_repairs_leave_names_with_digits_alone(kept):
    assert repair_text(kept) == kept


# Round 2 of the blind check (bench/entities_blind.tsv): what the first new extractor still took. Real sentences of
# the shared papers, read as one paper without parsed items.
ROUND_2 = [
    ("text", "Albert Szent-Györgyi won the 1955 Nobel Prize for discovering Vitamin C. 31 The importance of a "
             "heptanyl fragment aligns with that reported in the literature, as ‘fatty’ molecules often have a long "
             "carbon chain. 17 Explaining predictions can help developers of DL models ensure the model is not "
             "learning spurious correlations."),
    ("text", "37 papers collect judgments of the full-length summary at once (“COARSE-grained”), while 6 papers "
             "collect judgments at a finer granularity such as sentences. RQ (research questions). We deploy LONGEVAL "
             "in annotation studies on two long-form summarization datasets in different domains (SQuALITY and "
             "PubMed). BigBird is a popular long-form summarization baseline. LONGEVAL is evaluated on SQuALITY."),
    ("text", "We adopt the publication date of the source paper as the query date. Fine-Tuning LLaMA for Multi-Stage "
             "Text Retrieval. where segi, coli, rowi, ranki correspond to the segment, column, row, and rank id for "
             "the ith token, respectively. The ALBERT model is smaller than BERT."),
    ("table", "Table 3: Human evaluation in the surveyed papers.\nType ofhuman evaluation | # papers | % papers\n"
              "None | 101 | 62%\nShort-form summaries only | 17 | 11%\nStructure | GR | OBID | oBERT\n"
              "Crawler Actions | 175.9 | 319.8"),
]
ROUND_2_JUNK = ["albert", "heptanyl fragment align", "learning spurious correlation", "Explaining prediction",
                "COARSE-grained", "granularity", "RQ", "query date", "Fine-Tuning LLaMA", "ranki correspond",
                "type ofhuman evaluation", "oBERT", "OBID", "crawler actions", "crawler action", "Crawler Actions",
                "long-form summarization baseline"]


def _entities_of(doc_id: str, rows: list[tuple[str, str]]) -> dict[str, str]:
    """The entities (name → type) the extractor finds in one paper made of these (kind, text) chunks."""
    chunks = [Chunk(id=f"{doc_id}:{n}", doc_id=doc_id, index=n, kind=kind, pages=[0], text=text, item_indices=[],
                    section="2 Method")
              for n, (kind, text) in enumerate(rows)]
    return {e.name: e.type for r in SpacyExtractor(GraphConfig()).extract(chunks) for e in r.entities}


@pytest.fixture(scope="module")
def round_2() -> dict[str, str]:
    return _entities_of("r2", ROUND_2)


@pytest.mark.parametrize("junk", ROUND_2_JUNK)
def test_round_2_failures_are_not_entities(round_2, junk):
    assert junk not in round_2, sorted(round_2)  # "albert" is junk, "ALBERT" a model


def test_round_2_keeps_the_names_next_to_the_junk(round_2):
    assert {"LONGEVAL", "SQuALITY", "BigBird", "ALBERT", "BERT"} <= set(round_2), sorted(round_2)


# Round 3: what round 2's extractor still took (bench/entities_blind2.tsv), in real sentences of the shared papers
# read as one paper: descriptions said a few times around a common head, undefined acronyms of a table's columns or
# of one word, a letter search that is no abbreviation ("self-attention module (SO)"), sizes printed as subscripts,
# cited authors' surnames, reference numbers glued to names, a verb after "et al." read as a name.
ROUND_3 = [
    ("text", "(2) How can we minimize annotator workload while maintaining accurate faithfulness scores? RQ2: Can we "
             "reduce annotator workload by partially annotating a long summary while maintaining accurate "
             "faithfulness scores? To tackle the issue of high annotator workload, we propose a partial annotation "
             "method in Section 3.2 and report high correlation to a full workload. Annotators are provided with a "
             "detailed annotation guideline along with examples of faithfulness (Table 10). Annotators are provided "
             "with a detailed annotation guideline along with examples of faithfulness (Table 11)."),
    ("text", "We fairly compensated each Upwork freelancer involved in this study, at a rate of 15-20$ per hour. We "
             "interviewed a total of 9 Upwork freelancers for the position. Current human evaluation setups lack "
             "standardization in their design decisions (such as annotation granularity), some of which can "
             "significantly impact inter-annotator agreement. We trained Doc2Vec on our training subset using Gensim "
             "(Rehurek and Sojka, 2010), and chose the hyperparameter grid using suggestions from Lau and Baldwin "
             "(2016). The hyperparameter grid used: Doc2Vec is one of the earlier neural document representation "
             "methods."),
    ("text", "We use TAPASBASE and TAPASLARGE as baselines, where Transformer architectures are exactly same as "
             "BERTBASE and BERTLARGE. We assign each bias type a learnable scalar, which will serve as a bias term in "
             "the self-attention module. Specifically, each self-attention head in each layer have a set of "
             "learnable scalars corresponding to all types of introduced biases. Unlike TABLEFORMER, we also tried "
             "to add attention biases before the scaling operation in the self-attention module (SO). “SO” "
             "represents adding attention bias before scaling. Meanwhile, Yin et al. (2020) leveraged row encoder "
             "and column encoder sequentially, which introduced much computational overhead. TABLEFORMER achieves "
             "state-of-the-art performance on SQA, because pre-vious SOTA models’ performance drops by 4% - 6% when "
             "facing such perturbations while TABLEFORMER is not affected. We identified the limitation of current "
             "tabletext encoding models when facing row or column perturbation. Another table encoding model MATE "
             "(Eisenschlos et al., 2021) is vulnerable to row and column perturbations. For SQA and TABFACT, we also "
             "created new test sets to measure models’ robustness to answer-invariant row and column perturbations "
             "during inference."),
    ("text", "RefSeer (Huang et al., 2015) derived from CiteSeerX, and Saier and Farber (2019) derived from arXiv, "
             "which combine useful aspects of citation graphs and raw text corpora. Inspired by Saier and Farber "
             "(2019), we first convert LATEX source into XML documents. More recently, Saier and Farber (2019) "
             "introduce a corpus built using 1.0M arXiv publications. S2ORC could potentially benefit task "
             "performance without additional annotation, for example, by pretraining language models on S2ORC "
             "citation contexts before fine-tuning to these tasks. Covering affiliations requires small "
             "modifications to the metadata extraction model followed by an algorithm for matching author names "
             "with their affiliations. Today, it is being used in the production PDF processing pipeline to provide "
             "data for both the literature graph and the paper-reading interface. We initialize the model from "
             "SciBERT pretrained weights since it is the stateof-the-art pretrained language model on scientific "
             "text. While SCIBERT is a BERT-Base model also trained on multiple domains of scientific text, key "
             "differences in its pretraining corpus remain. Some corpora may not provide usable full text (e.g. "
             "Saier and Farber (2019) and RefSeer)."),
    ("table", "Table 2: Ablations: Numbers are averages of metrics for each evaluation task: CLS: classification, USR: "
              "User activity, CITE: Citation prediction, REC: Recommendation.\nModel | CLS | USR | CITE | REC\n"
              "SPECTER | 84.2 | 88.4 | 91.5 | 36.9"),
    ("table", "Table 1: Statistics of S2ORC.\nTotal papers | 81.1M\nPapers w/ ACL IDs | 42k (0.1%)\n"
              "Papers w/ ArXiv IDs | 1.7M (2.0%)\nPapers w/ PMC IDs | 4.7M (5.8%)"),
    ("text", "Evaluation For SQA, we report the cell selection accuracy for all questions (ALL) using the official "
             "evaluation script, cell selection accuracy for all sequences (SEQ), and the denotation accuracy for "
             "all questions (ALLd). Reported statistics are spanlevel F1 for NER, token-level F1 for PICO, dependency "
             "parsing (DEP), and macro-F1 for relation (REL) and text (CLS) classification."),
    ("text", "GraphLIME87 and LIMEtree88 are modifications to LIME as applicable to graph neural networks and "
             "regression trees, respectively. This is similar to the GraphLIME87 method. Another set of approaches "
             "like DeepLIFT72 and Layerwise Relevance backPropagation73 (LRP) are based on backpropagation. ECFP and "
             "MACCS descriptors indicate which substructures influence model predictions. MACCS explanations lead "
             "to text explanations as shown. SMARTS annotations for MACCS descriptors were created using "
             "SMARTSviewer."),
]
ROUND_3_JUNK = ["annotator workload", "annotation guideline", "Upwork freelancer", "hyperparameter grid",
                "learnable scalar", "SO", "leveraged row encoder", "pre-vious SOTA model", "previous SOTA model",
                "SOTA model", "TAPASBASE", "TAPASLARGE", "BERTBASE", "Saier", "Farber", "S2ORC citation",
                "metadata extraction model", "PDF processing pipeline", "stateof-the-art pretrained language model",
                "pretrained language model", "USR", "CITE", "REC", "SEQ", "REL", "GraphLIME87", "LIMEtree88",
                "DeepLIFT72", "MACCS descriptor", "MACCS explanation", "ACL IDs", "ArXiv IDs", "PMC IDs"]
ROUND_3_TERMS = ["column perturbation", "Doc2Vec", "Gensim", "TAPAS-base", "BERT-base",
                 "TABLEFORMER", "S2ORC", "SciBERT", "GraphLIME", "MACCS", "LRP", "RefSeer", "CiteSeerX"]


@pytest.fixture(scope="module")
def round_3() -> dict[str, str]:
    return _entities_of("r3", ROUND_3)


@pytest.mark.parametrize("junk", ROUND_3_JUNK)
def test_round_3_failures_are_not_entities(round_3, junk):
    assert junk.casefold() not in {n.casefold() for n in round_3}, sorted(round_3)


@pytest.mark.parametrize("term", ROUND_3_TERMS)
def test_round_3_keeps_the_terms_next_to_the_junk(round_3, term):
    assert term.casefold() in {n.casefold() for n in round_3}, sorted(round_3)


@pytest.mark.parametrize("broken, repaired", [
    ("because pre-vious SOTA models", "because previous SOTA models"),
    ("Type ofhuman evaluation", "Type of human evaluation"),
    ("since it is the stateof-the-art pretrained language model", "since it is the state-of-the-art pretrained "
                                                                  "language model"),
    ("We use TAPASBASE and TAPASLARGE as baselines", "We use TAPAS-base and TAPAS-large as baselines"),
    ("The RoBERTalarge model is", "The RoBERTa-large model is"),
])
def test_text_repairs_of_round_3(broken, repaired):
    assert repair_text(broken) == repaired


@pytest.mark.parametrize("kept", ["pre-trained BERT and co-authors", "a DATABASE of PDFs", "BigBird-PEGASUS-large",
                                  "inline citation detection", "often the state of the art"])
def test_round_3_repairs_leave_words_and_names_alone(kept):
    assert repair_text(kept) == kept
