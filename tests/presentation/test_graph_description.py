"""An entity's description as the Graph page shows it (core/presentation/graph/description.py): from its sources'
passages, the one or two sentences that say most about it, each with its paper, deduplicated across passages and
papers, markup stripped, cut sentences dropped, the rest folded; an LLM's summary shown as it is."""
from __future__ import annotations

import time

from core.graph.merge import merge_descriptions
from core.presentation.graph.description import MAX_PIECES, describe, split_sentences, spread, tip

TITLES = {"d1": "S2ORC: The Semantic Scholar Open Research Corpus", "d2": "SPECTER: Document-level Representation"}
PIECES = [
    ("d1", "Table 2 lists the fields. We introduce **S2ORC**, a large corpus of 81.1M English-language academic papers "
           "spanning many academic disciplines. In S2ORC, we aggregate papers from hundreds of publishers and "
           "digital archives into a unified source, and create the largest publicly-available collection of…"),
    ("d1", "S2ORC is constructed using data from the Semantic Scholar literature corpus (Ammar et al., 2018). It is "
           "released under a CC BY-NC license."),
    ("d2", "We introduce S2ORC,  a large corpus of 81.1M English-language academic papers spanning many academic "
           "disciplines."),  # the same sentence in another paper: shown once
    ("d2", "We evaluate on citation prediction using papers from S2ORC and SciDocs.<sup>3</sup>"),
]


def _merged(pieces) -> str:
    return merge_descriptions([t for _, t in pieces], "entity", "S2ORC", budget_tokens=60, summarize=None)


def test_the_lead_is_the_sentences_that_define_the_entity_each_with_its_paper():
    shown = describe(_merged(PIECES), PIECES, ["S2ORC"], TITLES)
    assert [(s.text, s.paper) for s in shown.lead] == [
        ("We introduce S2ORC, a large corpus of 81.1M English-language academic papers spanning many academic "
         "disciplines.", TITLES["d1"]),
        ("S2ORC is constructed using data from the Semantic Scholar literature corpus (Ammar et al., 2018).",
         TITLES["d1"])]
    assert shown.summary == ""  # the merged text is the passages joined: no summary to show
    folded = [s.text for s in shown.more]
    assert "We evaluate on citation prediction using papers from S2ORC and SciDocs.³" in folded
    assert "It is released under a CC BY-NC license." in folded and "Table 2 lists the fields." in folded
    every = [s.text for s in shown.lead + shown.more]
    assert len(every) == len({" ".join(t.lower().split()) for t in every}) == 5  # no sentence twice
    assert not any(t.endswith("…") or "**" in t or "<" in t for t in every)  # cut or marked-up sentences are not shown


def test_an_llm_summary_is_shown_as_it_is_above_the_sentences():
    summary = "S2ORC is an 81.1M-paper corpus of academic text built from Semantic Scholar."
    shown = describe(summary, PIECES, ["S2ORC"], TITLES)
    assert shown.summary == summary and len(shown.lead) == 2
    assert tip(shown) == summary


def test_sentences_split_on_ends_but_not_on_abbreviations_and_a_broken_line_is_joined():
    text = "BERT is used, e.g. for tagging. See Devlin et al. (2019) for details.\nThe model was pretrained on\n" \
           "books and Wikipedia. Its window ended mid"
    assert split_sentences(text) == ["BERT is used, e.g. for tagging.", "See Devlin et al. (2019) for details.",
                                     "The model was pretrained on books and Wikipedia."]


def test_no_sources_falls_back_to_the_stored_text_and_nothing_is_empty():
    assert describe("", [], ["X"], {}).empty
    shown = describe("X is a solver. It converges.", [], ["X"], {})
    assert [s.text for s in shown.lead] == ["X is a solver.", "It converges."]


def test_an_entity_of_many_papers_reads_a_bounded_share_of_each_and_the_passages_joined_are_no_summary():
    pieces = [(f"d{i % 50:02d}", f"BERT is model {i}. It was trained on corpus {i * 7}. We compare BERT on task {i}.")
              for i in range(2000)]
    pieces.sort(key=lambda p: p[0])  # as stored: by paper, then chunk
    start = time.perf_counter()
    shown = describe(_merged(pieces), pieces, ["BERT"], {})
    assert time.perf_counter() - start < 2  # all 2,000 compared with each other took 7 s
    assert shown.summary == ""  # the merge kept the first paper's passages: joined, not summarised
    assert len({s.doc_id for s in shown.lead + shown.more}) > 10  # many papers speak, not the first one alone
    assert len(spread(pieces, MAX_PIECES)) == MAX_PIECES
    assert spread([("a", "1"), ("a", "2"), ("a", "3"), ("b", "4"), ("c", "5")], 4) == \
        [("a", "1"), ("b", "4"), ("c", "5"), ("a", "2")]
