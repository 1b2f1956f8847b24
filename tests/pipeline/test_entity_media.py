"""Tables, figures and equations are named from their caption (issue 15): "Table 2 — GLUE dev results by model
size", the paper's short title only when the caption is empty."""
from __future__ import annotations

import pytest

from core.pipeline.graph.media_entities import CAPTION_CHARS, media_entity_name, short_caption


@pytest.mark.parametrize("label, caption, name", [
    ("Table 2", "Table 2: GLUE dev results by model size. Bold marks the best.",
     "Table 2 — GLUE dev results by model size"),
    ("Figure 3", "Fig. 3. Overview of PaSa’s workflow", "Figure 3 — Overview of PaSa’s workflow"),
    ("Table 4", "TABLE IV: Accuracy on SQA", "Table 4 — Accuracy on SQA"),
    ("Equation 1", "", "Equation 1 — PaSa"),  # no caption: the paper's short title
    ("Table 5", "Table 5.", "Table 5 — PaSa"),  # a caption that is only the label
])
def test_media_entities_are_named_after_their_caption(label, caption, name):
    assert media_entity_name(label, caption, "PaSa: An LLM Agent for Comprehensive Academic Paper Search") == name


def test_a_long_caption_is_cut_at_a_word():
    # TABLEFORMER, Table 5's caption.
    caption = ("Table 5: ALL questions’ cell selection accuracy of TABLEFORMER and baselines on SQA test set "
               "before and after perturbation.")
    short = short_caption(caption)
    assert short.startswith("ALL questions’ cell selection accuracy of TABLEFORMER") and short.endswith("…")
    assert len(short) <= CAPTION_CHARS and " …" not in short
