"""Retrieval uses the library's citation graph (core.query.citing): a question about what builds on, uses or cites a
paper of the library gets the passages holding the citing sentences first among its sources, with a note; any other
question keeps its sources exactly. Real ingests of two generated papers that cite each other
(tests.references_papers)."""
from __future__ import annotations

import pytest

from core.library import open_library
from core.pipeline.documents import add_pdf
from core.pipeline.graph.stage import process_graph_queue
from core.pipeline.ingest import process_queue
from core.query import routes
from core.query.citing import VIA, asked_part, cue_spans, mentions, near_cue
from core.query.engine import ask
from core.query.records import QueryParams
from core.schema.metadata import PaperMetadata
from tests.graph_papers import fast_workspace
from tests.references_papers import CITING_SENTENCE, HELIOTROPE_TITLE, heliotrope_pdf, marigold_pdf

SPECTER = PaperMetadata(title="SPECTER: Document-level Representation Learning using Citation-informed Transformers",
                        authors=["Arman Cohan", "Sergey Feldman"], year=2020)


def named_after_cue(question: str, meta: PaperMetadata = SPECTER) -> bool:
    after, before = cue_spans(question)
    question = asked_part(question)
    return any(near_cue(question, at, after, before) for at, _ in mentions(question, meta))


def test_a_question_about_what_cites_a_paper_is_told_from_one_about_the_paper_itself():
    assert named_after_cue("Which papers build on SPECTER?")
    assert named_after_cue("What do other papers say about Cohan et al. 2020?")
    assert named_after_cue("Is SPECTER cited by other papers?")
    assert named_after_cue("Who uses document-level representation learning with citation-informed transformers?")
    assert not named_after_cue("What does SPECTER use as training data?"), "a weak cue without an asker"
    assert not named_after_cue("How does SPECTER extend SciBERT?"), "the paper is the subject, not the object"
    assert not named_after_cue("Which papers build on Cohan et al. 2019?"), "another year, another paper"
    assert not named_after_cue("Which papers build on transformers?"), "one title word is not the paper"
    assert not named_after_cue("Does SciBERT rely on the same PDF library that SPECTER uses?"), "far from its cue"
    assert not named_after_cue("How many parameters does the SPECTER model used by Cohan have?"), "passive, no asker"
    assert not named_after_cue("Beyond Summarization cites SPECTER. What does SPECTER pretrain on?"), "asks SPECTER"
    assert not named_after_cue("Which knowledge bases ground entity mentions in document-level representation "
                               "learning using citation-informed transformers?"), "'mentions' as a noun"


@pytest.mark.slow  # two ingests and their graphs: ~15 s
def test_citing_passages_come_first_for_a_citation_question_and_nothing_moves_for_another(tmp_path, monkeypatch):
    lib = open_library(fast_workspace(tmp_path / "ws"))
    for pdf in (marigold_pdf(tmp_path / "pdfs"), heliotrope_pdf(tmp_path / "pdfs")):
        add_pdf(lib, pdf.name, pdf.read_bytes())
    assert all(doc.status == "ready" for doc in process_queue(lib))
    process_graph_queue(lib)
    cited = next(d for d, title in lib.documents.ready_titles().items() if title == HELIOTROPE_TITLE)

    for mode in ("naive", "mix", "ppr"):
        params = QueryParams.from_config(lib.settings.query, mode=mode)
        result = ask(lib, f"Which papers build on {HELIOTROPE_TITLE}?", params, save=False)
        first = result.retrieval.chunks[0]
        assert VIA in first.via and first.hit.chunk.doc_id != cited, mode
        assert CITING_SENTENCE.split(" (")[0] in " ".join(first.hit.window_text.split()), mode
        assert any("added 1 citing passage from the library's citation graph" in n for n in result.retrieval.notes)

    # Another question: the same sources with the citation step as without it.
    question = "How many iterations does the heliotrope solver need to converge?"
    params = QueryParams.from_config(lib.settings.query, mode="mix")
    with_step = ask(lib, question, params, save=False).retrieval
    monkeypatch.setattr(routes, "add_citing", lambda *a, **k: None)
    without = ask(lib, question, params, save=False).retrieval
    assert [c.id for c in with_step.chunks] == [c.id for c in without.chunks]
    assert not any(VIA in c.via for c in with_step.chunks) and with_step.notes == without.notes
