"""The Ask and Compare pages through AppTest over the session's real workspace (MinerU parse, Chroma, SQLite,
the embedding model and its LLM-free graph), and a hostile paper whose text must never render as markup."""
from __future__ import annotations

import json
from functools import partial

import pytest

from core.library import open_library
from core.pipeline.documents import add_mineru_output
from core.pipeline.ingest import process_queue
from core.schema.records import DocStatus
from core.settings.workspace import Workspace
from core.text.safe_markdown import md_escape, passage_markdown
from tests.pages.app_helpers import HOSTILE_BODY, HOSTILE_TITLE, _unescaped_markup, ask, run_app, texts

QUESTION = "What does the purple walrus hypothesis predict for coherent lattices?"


_ask = partial(ask, mode="mix", context_only=False)


def test_ask_answers_llm_free_with_citations_that_open_the_cited_page(monkeypatch, ready_workspace):
    at = _ask(run_app(monkeypatch, ready_workspace.root, "pages/ask.py"), QUESTION)
    captions = texts(at.caption)
    assert "answers are extractive (LLM-free)" in captions and "without an LLM: keywords, answer" in captions
    assert "Extractive answer" in captions
    result = at.session_state["ask_result"]
    answer = next(m.value for m in at.markdown if "**\\[1\\]**" in m.value)
    first = result.answer.sentences[0].text.rsplit(" [", 1)[0]
    # A what-does-it-predict question has no typed span: its short answer is the whole first sentence, shown once
    # (not repeated in bold above it; test_a_typed_short_answer_is_bold_above_its_sentence covers the other case).
    assert result.answer.short_answer == first
    assert not answer.startswith("**"), answer
    assert "purple walrus hypothesis predicts exactly this behaviour" in answer.replace("\\", "")
    assert "](" not in answer  # no link: a link opens a new tab, and a new session
    labels = [e.label for e in at.expander]
    # The paper's byline names its authors: the source reads "Lovelace and Turing, p. 1 — <title>".
    cited = "\\[1\\] Lovelace and Turing, p. 1 — "
    assert any(label.startswith(cited) and "cited" in label for label in labels), labels
    assert at.get("download_button")[0].label == "Export BibTeX of the 1 cited paper"
    # The cited passage is open under its label, with a link to its page; its page region is a click away
    # (the [1] button or the source's own), not drawn with every answer.
    assert not at.image
    assert at.button(key="ask_source_page_1")
    page_link = at.get("page_link")[0]
    assert f"doc={ready_workspace.doc_id}" in page_link.proto.query_string


def test_a_typed_short_answer_is_bold_above_its_sentence(monkeypatch, ready_workspace):
    at = _ask(run_app(monkeypatch, ready_workspace.root, "pages/ask.py"),
              "What accuracy does the marigold baseline reach?")
    result = at.session_state["ask_result"]
    assert not result.answer.abstained and "88.2" in result.answer.short_answer
    answer = next(m.value for m in at.markdown if md_escape(result.answer.short_answer) in m.value)
    assert answer.startswith(f"**{md_escape(result.answer.short_answer)}**\n\n"), answer


def test_a_citation_opens_its_page_in_a_dialog_and_the_answer_stays(monkeypatch, ready_workspace):
    at = _ask(run_app(monkeypatch, ready_workspace.root, "pages/ask.py"), QUESTION)
    images_before = len(at.image)
    at.button(key="ask_cite_1").click().run()
    assert not at.exception, [e.value for e in at.exception]
    # The session is the same one: the question and its answer are still on the page behind the dialog.
    assert any("purple walrus hypothesis predicts exactly this behaviour" in m.value.replace("\\", "")
               for m in at.markdown)
    (dialog,) = _dialogs(at._tree)
    assert dialog.proto.dialog.title == "Cited passage"
    captions = [c for i in dialog.image for c in i.captions]
    assert captions[0] == "Page 1: the cited passage highlighted", captions  # the region, then the whole page
    assert len(dialog.image) == 2 and len(at.image) == images_before + 2
    (link,) = dialog.get("page_link")  # the Document page, for who wants it: same tab, same session
    assert f"doc={ready_workspace.doc_id}" in link.proto.query_string and "hl=" in link.proto.query_string
    # (Its previous / next page buttons rerun the dialog alone, a fragment: AppTest reruns the whole script, so
    # tests/pages/test_browser_citations.py tries them in Chromium.)


def _dialogs(node) -> list:
    """The open st.dialog blocks anywhere in AppTest's tree."""
    found = [node] if getattr(node, "type", "") == "dialog" else []
    for child in getattr(node, "children", {}).values():
        found += _dialogs(child)
    return found


def test_ask_context_only_shows_the_context_and_no_answer(monkeypatch, ready_workspace):
    at = _ask(run_app(monkeypatch, ready_workspace.root, "pages/ask.py"), QUESTION, mode="local", context_only=True)
    assert "Context only" in texts(at.info)
    code = texts(at.code)
    assert "Knowledge graph entities" in code and "Sources (cite as [n])" in code


def test_ask_keeps_the_history_of_questions(monkeypatch, ready_workspace):
    at = _ask(run_app(monkeypatch, ready_workspace.root, "pages/ask.py"), "Which lattice solvers are compared?",
              mode="naive")
    assert any(e.label.startswith("Recent questions") for e in at.expander)
    assert "Which lattice solvers are compared?" not in texts(at.markdown).replace("\\", "")  # read when opened
    at.session_state["ask_history"] = True
    at.run()
    assert "Which lattice solvers are compared?" in texts(at.markdown).replace("\\", "")


def test_ask_sends_what_is_closed_only_once_opened_and_does_not_grow_with_the_session(monkeypatch,
                                                                                      ready_workspace):
    """Every element is a message to the browser and a node it lays out: a rerun sends the latest answer, its
    cited sources and the labels of the rest. The assembled context, what was retrieved, the other sources'
    passages and the history are computed only once opened; the page after three answers is no bigger."""
    at = _ask(run_app(monkeypatch, ready_workspace.root, "pages/ask.py"), QUESTION)
    result = at.session_state["ask_result"]
    cited = {n for s in result.answer.sentences for n in s.citations}
    closed = [s for s in result.context.sources if s.n not in cited]
    assert closed and not at.code  # the context (~15 KB) is not sent
    shown = texts(at.markdown)
    assert not any(passage_markdown(s.text) in shown for s in closed)
    assert "**Passages**" not in shown  # what was retrieved
    sizes = (len(at.markdown), len(at.caption), len(at.button), len(at.expander))
    for _ in range(2):  # the same question again: the same answer, so the same page
        _ask(at, QUESTION)
    assert (len(at.markdown), len(at.caption), len(at.button), len(at.expander)) == sizes
    # Opened, each shows what it holds.
    run = f"ask{at.session_state['ask_run']}"
    at.session_state[f"{run}_src_{closed[0].n}"] = True
    at.session_state[f"{run}_retrieved"] = True
    at.session_state[f"{run}_context"] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert passage_markdown(closed[0].text) in texts(at.markdown)
    assert "**Passages**" in texts(at.markdown) and "Sources (cite as [n])" in texts(at.code)


@pytest.mark.slow
def test_compare_runs_modes_side_by_side_and_marks_what_only_one_found(monkeypatch, ready_workspace):
    at = run_app(monkeypatch, ready_workspace.root, "pages/compare.py")
    at.text_input(key="compare_question").input(QUESTION)
    at.multiselect(key="compare_modes").set_value(["naive", "local", "global"])
    at.button[0].click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    md = texts(at.markdown)
    for mode in ("naive", "local", "global"):
        assert f"### {mode}" in md
    assert ":green-badge[only here]" in md and "**Entities**" in md and "**Passages**" in md
    notes = [c.value for c in at.caption if c.value.startswith("retrieval ")]
    assert len(notes) == 3 and all("LLM calls 0" in n for n in notes)
    exports = [b.label for b in at.get("download_button") if b.label.startswith("Export BibTeX")]
    assert exports and all(label == "Export BibTeX of the 1 cited paper" for label in exports)  # under each answer


def test_compare_context_only_shows_each_modes_context(monkeypatch, ready_workspace):
    at = run_app(monkeypatch, ready_workspace.root, "pages/compare.py")
    at.text_input(key="compare_question").input(QUESTION)
    at.multiselect(key="compare_modes").set_value(["naive", "mix"])
    at.toggle(key="compare_context_only").set_value(True)
    at.button[0].click()
    at.run()
    assert not at.exception
    assert len([c for c in at.code if "Sources (cite as [n])" in c.value]) == 2


def test_hostile_paper_text_in_answers_and_sources_stays_text(monkeypatch, tmp_path):
    out = tmp_path / "evil" / "auto"
    out.mkdir(parents=True)
    items = [{"type": "text", "text_level": 1, "text": HOSTILE_TITLE, "page_idx": 0, "bbox": [100, 50, 900, 90]},
             {"type": "text", "text": HOSTILE_BODY, "page_idx": 0, "bbox": [100, 100, 900, 300]}]
    (out / "evil_content_list.json").write_text(json.dumps(items))
    lib = open_library(Workspace(tmp_path / "ws"))
    add_mineru_output(lib, out.parent)
    (doc,) = process_queue(lib)
    assert doc.status == DocStatus.READY, doc.message
    at = run_app(monkeypatch, tmp_path / "ws", "pages/ask.py")
    _ask(at, "What is inside the hostile body with a link?", mode="naive")
    shown = texts(at.markdown) + texts(at.caption) + "\n".join(e.label for e in at.expander)
    assert "Hostile body" in shown and "Evil" in shown
    assert not _unescaped_markup(shown), _unescaped_markup(shown)


def _open_sources(at, run: str, numbers) -> None:
    for n in numbers:
        at.session_state[f"{run}_src_{n}"] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]


@pytest.mark.slow
def test_table_sources_show_their_image_on_ask_and_compare(monkeypatch, ready_workspace):
    question = "What accuracy do the three lattice solvers reach on the Okapi benchmark?"
    at = _ask(run_app(monkeypatch, ready_workspace.root, "pages/ask.py"), question, mode="naive")
    assert any("· table" in e.label for e in at.expander), [e.label for e in at.expander]
    tables = [s.n for s in at.session_state["ask_result"].context.sources if s.kind == "table"]
    _open_sources(at, f"ask{at.session_state['ask_run']}", tables)
    assert "The table as it appears in the paper" in [c for i in at.image for c in i.captions]
    at.switch_page("pages/compare.py").run()
    at.text_input(key="compare_question").input(question)
    at.multiselect(key="compare_modes").set_value(["naive", "mix"])
    at.button[0].click()
    at.run()
    assert not at.exception
    assert not at.image  # each column's sources are computed once opened
    run = f"compare{at.session_state['compare_run']}"
    at.session_state[f"{run}_naive_sources"] = True
    at.run()
    captions = [c for i in at.image for c in i.captions]
    assert "The table as it appears in the paper" in captions
    assert not any("highlighted" in c for c in captions)  # item images, page regions only on demand


def test_an_uncited_source_shows_its_page_on_demand_in_a_dialog_titled_for_it(monkeypatch, ready_workspace):
    at = _ask(run_app(monkeypatch, ready_workspace.root, "pages/ask.py"), QUESTION)
    result = at.session_state["ask_result"]
    cited = {n for s in result.answer.sentences for n in s.citations}
    uncited = [s for s in result.context.sources if s.n not in cited and s.kind == "text"]
    assert cited and uncited, [(s.n, s.kind) for s in result.context.sources]
    # No page region is drawn with the answer; tables and figures keep their own image.
    assert all("as it appears in the paper" in c for i in at.image for c in i.captions)
    _open_sources(at, f"ask{at.session_state['ask_run']}", [uncited[0].n])
    at.button(key=f"ask_source_page_{uncited[0].n}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    (dialog,) = _dialogs(at._tree)
    # Not "Cited passage": the answer does not cite it.
    assert dialog.proto.dialog.title == "The passage on its page"
    assert [c for i in dialog.image for c in i.captions][0] == f"Page {uncited[0].page + 1}: the passage highlighted"


def test_an_off_topic_question_states_nothing_and_offers_no_passage_as_evidence(monkeypatch, ready_workspace):
    at = _ask(run_app(monkeypatch, ready_workspace.root, "pages/ask.py"), "What is the population of Paris?")
    result = at.session_state["ask_result"]
    assert result.answer.abstained and result.answer.short_answer == ""
    markdown = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert "The papers do not seem to discuss this." in markdown and "**[1]**" not in markdown
    assert "Passages retrieved (none is about the question)" in [e.label for e in at.expander]
    assert "nothing is stated" in texts(at.caption)


def test_a_sentence_citing_two_passages_shows_both_markers_bold_without_stray_asterisks():
    from core.query.records import Answer, AnswerSentence
    from pages.widgets.query_view import answer_markdown

    both = "Walt Disney Pictures [1, 2]."
    answer = Answer(text=both, sentences=[AnswerSentence(both, [1, 2])], extractive=True)
    shown = answer_markdown(answer, {1, 2})
    assert "**\\[1\\]** **\\[2\\]**" in shown and "****" not in shown
    unknown = Answer(text="A [1, 3].", sentences=[AnswerSentence("A [1, 3].", [1, 3])], extractive=True)
    assert "**\\[1\\]** \\[3?\\]" in answer_markdown(unknown, {1})
